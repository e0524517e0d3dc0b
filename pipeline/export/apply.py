"""Comparing an :class:`~pipeline.export.base.Export` with the disk, and writing it.

The manifest (one JSON file per target and root, its path chosen by the target) records
what the last export wrote: each owned file with the SHA-256 of its text, and each key of
a shared JSON or TOML file. From it :func:`plan_changes` knows

* which files it may rewrite: one it wrote whose bytes are still the ones it wrote (a file
  it did not write, or one edited since, is a conflict unless ``force``);
* which files to remove: owned before, no longer produced (again only unedited ones);
* which marked block of a shared text file is its own (:class:`~pipeline.export.base.SharedBlock`):
  the block is rewritten while its text is the one it wrote, the lines around it are kept;
* which keys of a shared JSON file are its own: the others are kept as they are; a key the
  user set that the export now wants to set is a conflict unless ``force``.

:func:`write_changes` then writes the files and the manifest. Nothing here knows a target.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Optional

from pipeline.errors import Location, PipelineError, Problem
from pipeline.export.base import BLOCK_BEGIN, BLOCK_END, Export, Key, SharedBlock, SharedJson, SharedToml, key_text

Action = Literal["create", "update", "delete", "unchanged"]
MANIFEST_VERSION = 1


@dataclass(frozen=True)
class Change:
    """What exporting does to one file."""

    path: str  # relative to the root
    action: Action
    text: Optional[str] = None  # the new text (create, update)
    keys: tuple[str, ...] = ()  # shared JSON: the keys set or removed, as people read them
    shared: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "action": self.action}
        if self.shared:
            out["keys"] = list(self.keys)
        return out


@dataclass
class Plan:
    """The changes of one export, the conflicts found, and the manifest to write."""

    root: Path
    manifest_path: str
    changes: list[Change] = field(default_factory=list)
    conflicts: list[Problem] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def drift(self) -> list[Change]:
        return [c for c in self.changes if c.action != "unchanged"]


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_manifest(root: Path, rel: str, target: str) -> dict[str, Any]:
    """The manifest at ``root/rel`` (empty when there is none); a broken one is a located error."""
    path = root / rel
    if not path.is_file():
        return {"files": {}, "shared": {}}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise PipelineError(Problem(f"the export manifest is not valid JSON: {err}", Location(str(path)),
                                    hint="delete it and export again with --force", code="profile.export-file")) from None
    if not isinstance(data, dict) or data.get("target") != target or not isinstance(data.get("files"), dict):
        raise PipelineError(Problem(f"not a manifest of `pipeline export {target}`", Location(str(path)),
                                    hint="delete it and export again with --force", code="profile.export-file"))
    data.setdefault("shared", {})
    return data


def plan_changes(export: Export, root: Path, manifest_path: str, *, force: bool = False,
                 profile: str = "", agent: str = "") -> Plan:
    """The changes that bring ``root`` to ``export`` (see the module's docstring)."""
    old = read_manifest(root, manifest_path, export.target)
    plan = Plan(root, manifest_path)
    owned: dict[str, str] = old["files"]
    produced = {f.path for f in export.files} | {s.path for s in export.shared}
    for item in export.files:
        _owned_change(plan, item.path, item.text, owned.get(item.path), force)
    for path in sorted(set(owned) - produced):
        _removal(plan, path, owned[path], force)
    shared_old: dict[str, list[list[str]]] = old["shared"]
    for shared in export.shared:
        _shared_change(plan, shared, [tuple(k) for k in shared_old.get(shared.path, [])], force)
    for gone in sorted(set(shared_old) - produced):
        _shared_change(plan, SharedJson(gone, ()), [tuple(k) for k in shared_old[gone]], force)
    blocks_old: dict[str, str] = old.get("blocks") or {}
    for block in export.blocks:
        _block_change(plan, block.path, block.text, blocks_old.get(block.path), force)
    for gone in sorted(set(blocks_old) - {b.path for b in export.blocks}):
        _block_change(plan, gone, None, blocks_old[gone], force)
    plan.manifest = {
        "version": MANIFEST_VERSION, "target": export.target, "agent": agent, "profile": profile,
        "files": {f.path: digest(f.text) for f in export.files},
        "shared": {s.path: [list(k) for k, _ in s.keys] for s in export.shared if s.keys},
        **({"blocks": {b.path: digest(_body(b.text)) for b in export.blocks}} if export.blocks else {}),
    }
    return plan


def _conflict(plan: Plan, path: str, message: str) -> None:
    plan.conflicts.append(Problem(message, Location(str(plan.root / path)),
                                  hint="move it away, or pass --force to let the export take it over",
                                  code="profile.export-conflict"))


def _owned_change(plan: Plan, path: str, text: str, recorded: Optional[str], force: bool) -> None:
    target = plan.root / path
    if not target.exists():
        plan.changes.append(Change(path, "create", text))
        return
    current = _read(target)
    if current == text:
        plan.changes.append(Change(path, "unchanged"))
        return
    if not force and recorded is None:
        _conflict(plan, path, "the file exists and was not written by this export")
    elif not force and (current is None or digest(current) != recorded):
        _conflict(plan, path, "the file was edited since this export wrote it")
    plan.changes.append(Change(path, "update", text))


def _removal(plan: Plan, path: str, recorded: str, force: bool) -> None:
    target = plan.root / path
    if not target.exists():
        return
    current = _read(target)
    if not force and (current is None or digest(current) != recorded):
        _conflict(plan, path, "the profile no longer produces this file, but it was edited since it was written")
    plan.changes.append(Change(path, "delete"))


def _block_change(plan: Plan, path: str, text: Optional[str], recorded: Optional[str], force: bool) -> None:
    """The marked block of ``path`` set to ``text`` (``None``: removed), the user's lines kept."""
    text = None if text is None else _body(text)
    target = plan.root / path
    current = _read(target) if target.exists() else ""
    if current is None:
        plan.conflicts.append(Problem("the file is not UTF-8 text", Location(str(target)),
                                      hint="the export adds a marked block to it", code="profile.export-file"))
        return
    lines = current.splitlines(keepends=True)
    marks = [i for i, line in enumerate(lines) if line.rstrip("\r\n") in (BLOCK_BEGIN, BLOCK_END)]
    if marks and (len(marks) != 2 or lines[marks[0]].rstrip("\r\n") != BLOCK_BEGIN):
        plan.conflicts.append(Problem(f"the export's block markers are broken (want one `{BLOCK_BEGIN}` line, then "
                                      f"one `{BLOCK_END}` line)", Location(str(target), marks[0] + 1),
                                      hint="mend or remove the markers", code="profile.export-file"))
        return
    old = "".join(lines[marks[0] + 1:marks[1]]) if marks else None
    if old is not None and not force and (recorded is None or digest(old) != recorded):
        _conflict(plan, path, "the export's marked block was edited since it was written" if recorded else
                  "the file holds a context-pipeline block this export did not write")
    if old == text or (old is None and text is None):
        plan.changes.append(Change(path, "unchanged", shared=True))
        return
    block = [] if text is None else [f"{BLOCK_BEGIN}\n", text, f"{BLOCK_END}\n"]
    if marks:
        new = "".join(lines[:marks[0]] + block + lines[marks[1] + 1:])
    else:
        new = current + ("\n" if current and not current.endswith("\n") else "") + ("\n" if current else "") + "".join(block)
    action: Action = "create" if not target.exists() else ("delete" if not new.strip() else "update")
    plan.changes.append(Change(path, action, None if action == "delete" else new, ("context-pipeline block",),
                               shared=True))


def _body(text: str) -> str:
    """A block's lines as the file holds them (ending with a line break)."""
    return text if text.endswith("\n") else text + "\n"


def _read(path: Path) -> Optional[str]:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _parse(item: SharedJson, text: str) -> Any:
    """The file's object (raises ValueError with ``lineno``/``colno`` where the format gives them)."""
    if isinstance(item, SharedToml) or item.path.endswith(".toml"):
        return _tomllib().loads(text)
    return json.loads(text)


def _error_place(err: ValueError) -> tuple[str, Optional[int], Optional[int]]:
    """The message of a JSON or TOML parse error and its line and column (tomllib puts them in its text)."""
    if isinstance(err, json.JSONDecodeError):
        return err.msg, err.lineno, err.colno
    text = str(err)
    m = re.search(r" \(at line (\d+), column (\d+)\)", text)
    if m is None:
        return text, None, None
    return text[:m.start()] + text[m.end():], int(m.group(1)), int(m.group(2))


def _tomllib() -> Any:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[import-not-found]
    return tomllib


def _shared_change(plan: Plan, item: SharedJson, owned_before: list[Key], force: bool) -> None:
    target = plan.root / item.path
    toml = isinstance(item, SharedToml) or item.path.endswith(".toml")
    kind = "TOML" if toml else "JSON"
    data: Any = {}
    if target.exists():
        current = _read(target)
        try:
            data = _parse(item, current) if current is not None and current.strip() else {}
        except ValueError as err:
            data = None
            message, line, col = _error_place(err)
            plan.conflicts.append(Problem(f"not valid {kind}: {message}", Location(str(target), line, col),
                                          hint="fix the file; the export merges its keys into it",
                                          code="profile.export-file"))
        if data is not None and not isinstance(data, dict):
            plan.conflicts.append(Problem("the file's top level is not a JSON object", Location(str(target)),
                                          hint="the export merges its keys into an object",
                                          code="profile.export-file"))
            data = None
        if data is None:
            return
    else:
        current = None
    merged = copy.deepcopy(data)
    now = {k for k, _ in item.keys}
    touched: list[str] = []
    removed: list[Key] = []
    for key in owned_before:
        if key not in now and _remove(merged, key):
            touched.append(key_text(key))
            removed.append(key)
    for key, value in item.keys:
        found, old = _get(merged, key)
        if found and old == value:
            continue
        if found and key not in owned_before and not force:
            _conflict(plan, item.path, f"key {key_text(key)} is set in the file, not by this export "
                                       f"({json.dumps(old, default=str)}; the profile says {json.dumps(value)})")
        if not _set(merged, key, value):
            plan.conflicts.append(Problem(f"key {key_text(key)} cannot be set: a part of its path is not an object",
                                          Location(str(target)), code="profile.export-conflict"))
        touched.append(key_text(key))
    if not touched:
        if current is not None or not item.keys:
            plan.changes.append(Change(item.path, "unchanged", shared=True))
        return
    text: Optional[str]
    if toml:
        text = _toml_edit(current or "", removed, [(k, v) for k, v in item.keys if k not in removed])
        try:
            same = _tomllib().loads(text) == merged
        except ValueError:
            same = False
        if not same:
            plan.conflicts.append(Problem("the export cannot edit this TOML file line by line (one of its keys "
                                          "spans several lines or sits in a table)", Location(str(target)),
                                          hint="write the export's keys as one `key = value` line each at the top "
                                               "of the file, or move the file away", code="profile.export-file"))
            return
    else:
        text = json.dumps(merged, indent=2, ensure_ascii=False) + "\n"
    action: Action = "update" if current is not None else "create"
    if not merged and current is not None and set(owned_before) >= _leaves(data):
        action, text = "delete", None  # every key was ours: the file goes as it came
    plan.changes.append(Change(item.path, action, text, tuple(touched), shared=True))


# --------------------------------------------------------------------------- TOML, line by line

_TOML_BARE = re.compile(r"[A-Za-z0-9_-]+")
_TOML_TABLE = re.compile(r"\s*\[")


def toml_value(value: Any) -> str:
    """One TOML value on one line (strings, numbers, booleans, arrays and inline tables of them)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):  # a JSON string is a TOML basic string once `/` escapes and DEL are avoided
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML form for {value!r}")


def _toml_key(key: str) -> str:
    return key if _TOML_BARE.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def _toml_line_key(line: str) -> Optional[str]:
    """The top-level key a ``key = value`` line sets (bare or quoted), else None."""
    m = re.match(r'\s*(?:([A-Za-z0-9_-]+)|"((?:[^"\\]|\\.)*)")\s*=', line)
    if not m:
        return None
    return m.group(1) if m.group(1) is not None else json.loads(f'"{m.group(2)}"')


def _toml_edit(text: str, removed: list[Key], values: list[tuple[Key, Any]]) -> str:
    """``text`` with the top-level lines of ``removed`` deleted and each of ``values`` set: its line
    replaced where it has one before the first table, else added before that table."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    head = next((i for i, line in enumerate(lines) if _TOML_TABLE.match(line)), len(lines))
    wanted = {k[0]: v for k, v in values}
    gone = {k[0] for k in removed}
    out: list[str] = []
    for i, line in enumerate(lines):
        key = _toml_line_key(line) if i < head else None
        if key in gone:
            continue
        if key is not None and key in wanted:
            out.append(f"{_toml_key(key)} = {toml_value(wanted.pop(key))}\n")
            continue
        out.append(line)
    new = [f"{_toml_key(k)} = {toml_value(v)}\n" for k, v in wanted.items()]
    if new:
        at = next((i for i, line in enumerate(out) if _TOML_TABLE.match(line)), len(out))
        if at < len(out):
            while at > 0 and not out[at - 1].strip():
                at -= 1  # after the last top-level line, before the blank lines above the first table
        out[at:at] = new + (["\n"] if at == 0 and out else [])
    return "".join(out)


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


def _set(data: dict, key: Key, value: Any) -> bool:
    for part in key[:-1]:
        nxt = data.setdefault(part, {})
        if not isinstance(nxt, dict):
            return False
        data = nxt
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


def write_changes(plan: Plan) -> None:
    """Write every change and the manifest (call only when ``plan.conflicts`` is empty)."""
    for change in plan.changes:
        path = plan.root / change.path
        if change.action in ("create", "update"):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(change.text or "", encoding="utf-8")
        elif change.action == "delete":
            path.unlink(missing_ok=True)
    manifest = plan.root / plan.manifest_path
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps(plan.manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
