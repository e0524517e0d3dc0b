"""The manifest of an export: what it wrote, read strictly and checked before any use.

One JSON file per target and root (its path chosen by the target)::

    {"version": 1, "target": "pi", "agent": "pi 1.6.0", "profile": "team.yaml",
     "files": {".pi/prompts/fix.md": "<sha256 of its text>", ...},
     "shared": {".pi/settings.json": [["compaction", "reserveTokens"], ...]},
     "key_digests": {".pi/settings.json": {"[\\"compaction\\", \\"reserveTokens\\"]": "<sha256>"}},
     "entries": {".claude/settings.json": {"[\\"hooks\\", \\"PreCompact\\"]": ["<sha256>"]}},
     "blocks": {"GEMINI.md": "<sha256 of the marked block's lines>"}}

``key_digests`` holds a digest of each owned key's value (a user's edit of it is a
conflict, as an edited file is); ``entries`` the digests of the items the export added
to a list the user shares (Claude Code's ``hooks.PreCompact``); ``blocks`` the digest of
the marked block the export keeps in a text file the user shares (Gemini CLI's ``GEMINI.md``). Manifests written before
these two existed are read as before (no check of the keys' values).

While an export writes, the manifest it is about to record sits beside the old one as
``<manifest>.pending`` (the journal, :mod:`pipeline.export.writer`); the last step
renames it over the manifest. A journal left by an interrupted export is read with the
manifest: a file holding either the old or the new bytes is the export's.

Every path in either is checked (:func:`pipeline.export.paths.path_problem`) before it is
used: an entry outside the root is a located error naming the manifest and the entry,
whatever ``--force`` says.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from pipeline import files
from pipeline.errors import Location, PipelineError, Problem
from pipeline import jsontext
from pipeline.export.base import Key
from pipeline.export.paths import link_in_the_way, path_problem
from pipeline.manifests import PENDING

MANIFEST_VERSION = 1
_HEX = set("0123456789abcdef")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def value_digest(value: Any) -> str:
    """The digest of a settings value (key order and layout do not count)."""
    return digest(json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")))


def key_id(key: Key) -> str:
    return json.dumps(list(key), ensure_ascii=False)


@dataclass
class Recorded:
    """What the manifest (and a journal left beside it) says the export owns."""

    files: dict[str, set[str]] = field(default_factory=dict)  # path -> digests of the export's bytes
    shared: dict[str, list[Key]] = field(default_factory=dict)  # path -> the keys that are the export's
    key_digests: dict[tuple[str, Key], set[str]] = field(default_factory=dict)
    entries: dict[tuple[str, Key], set[str]] = field(default_factory=dict)
    blocks: dict[str, set[str]] = field(default_factory=dict)  # path -> digests of the export's block

    def add(self, data: dict[str, Any]) -> None:
        for path, sha in data["files"].items():
            self.files.setdefault(path, set()).add(sha)
        for path, sha in data["blocks"].items():
            self.blocks.setdefault(path, set()).add(sha)
        for path, keys in data["shared"].items():
            known = self.shared.setdefault(path, [])
            known += [k for k in keys if k not in known]
        for name in ("key_digests", "entries"):
            mine = getattr(self, name)
            for path, by_key in data[name].items():
                for kid, shas in by_key.items():
                    key = tuple(json.loads(kid))
                    mine.setdefault((path, key), set()).update([shas] if isinstance(shas, str) else shas)


def read_recorded(root: Path, rel: str, target: str) -> Recorded:
    """The manifest at ``root/rel`` and the journal beside it (empty when there is neither)."""
    recorded = Recorded()
    for name in (rel, rel + PENDING):
        data = _read(root, name, target)
        if data is not None:
            recorded.add(data)
    return recorded


def read_manifest(root: Path, rel: str, target: str) -> dict[str, Any]:
    """The manifest at ``root/rel`` as written (``files`` and ``shared`` empty when there is none)."""
    data = _read(root, rel, target)
    return data if data is not None else {"files": {}, "shared": {}, "key_digests": {}, "entries": {}, "blocks": {}}


def _error(path: Path, message: str, key: Optional[str] = None, line: Optional[int] = None,
           col: Optional[int] = None, code: str = "profile.export-file") -> PipelineError:
    hint = ("delete it and export again with --force" if code == "profile.export-file"
            else "the export only reads and writes inside its root; delete the entry or the manifest, then export again")
    return PipelineError(Problem(message, Location(str(path), line, col), key=key, hint=hint, code=code))


def _read(root: Path, rel: str, target: str) -> Optional[dict[str, Any]]:
    path = root / rel
    if link_in_the_way(root, rel) is not None:
        return None  # never read through a link: the files under it are conflicts (--force: replaced)
    if files.missing(path):
        return None
    text = files.read_text(path, "settings file")
    try:
        data = jsontext.parse(text).value
    except jsontext.JsonTextError as err:
        raise _error(path, f"the export manifest is not valid JSON: {err.msg}", line=err.lineno,
                     col=err.colno) from None
    if not isinstance(data, dict) or data.get("target") != target or not isinstance(data.get("files"), dict):
        raise _error(path, f"not a manifest of `pipeline export {target}`")
    for name in ("shared", "key_digests", "entries", "blocks"):
        data.setdefault(name, {})
        if not isinstance(data[name], dict):
            raise _error(path, "not an object", key=name)
    _check(path, data)
    data["shared"] = {p: [tuple(k) for k in keys] for p, keys in data["shared"].items()}
    return data


def _check(path: Path, data: dict[str, Any]) -> None:
    """Every entry a relative, normalised path inside the root, with well-formed digests and keys."""
    for name in ("files", "shared", "key_digests", "entries", "blocks"):
        for entry, value in data[name].items():
            problem = path_problem(entry)
            if problem is not None:
                raise _error(path, f"the entry is not a path inside the export's root: {problem}",
                             key=f"{name}.{json.dumps(entry, ensure_ascii=False)[:80]}", code="profile.export-path")
            if not _well_formed(name, value):
                raise _error(path, "the entry is not what an export writes",
                             key=f"{name}.{json.dumps(entry, ensure_ascii=False)[:80]}")


def _sha(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX


def _key(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(p, str) for p in value)


def _kid(value: Any) -> bool:
    try:
        return isinstance(value, str) and _key(json.loads(value))
    except ValueError:
        return False


def _well_formed(name: str, value: Any) -> bool:
    if name in ("files", "blocks"):
        return _sha(value)
    if name == "shared":
        return isinstance(value, list) and all(_key(k) for k in value)
    if not isinstance(value, dict) or not all(_kid(k) for k in value):
        return False
    if name == "key_digests":
        return all(_sha(v) for v in value.values())
    return all(isinstance(v, list) and all(_sha(s) for s in v) for v in value.values())
