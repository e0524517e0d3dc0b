"""Importing other agents' setups as overlay profiles (``pipeline import``).

* :func:`import_pi`: a pi agent directory (and project): settings, ``SYSTEM.md``,
  ``APPEND_SYSTEM.md``, prompt paths (see :mod:`.pi`);
* :func:`import_export`: what ``pipeline export TARGET`` wrote into a project, read back
  (the round trip; see :mod:`.exported`), recognised by its manifest (:func:`find_export`);
* :func:`import_tool`: Claude Code, opencode or Gemini CLI: their command folders as
  template sources in their dialect and their context-file names (see :mod:`.tools`).

The result is YAML text extending ``builtin:default``; :func:`check` compiles it, so an
import that would not validate is reported, never written silently.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Optional

from .build import Imported, Overlay
from .exported import exported_overlay, find_export
from .pi import read_pi
from .tools import TOOLS, tool_overlay

__all__ = ["Imported", "TOOLS", "check", "find_export", "import_export", "import_pi", "import_tool"]

SCHEMA = "profile.schema.json"


def import_pi(agent: Path, project: Optional[Path] = None, out: Optional[Path] = None) -> Imported:
    """The overlay profile for pi's agent directory ``agent`` (and ``project``)."""
    from pipeline.facade import compile_profile

    setup = read_pi(agent, project)
    where = [f"agent directory {agent}"] + ([f"project {project}"] if project is not None else [])
    overlay = Overlay("pi-import", ["Imported from pi's " + " and ".join(where) + " by `pipeline import pi`."])
    if setup.custom_prompt is not None:
        overlay.sections.append(("custom", {"replace": True, "kind": "text", "text": setup.custom_prompt}))
        base = compile_profile("default").profile.system_prompt.sections
        overlay.sections += [(s.id, {"remove": True}) for s in base if s.replaced_by_custom_prompt]
    if setup.append_prompt is not None:
        overlay.sections.append(("append", {"replace": True, "kind": "text", "text": setup.append_prompt}))
    if setup.prompt_paths:
        overlay.sources = ["project", *(("pi", p) for p in setup.prompt_paths), "global"]
    overlay.values = dict(setup.values)
    text = overlay.render(out.parent.absolute() if out is not None else None, SCHEMA)
    return Imported(text, setup.notes)


def import_tool(tool: str, home: Optional[Path] = None, project: Optional[Path] = None,
                out: Optional[Path] = None) -> Imported:
    """The overlay profile for Claude Code, opencode or Gemini CLI (``tool``)."""
    overlay, notes = tool_overlay(tool, home, project)
    return Imported(overlay.render(out.parent.absolute() if out is not None else None, SCHEMA), notes)


def import_export(tool: str, project: Path, manifest: Path, out: Optional[Path] = None) -> Imported:
    """The overlay profile that renders what ``pipeline export TOOL`` wrote into ``project``."""
    overlay, notes = exported_overlay(tool, project, manifest)
    return Imported(overlay.render(out.parent.absolute() if out is not None else None, SCHEMA), notes)


def check(imported: Imported, out: Optional[Path] = None):
    """Compile the imported text (as ``out`` when given, so relative paths resolve there)."""
    from pipeline.facade import compile_profile

    if out is not None:
        return compile_profile(str(out))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "imported.yaml"
        path.write_text(imported.text, encoding="utf-8")
        return compile_profile(str(path))
