"""``pipeline import claude-code|opencode|gemini``: command folders and context-file names.

| tool | user directory (``HOME_DIR``, default) | template sources | context files |
| --- | --- | --- | --- |
| Claude Code | ``~/.claude`` | ``.claude/commands`` (project), ``<home>/commands`` | ``CLAUDE.md`` |
| opencode | ``~/.config/opencode`` | ``.opencode/command(s)`` (project), ``<home>/command(s)`` | ``AGENTS.md``, then ``CLAUDE.md`` |
| Gemini CLI | ``~/.gemini`` | ``.gemini/commands`` (project), ``<home>/commands`` | ``GEMINI.md``, or ``context.fileName`` of its ``settings.json`` |

The project's directory is named by the dialect keyword (found where the agent runs); the
user's by its path, when it exists. Pass the user directory as ``pipeline render
--discover --agent-dir`` so its context file is found as well.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Optional

from pipeline import files
from pipeline.errors import Location, PipelineError, Problem

from .build import Overlay
from .pi import parse_json

TOOLS = ("claude-code", "opencode", "gemini")
HOME_DIRS = {"claude-code": "~/.claude", "opencode": "~/.config/opencode", "gemini": "~/.gemini"}
COMMAND_DIRS = {"claude-code": ("commands",), "opencode": ("command", "commands"), "gemini": ("commands",)}
CONTEXT_FILES = {"claude-code": ("CLAUDE.md",), "opencode": ("AGENTS.md", "CLAUDE.md"), "gemini": ("GEMINI.md",)}
NAMES = {"claude-code": "Claude Code", "opencode": "opencode", "gemini": "Gemini CLI"}


def tool_overlay(tool: str, home: Optional[Path], project: Optional[Path]) -> tuple[Overlay, tuple[Problem, ...]]:
    """The overlay for ``tool`` with its user directory ``home`` (default: the tool's own)."""
    shown_home = str(home) if home is not None else HOME_DIRS[tool]
    real_home = Path(shown_home).expanduser()
    overlay = Overlay(f"{tool}-import", [f"Imported from {NAMES[tool]}'s setup ({shown_home}) by "
                                         f"`pipeline import {tool}`."])
    overlay.sources = [tool]
    for sub in COMMAND_DIRS[tool]:
        if (real_home / sub).is_dir():
            overlay.sources.append((tool, f"{shown_home.rstrip('/')}/{sub}" if home is None else real_home / sub))
    names, notes = _context_names(tool, real_home, project)
    overlay.context_file_names = names
    return overlay, notes


def _context_names(tool: str, home: Path, project: Optional[Path]) -> tuple[tuple[str, ...], tuple[Problem, ...]]:
    if tool != "gemini":
        return CONTEXT_FILES[tool], ()
    for settings in ([project / ".gemini" / "settings.json"] if project else []) + [home / "settings.json"]:
        if files.missing(settings):
            continue
        try:
            text = files.read_text(settings, "settings file", lenient=True)
        except PipelineError as err:  # a FIFO, a device, too large: said where, the defaults are used
            return CONTEXT_FILES[tool], tuple(dataclasses.replace(p, severity="warning") for p in err.problems)
        try:
            value = parse_json(text, settings).get("context", {}).get("fileName")
        except (PipelineError, AttributeError) as err:
            return CONTEXT_FILES[tool], (Problem(f"cannot read `context.fileName`: {err}", Location(str(settings)),
                                                severity="warning", code="profile.import-settings"),)
        if isinstance(value, str):
            return (value,), ()
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return tuple(value), ()
    return CONTEXT_FILES[tool], ()
