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


#: the settings files whose keys are named as not imported (nothing in them has a profile counterpart)
SETTINGS_FILES = {"claude-code": ("settings.json", "settings.local.json")}


def tool_overlay(tool: str, home: Optional[Path], project: Optional[Path]) -> tuple[Overlay, tuple[Problem, ...]]:
    """The overlay for ``tool`` with its user directory ``home`` (default: the tool's own)."""
    shown_home = str(home) if home is not None else HOME_DIRS[tool]
    real_home = Path(shown_home).expanduser()
    overlay = Overlay(f"{tool}-import", [])
    overlay.sources = [tool]
    for sub in COMMAND_DIRS[tool]:
        if (real_home / sub).is_dir():
            overlay.sources.append((tool, f"{shown_home.rstrip('/')}/{sub}" if home is None else real_home / sub))
    names, notes = _context_names(tool, real_home, project)
    overlay.context_file_names = names
    settings = _settings_files(tool, real_home, project)
    ignored = tuple(note for path in settings for note in _ignored_settings(path))
    read_home = home is not None or len(overlay.sources) > 1 or not files.missing(real_home / "settings.json")
    overlay.comment = [_header(tool, shown_home if project is None or read_home else None, project)]
    return overlay, notes + ignored


def _header(tool: str, home: Optional[str], project: Optional[Path]) -> str:
    """``Imported from Claude Code's project setup (.claude) by ...``: what was read, the user's
    directory only when it was (a project import does not name ``~/.claude`` it never read)."""
    from pipeline.resources import display_path

    where = [f"project setup ({display_path(project / _project_dir(tool))})"] if project is not None else []
    where += [f"user setup ({home})"] if home is not None else []
    return f"Imported from {NAMES[tool]}'s {' and '.join(where) if where else 'setup'} by `pipeline import {tool}`."


def _project_dir(tool: str) -> str:
    return "." + {"claude-code": "claude"}.get(tool, tool)


def _settings_files(tool: str, home: Path, project: Optional[Path]) -> list[Path]:
    """The tool's settings files that exist, the project's first."""
    folders = ([project / _project_dir(tool)] if project is not None else []) + [home]
    return [folder / name for folder in folders for name in SETTINGS_FILES.get(tool, ())
            if not files.missing(folder / name)]


def _ignored_settings(path: Path) -> tuple[Problem, ...]:
    """Every setting of ``path``, named as not imported (``model``, ``permissions``...);
    a file that cannot be read is a warning (nothing was to be taken from it)."""
    from .pi import read_settings

    try:
        data = read_settings(path)
    except PipelineError as err:
        return tuple(dataclasses.replace(p, severity="warning") for p in err.problems)
    return tuple(Problem(f"`{key}` is not part of a context profile; not imported", Location(str(path)),
                         severity="info", code="profile.not-imported") for key in data)


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
