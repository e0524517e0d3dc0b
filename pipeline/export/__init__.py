"""``pipeline export``: a profile compiled into the files of the coding agents teams run.

* :mod:`.base`: the :class:`~.base.Target` protocol, what an export is (owned files,
  shared JSON keys, the loss report);
* :mod:`.apply`: the changes, conflicts and drift of an export; :mod:`.manifest`: the
  manifest of owned files and keys (and the journal of an export under way);
  :mod:`.shared`: the keys of shared JSON and TOML files, edited in place
  (:mod:`.jsontext`, :mod:`.toml_lines`); :mod:`.paths`: confinement to the export root;
  :mod:`.writer`: the lock and the atomic, rolled-back write;
* :mod:`.pi`: pi 1.6 (native settings and templates, a generated extension that renders
  the profile's system prompt);
* :mod:`.claude_code`: Claude Code (an agent definition as the system prompt, commands,
  settings keys and a PreCompact hook); :mod:`.codex`: Codex CLI (an instructions file,
  config.toml keys); :mod:`.opencode`: opencode (an agent prompt, commands, opencode.json
  keys, a plugin); :mod:`.gemini`: Gemini CLI (system.md through .gemini/.env, TOML
  commands, the compression threshold); :mod:`.qwen_code`: Qwen Code (the same kinds of
  files under .qwen/, its compaction threshold); :mod:`.kilo`: Kilo CLI (opencode's kinds of
  files under .kilo/ and kilo.json, without a plugin); :mod:`.copilot`: GitHub Copilot CLI (an
  instructions file; no commands, no compaction keys); :mod:`.agents_md`: the team's sections in a marked
  block of AGENTS.md, which many agents read; :mod:`.static_prompt`: the sections a static
  file holds.

See docs/export.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from .apply import Change, Plan, plan_changes
from .writer import ExportWriteError, export_lock, write_changes
from .base import Carried, Export, OwnedFile, Place, SharedJson, SharedToml, Target
from . import agents_md, claude_code, codex, copilot, gemini, kilo, opencode, pi, qwen_code

__all__ = ["Carried", "Change", "Export", "ExportWriteError", "OwnedFile", "Place", "Plan", "SharedJson", "SharedToml", "TARGETS", "Target",
           "export_lock", "plan_changes", "prepare", "undeclared_losses", "write_changes"]

#: every target by its TARGET name
TARGETS: dict[str, Target] = {target.name: target for target in (
    pi.TARGET, claude_code.TARGET, codex.TARGET, opencode.TARGET, gemini.TARGET, qwen_code.TARGET, kilo.TARGET,
    copilot.TARGET, agents_md.TARGET)}


def prepare(target: Target, pipeline, place: Place, *, force: bool = False) -> tuple[Export, Plan]:
    """The export of ``pipeline`` for ``place`` and the changes it makes there."""
    export = target.export(pipeline, place)
    plan = plan_changes(export, Path(place.root), target.manifest_path(place), force=force,
                        profile=place.profile, agent=target.agent)
    return export, plan


def undeclared_losses(export: Export, allowed: Iterable[str]) -> list[Carried]:
    """The lost settings not named (or under a name) in ``allowed``."""
    names = tuple(allowed)
    return [c for c in export.losses
            if not any(c.key == a or c.key.startswith(a + ".") for a in names)]
