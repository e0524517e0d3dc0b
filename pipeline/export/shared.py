"""The keys of a shared settings file: read exactly, edited in place, the user's bytes kept.

A shared file (``.pi/settings.json``, ``.claude/settings.json``, ``opencode.json``,
``.gemini/settings.json``, Codex's ``config.toml``) is read through the bounded reader
(a regular file, not a link, at most :data:`~pipeline.limits.FILE_LIMITS` ``settings
file``, strict UTF-8) and parsed strictly (:mod:`pipeline.export.jsontext`; TOML nested
at most :data:`~pipeline.limits.TOML_MAX_DEPTH`, checked on its text). What cannot be read exactly is a
located error and nothing is written. The export then edits the text at its own keys'
spans only: every other byte of the file stays.

Which keys are the export's comes from the manifest; a key the user set is a conflict,
and so is an owned key whose value the user edited since (its digest). A list in
``extend`` gets the export's items added, and a re-export or removal takes out only
those. Messages name keys and files, never values (they may be secrets).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from pipeline import files
from pipeline.errors import Location, Problem
from pipeline import jsontext
from pipeline.export.base import Key, SharedJson, SharedToml, key_text
from pipeline.export.manifest import Recorded, value_digest
from pipeline.export.plan import Action, Change, Plan, conflict, in_the_way
from pipeline.export.toml_lines import toml_edit
from pipeline.limits import toml_loads


@dataclass
class _Edit:
    """The edits one shared file receives, and what its manifest entries become."""

    sets: list[tuple[Key, Any]] = field(default_factory=list)
    removes: list[Key] = field(default_factory=list)
    appends: list[tuple[Key, list[Any]]] = field(default_factory=list)
    drops: list[tuple[Key, list[int]]] = field(default_factory=list)
    touched: list[str] = field(default_factory=list)


def is_toml(item: SharedJson) -> bool:
    return isinstance(item, SharedToml) or item.path.endswith(".toml")


def read_shared(plan: Plan, item: SharedJson, force: bool) -> tuple[Optional[str], Any]:
    """The file's text and object (``None, {}`` when it does not exist); ``None, None``
    after a problem was added to the plan."""
    target = plan.root / item.path
    if in_the_way(plan, item.path, force):
        return None, {}  # --force: the link goes, a new file takes its place
    if files.missing(target):
        return None, {}
    label = str(target)
    text = files.decode(files.read_bytes(target, "settings file", label, follow=False), "settings file", label)
    if not text.strip():
        return text, {}
    kind = "TOML" if is_toml(item) else "JSON"
    try:
        data = _parse_toml(text) if is_toml(item) else jsontext.parse(text).value
    except ValueError as err:
        message, line, col = _error_place(err)
        plan.conflicts.append(Problem(f"not valid {kind} the export can keep exactly: {message}",
                                      Location(label, line, col), hint="fix the file; the export edits its keys in it",
                                      code="profile.export-file"))
        return None, None
    if not isinstance(data, dict):
        plan.conflicts.append(Problem(f"the file's top level is not a {kind} object", Location(label),
                                      hint="the export sets its keys in an object", code="profile.export-file"))
        return None, None
    return text, data


def _parse_toml(text: str) -> Any:
    return toml_loads(text)  # nesting past TOML_MAX_DEPTH: a ValueError with its place, before tomllib recurses


def _error_place(err: ValueError) -> tuple[str, Optional[int], Optional[int]]:
    """The message of a parse error and its line and column (tomllib puts them in its text)."""
    if isinstance(err, jsontext.JsonTextError):
        return err.msg, err.lineno, err.colno
    text = str(err)
    m = re.search(r" \(at line (\d+), column (\d+)\)", text)
    if m is None:
        return text, None, None
    return text[:m.start()] + text[m.end():], int(m.group(1)), int(m.group(2))


def shared_change(plan: Plan, item: SharedJson, recorded: Recorded, force: bool) -> None:
    """The change of one shared file (or the problems that stop it) added to ``plan``."""
    current, data = read_shared(plan, item, force)
    if data is None:
        return
    label = str(plan.root / item.path)
    edit = _Edit()
    merged = copy.deepcopy(data)
    owned = recorded.shared.get(item.path, [])
    now = {k for k, _ in item.keys}
    for key in owned:
        if key not in now:
            _unset(plan, edit, merged, item, key, recorded, force)
    for key, value in item.keys:
        if key in item.extend:
            _extend(plan, edit, merged, item, key, value, recorded)
        else:
            _set(plan, edit, merged, item, key, value, recorded, force)
    if not edit.touched:
        if current is not None or not item.keys:
            plan.changes.append(Change(item.path, "unchanged", shared=True))
        return
    text = _edited(item, current, edit)
    if text is None or _reparse(item, text) != merged:
        kind = "TOML file line by line" if is_toml(item) else "JSON file in place"
        plan.conflicts.append(Problem(f"the export cannot edit this {kind} (one of its keys spans several "
                                      "lines or sits in a table)", Location(label),
                                      hint="write the export's keys as one `key = value` line each at the top "
                                           "of the file, or move the file away", code="profile.export-file"))
        return
    if not merged and current is not None and set(owned) >= _leaves(data):
        plan.changes.append(Change(item.path, "delete", None, tuple(edit.touched), shared=True))
        return
    action: Action = "update" if current is not None else "create"
    plan.changes.append(Change(item.path, action, text, tuple(edit.touched), shared=True))


def _edited_since(recorded: Recorded, item: SharedJson, key: Key, value: Any) -> bool:
    shas = recorded.key_digests.get((item.path, key))
    return shas is not None and value_digest(value) not in shas


def _unset(plan: Plan, edit: _Edit, merged: dict, item: SharedJson, key: Key, recorded: Recorded,
           force: bool) -> None:
    found, old = _get(merged, key)
    if not found:
        return
    ours = recorded.entries.get((item.path, key))
    if ours is not None and isinstance(old, list):
        drop = [i for i, entry in enumerate(old) if value_digest(entry) in ours]
        if drop and len(drop) < len(old):
            edit.drops.append((key, drop))
            _set_value(merged, key, [e for i, e in enumerate(old) if i not in drop])
            edit.touched.append(key_text(key))
            return
        if not drop:
            return
    elif not force and _edited_since(recorded, item, key, old):
        conflict(plan, item.path, f"key {key_text(key)} was edited since this export wrote it, and the profile "
                              "no longer sets it")
        return
    _remove(merged, key)
    edit.removes.append(key)
    edit.touched.append(key_text(key))


def _set(plan: Plan, edit: _Edit, merged: dict, item: SharedJson, key: Key, value: Any, recorded: Recorded,
         force: bool) -> None:
    found, old = _get(merged, key)
    if found and value_digest(old) == value_digest(value):
        return
    owned = key in recorded.shared.get(item.path, [])
    if found and not owned and not force:
        conflict(plan, item.path, f"key {key_text(key)} is set in the file, not by this export")
    elif found and not force and _edited_since(recorded, item, key, old):
        conflict(plan, item.path, f"key {key_text(key)} was edited since this export wrote it")
    if not _set_value(merged, key, value):
        plan.conflicts.append(Problem(f"key {key_text(key)} cannot be set: a part of its path is not an object",
                                      Location(str(plan.root / item.path)), code="profile.export-conflict"))
        return
    edit.sets.append((key, value))
    edit.touched.append(key_text(key))


def _extend(plan: Plan, edit: _Edit, merged: dict, item: SharedJson, key: Key, value: list[Any],
            recorded: Recorded) -> None:
    found, old = _get(merged, key)
    if not found:
        if not _set_value(merged, key, list(value)):
            plan.conflicts.append(Problem(f"key {key_text(key)} cannot be set: a part of its path is not an object",
                                          Location(str(plan.root / item.path)), code="profile.export-conflict"))
            return
        edit.sets.append((key, list(value)))
        edit.touched.append(key_text(key))
        return
    if not isinstance(old, list):
        plan.conflicts.append(Problem(f"key {key_text(key)} is not a list, so the export cannot add its entry to it",
                                      Location(str(plan.root / item.path)),
                                      hint="make it a list (the export adds its entry, keeping yours)",
                                      code="profile.export-conflict"))
        return
    new = {value_digest(v) for v in value}
    ours = recorded.entries.get((item.path, key), set())
    drop = [i for i, entry in enumerate(old) if value_digest(entry) in ours - new]
    kept = [e for i, e in enumerate(old) if i not in drop]
    present = {value_digest(e) for e in kept}
    add = [v for v in value if value_digest(v) not in present]
    if not drop and not add:
        return
    _set_value(merged, key, kept + add)
    if drop:
        edit.drops.append((key, drop))
    if add:
        edit.appends.append((key, add))
    edit.touched.append(key_text(key))


def _edited(item: SharedJson, current: Optional[str], edit: _Edit) -> Optional[str]:
    """The file's new text, edited at the changed keys only."""
    if is_toml(item):
        if edit.appends or edit.drops:
            return None
        return toml_edit(current or "", edit.removes, edit.sets)
    text = current if current is not None and current.strip() else "{}"
    try:
        for key in edit.removes:
            text = jsontext.remove_key(text, key)
        for key, indexes in edit.drops:
            text = jsontext.remove_items(text, key, indexes)
        for key, value in edit.sets:
            text = jsontext.set_key(text, key, value)
        for key, values in edit.appends:
            text = jsontext.append_items(text, key, values)
    except (jsontext.JsonTextError, AssertionError):
        return None
    return text if current is not None and current.strip() else text + "\n"


def _reparse(item: SharedJson, text: str) -> Any:
    try:
        return _parse_toml(text) if is_toml(item) else jsontext.parse(text).value
    except ValueError:
        return None


def _leaves(data: Any, prefix: Key = ()) -> set[Key]:
    if not isinstance(data, dict) or not data:
        return {prefix} if prefix else set()
    out: set[Key] = set()
    for k, v in data.items():
        out |= _leaves(v, (*prefix, k))
    return out


def _get(data: Any, key: Key) -> tuple[bool, Any]:
    for part in key:
        if not isinstance(data, dict) or part not in data:
            return False, None
        data = data[part]
    return True, data


def _set_value(data: dict, key: Key, value: Any) -> bool:
    for part in key[:-1]:
        nxt = data.setdefault(part, {})
        if not isinstance(nxt, dict):
            return False
        data = nxt
    if not isinstance(data, dict):
        return False
    data[key[-1]] = value
    return True


def _remove(data: dict, key: Key) -> bool:
    """Remove ``key``, then every object it leaves empty; False when it was not there."""
    chain = [data]
    for part in key[:-1]:
        nxt = chain[-1].get(part)
        if not isinstance(nxt, dict):
            return False
        chain.append(nxt)
    if key[-1] not in chain[-1]:
        return False
    del chain[-1][key[-1]]
    for depth in range(len(key) - 1, 0, -1):
        if chain[depth]:
            break
        del chain[depth - 1][key[depth - 1]]
    return True
