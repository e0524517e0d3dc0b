"""Comparing an :class:`~pipeline.export.base.Export` with the disk: the changes, conflicts and drift.

The manifest (:mod:`pipeline.export.manifest`) records what the last export wrote: each
owned file with the SHA-256 of its text, and each key of a shared JSON or TOML file with
a digest of its value. From it :func:`plan_changes` knows

* which files it may rewrite: one it wrote whose bytes are still the ones it wrote (a file
  it did not write, or one edited since, is a conflict unless ``force``);
* which files to remove: owned before, no longer produced (again only unedited ones);
* which keys of a shared file are its own (:mod:`pipeline.export.shared`);
* which marked block of a shared text file is its own (:mod:`pipeline.export.blocks`).

Every path is checked first (:mod:`pipeline.export.paths`): a path that is not a safe,
relative one is refused whatever ``force`` says, and a symbolic link on the way is a
conflict (``--force`` replaces the link, never what it points to). Nothing here writes:
:func:`pipeline.export.writer.write_changes` does, atomically. Nothing here knows a target.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, Optional

from pipeline import files
from pipeline.errors import Location, PipelineError, Problem
from pipeline.export.base import Export, SharedJson
from pipeline.export.blocks import block_body, block_change
from pipeline.export.manifest import (MANIFEST_VERSION, PENDING, digest, key_id, read_manifest, read_recorded,
                                      value_digest)
from pipeline.export.paths import link_in_the_way, path_problem
from pipeline.export.plan import Action, Change, Plan, conflict, in_the_way
from pipeline.export.shared import shared_change
from pipeline.export.toml_lines import toml_value
from pipeline.export.writer import write_changes

__all__ = ["Action", "Change", "MANIFEST_VERSION", "Plan", "digest", "plan_changes", "read_manifest", "toml_value",
           "write_changes"]

def plan_changes(export: Export, root: Path, manifest_path: str, *, force: bool = False,
                 profile: str = "", agent: str = "") -> Plan:
    """The changes that bring ``root`` to ``export`` (see the module's docstring)."""
    _check_paths(root, manifest_path, export)
    recorded = read_recorded(root, manifest_path, export.target)
    plan = Plan(root, manifest_path)
    # a link on the manifest's way (or its journal's) is a conflict, as on any file the export writes
    in_the_way(plan, manifest_path, force) or in_the_way(plan, manifest_path + PENDING, force)
    produced = {f.path for f in export.files} | {s.path for s in export.shared}
    for item in export.files:
        _owned_change(plan, item.path, item.text, recorded.files.get(item.path, set()), force)
    for path in sorted(set(recorded.files) - produced):
        _removal(plan, path, recorded.files[path], force)
    for shared in export.shared:
        shared_change(plan, shared, recorded, force)
    for gone in sorted(set(recorded.shared) - produced):
        shared_change(plan, SharedJson(gone, ()), recorded, force)
    for block in export.blocks:
        block_change(plan, block.path, block.text, recorded.blocks.get(block.path, set()), force)
    for gone in sorted(set(recorded.blocks) - {b.path for b in export.blocks}):
        block_change(plan, gone, None, recorded.blocks[gone], force)
    plan.manifest = manifest_of(export, profile, agent)
    plan.known = produced | set(recorded.files) | set(recorded.shared) | set(recorded.blocks) | {
        b.path for b in export.blocks}
    return plan


def manifest_of(export: Export, profile: str, agent: str) -> dict[str, Any]:
    """The manifest that records ``export``."""
    return {
        "version": MANIFEST_VERSION, "target": export.target, "agent": agent, "profile": profile,
        "files": {f.path: digest(f.text) for f in export.files},
        "shared": {s.path: [list(k) for k, _ in s.keys] for s in export.shared if s.keys},
        "key_digests": {s.path: {key_id(k): value_digest(v) for k, v in s.keys if k not in s.extend}
                        for s in export.shared if s.keys},
        "entries": {s.path: {key_id(k): [value_digest(e) for e in v] for k, v in s.keys if k in s.extend}
                    for s in export.shared if s.extend},
        **({"blocks": {b.path: digest(block_body(b.text)) for b in export.blocks}} if export.blocks else {}),
    }


def _check_paths(root: Path, manifest_path: str, export: Export) -> None:
    """Every path the export produces is a safe relative path (a target's bug or a hostile name otherwise)."""
    problems = []
    for path in [manifest_path, *(f.path for f in export.files), *(s.path for s in export.shared),
                 *(b.path for b in export.blocks)]:
        problem = path_problem(path)
        if problem is not None:
            shown = path if isinstance(path, str) and path.isprintable() else repr(path)
            problems.append(Problem(f"the export will not write {shown[:120]}: {problem}", Location(str(root)),
                                    code="profile.export-path"))
    if problems:
        raise PipelineError(problems)


def _current(plan: Plan, path: str, force: bool) -> tuple[bool, Optional[str]]:
    """Whether something is at ``path`` and, for a regular file within the limit, its
    UTF-8 text (None: not text, too large, or not a regular file)."""
    target = plan.root / path
    try:
        info = os.lstat(target)
    except (FileNotFoundError, NotADirectoryError):
        return False, None
    if stat.S_ISDIR(info.st_mode):
        plan.conflicts.append(Problem("a folder is where the export writes a file", Location(str(target)),
                                      hint="move it away", code="profile.export-conflict"))
        return True, None
    if not stat.S_ISREG(info.st_mode):
        return True, None  # a FIFO, a device: never opened
    try:
        data = files.read_bytes(target, "exported file", follow=False)
        return True, data.decode("utf-8")
    except (PipelineError, UnicodeDecodeError):
        return True, None


def _owned_change(plan: Plan, path: str, text: str, recorded: set[str], force: bool) -> None:
    if in_the_way(plan, path, force):
        plan.changes.append(Change(path, "update", text))
        return
    exists, current = _current(plan, path, force)
    if not exists:
        plan.changes.append(Change(path, "create", text))
        return
    if current == text:
        plan.changes.append(Change(path, "unchanged"))
        return
    if not force and not recorded:
        conflict(plan, path, "the file exists and was not written by this export")
    elif not force and (current is None or digest(current) not in recorded):
        conflict(plan, path, "the file was edited since this export wrote it")
    plan.changes.append(Change(path, "update", text))


def _removal(plan: Plan, path: str, recorded: set[str], force: bool) -> None:
    found = link_in_the_way(plan.root, path)
    if found is not None and found[0] != path:
        in_the_way(plan, path, force)  # a link above it: what is behind it is not the export's to delete
        return
    if found is None:
        exists, current = _current(plan, path, force)
        if not exists:
            return
        if not force and (current is None or digest(current) not in recorded):
            conflict(plan, path, "the profile no longer produces this file, but it was edited since it was written")
    elif not force:
        conflict(plan, path, f"{path} is a symbolic link; the profile no longer produces this file")
    plan.changes.append(Change(path, "delete"))
