"""Session files with pi 1.x entries made from 0.84.0's (shared by ``gen_tokens_after_vectors.py``
and ``test_pi1_tokens_after.py``): recorded system messages and context edits inserted into a
file of ``tests/data/sessions/real/``, so the long sessions pi 0.84.0 wrote get what a pi 1.x
branch holds. The texts are placeholders (runs of one letter), never a prompt's words.

A variant is a list of inserts: ``(where, entry)``, ``where`` a fraction of the file's
entries; the entry goes right after the entry at that place and takes over its children.
"""

from __future__ import annotations

import json
from typing import Any

_READ = {"name": "read", "description": "r" * 40, "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}
_LS = {"name": "ls", "description": "l" * 30, "parameters": {"type": "object", "properties": {}}}

LEADING = {"role": "system", "content": "", "sections": {"preamble": "p" * 400, "tools": "t" * 300, "cwd": "c" * 60},
           "toolsAdded": [_READ]}
PATCH = {"role": "system", "content": "", "sections": {"tools": "u" * 500, "extra": "e" * 200, "cwd": None},
         "toolsRemoved": [{"name": "read"}], "toolsAdded": [_LS, _READ]}
NOTE = {"role": "system", "content": [{"type": "text", "text": "n" * 90}], "sections": {"extra": None}}

VARIANTS: dict[str, list[tuple[float, dict[str, Any]]]] = {
    "systems": [(0.0, {"message": LEADING}), (0.55, {"message": PATCH}), (0.8, {"message": NOTE})],
    "systems-edits": [
        (0.0, {"message": LEADING}), (0.5, {"message": PATCH}),
        (0.6, {"edit": "assistant", "replacement": None}),
        (0.7, {"edit": "toolResult", "replacement": {"content": "x" * 20}}),
        (0.85, {"edit": "user", "replacement": {"content": [{"type": "text", "text": "y" * 30}]}}),
    ],
}


def derive(jsonl: str, variant: str) -> str:
    """``jsonl`` with the variant's entries inserted (ids ``d0000001``…, in order)."""
    lines = [json.loads(line) for line in jsonl.splitlines() if line.strip()]
    header, entries = lines[0], lines[1:]
    for number, (where, spec) in enumerate(VARIANTS[variant], 1):
        anchor = _anchor(entries, where, spec)
        at = entries[anchor]
        new_id = f"d{number:07d}"
        entry: dict[str, Any] = {"type": "message" if "message" in spec else "context_edit", "id": new_id,
                                 "parentId": at["id"], "timestamp": at["timestamp"]}
        if "message" in spec:
            entry["message"] = {**spec["message"], "timestamp": _ms(at)}
        else:
            target = _target(entries, anchor, spec["edit"])
            entry["targetId"], entry["replacement"] = target, spec["replacement"]
        for child in entries:
            if child.get("parentId") == at["id"]:
                child["parentId"] = new_id
        entries.insert(anchor + 1, entry)
    return "\n".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in (header, *entries)) + "\n"


def _anchor(entries: list[dict], where: float, spec: dict) -> int:
    """A system message goes before a user message (after the entry before it); an edit after
    the entry at that place."""
    index = min(int(len(entries) * where), len(entries) - 1)
    if "message" in spec:
        if where == 0.0:
            return next(i for i, e in enumerate(entries) if _role(e) == "user") - 1
        return next(i for i in range(index, len(entries)) if _role(entries[i]) == "user") - 1
    return index


def _target(entries: list[dict], anchor: int, role: str) -> str:
    """The last message of ``role`` at or before the anchor on its branch."""
    by_id = {e["id"]: e for e in entries}
    entry: dict | None = entries[anchor]
    while entry is not None:
        if _role(entry) == role:
            return entry["id"]
        entry = by_id.get(entry.get("parentId"))
    raise ValueError(f"no {role} message before entry {anchor}")


def _role(entry: dict) -> str | None:
    return entry["message"].get("role") if entry.get("type") == "message" else None


def _ms(entry: dict) -> int:
    from datetime import datetime

    return int(datetime.fromisoformat(entry["timestamp"].replace("Z", "+00:00")).timestamp() * 1000)
