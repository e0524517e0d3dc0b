"""``pipeline import pi``: an overlay profile from a pi agent directory (and project).

What is read, as pi 0.84.0 reads it:

* ``settings.json`` of the agent directory, then ``<project>/.pi/settings.json`` merged
  over it (objects deeply): ``compaction`` (``enabled``, ``reserveTokens``,
  ``keepRecentTokens``), ``branchSummary.reserveTokens`` and ``retry`` (``enabled``,
  ``maxRetries``, ``baseDelayMs``) become the profile's numbers; ``prompts`` paths
  (relative to the directory holding that settings file) become template sources, between
  the project's and the user's directories, where pi loads them. Other keys are named as
  not imported.
* ``SYSTEM.md`` (the project's ``.pi/SYSTEM.md`` first, as pi prefers it) becomes the
  text of the ``custom`` section, and the sections a custom prompt replaces are removed;
  ``APPEND_SYSTEM.md`` becomes the text of the ``append`` section. ``${`` in them is
  written ``$${`` so the profile shows them as they are.

Context files and skills are found where the agent runs (``pipeline render --discover``),
as pi finds them; the profile keeps pi's context-file names.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from pipeline import files, jsontext
from pipeline.errors import Location, ProfileError, Problem

SETTINGS = {
    ("compaction", "enabled"): ("compaction", "enabled"),
    ("compaction", "reserveTokens"): ("compaction", "reserve_tokens"),
    ("compaction", "keepRecentTokens"): ("compaction", "keep_recent_tokens"),
    ("branchSummary", "reserveTokens"): ("compaction", "branch", "reserve_tokens"),
    ("retry", "enabled"): ("retry", "enabled"),
    ("retry", "maxRetries"): ("retry", "max_retries"),
    ("retry", "baseDelayMs"): ("retry", "base_delay_ms"),
}


@dataclass(frozen=True)
class PiSetup:
    """What an agent directory and project hold, read and merged."""

    values: dict[tuple[str, ...], Any]  # profile key path -> value
    prompt_paths: tuple[Path, ...]
    custom_prompt: Optional[str]
    append_prompt: Optional[str]
    read: tuple[str, ...]  # the files read, for the header comment
    notes: tuple[Problem, ...]


def parse_json(text: str, path: Path) -> Any:
    """``text`` as strict JSON within the bounds of :mod:`pipeline.jsontext` (nesting at most
    ``JSON_MAX_DEPTH``, numbers a float holds, no lone surrogate); a located error otherwise."""
    try:
        return jsontext.parse(text).value
    except jsontext.JsonTextError as err:
        raise ProfileError(Problem(f"invalid JSON: {err.msg}", Location(str(path), err.lineno, err.colno),
                                   code="profile.import-settings")) from None


def read_settings(path: Path) -> dict:
    """One ``settings.json`` (a missing file is ``{}``); a located error when it is not JSON
    or cannot be read (not a regular file, too large: the bounded reader's errors). Bytes
    that are not UTF-8 are read as pi reads them (U+FFFD)."""
    if files.missing(path):
        return {}
    data = parse_json(files.read_text(path, "settings file", lenient=True), path)
    if not isinstance(data, dict):
        raise ProfileError(Problem("settings must be a JSON object", Location(str(path), 1, 1),
                                    code="profile.import-settings"))
    return data


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for key, value in over.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def read_pi(agent: Path, project: Optional[Path]) -> PiSetup:
    """Read the agent directory ``agent`` and, when given, the project ``project``."""
    settings = [(agent / "settings.json", agent)]
    if project is not None:
        settings.append((project / ".pi" / "settings.json", project / ".pi"))
    merged: dict = {}
    prompts: list[Path] = []
    notes: list[Problem] = []
    read: list[str] = []
    for path, base in settings:
        data = read_settings(path)
        if not files.missing(path):
            read.append(str(path))
        prompts += _prompt_paths(data, base, path, notes)
        notes += _unused(data, path)
        merged = _merge(merged, data)
    values = {dest: _get(merged, src) for src, dest in SETTINGS.items() if _get(merged, src) is not None}
    custom, append = _prompts(agent, project, read)
    return PiSetup(values, tuple(prompts), custom, append, tuple(read), tuple(notes))


def _get(data: dict, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _prompt_paths(data: dict, base: Path, file: Path, notes: list) -> list[Path]:
    entries = data.get("prompts")
    if entries is None:
        return []
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        notes.append(Problem("`prompts` is not a list of paths; not imported", Location(str(file)),
                             severity="warning", code="profile.not-imported"))
        return []
    return [Path(os.path.normpath(base / os.path.expanduser(e))) for e in entries]


#: settings keys that are read (others are named as not imported)
_READ = {"compaction", "branchSummary", "retry", "prompts"}


def _unused(data: dict, file: Path) -> list[Problem]:
    out = []
    for key in data:
        if key not in _READ:
            out.append(Problem(f"`{key}` is not part of a context profile; not imported", Location(str(file)),
                               severity="info", code="profile.not-imported"))
    for (section, key), value in _sub_keys(data):
        if (section, key) not in SETTINGS:
            out.append(Problem(f"`{section}.{key}` has no profile key; not imported", Location(str(file)),
                               severity="warning", code="profile.not-imported"))
    return out


def _sub_keys(data: dict):
    for section in ("compaction", "branchSummary", "retry"):
        value = data.get(section)
        if isinstance(value, dict):
            for key, inner in value.items():
                yield (section, key), inner


def _prompts(agent: Path, project: Optional[Path], read: list) -> tuple[Optional[str], Optional[str]]:
    from pipeline.prompt.discover import discover_prompts

    cwd = str(project) if project is not None else str(agent)
    custom, appends = discover_prompts(cwd, str(agent), trusted=project is not None)
    for name in ("SYSTEM.md", "APPEND_SYSTEM.md"):
        for directory in ([project / ".pi"] if project is not None else []) + [agent]:
            if (directory / name).exists():
                read.append(str(directory / name))
                break
    return custom, (appends[0] if appends else None)
