"""pi's session-format migrations (v1 → v2 → v3), applied in memory only.

pi rewrites a migrated file in place; this store never rewrites a written line, so the
loader migrates the parsed objects in memory and reports it (see
:meth:`pipeline.session.store.SessionFile.migrated_from`). The steps are pi's:

* v1 → v2: every object but headers gets a fresh ``id`` and ``parentId`` = the
  previous entry (a linear chain); a compaction's ``firstKeptEntryIndex`` (an index into
  the parsed objects, header included) becomes ``firstKeptEntryId`` when it points at an
  entry that already has an id, and is deleted either way;
* v2 → v3: the message role ``hookMessage`` is renamed ``custom``.

New keys land at the end of each object, as JavaScript property assignment does.
"""

from __future__ import annotations

from typing import Any, Callable

from pipeline.js import js_to_number
from pipeline.session.entries import CURRENT_VERSION, new_entry_id


def header_version(header: dict[str, Any]) -> Any:
    """``header.version ?? 1``."""
    version = header.get("version")
    return 1 if version is None else version


def needs_migration(version: Any) -> bool:
    """pi's test ``!(version >= 3)``, with JavaScript's number conversion (``"2"``, ``true``,
    ``[]`` count as 2, 1 and 0; a version that is no number at all "migrates" with no step)."""
    return not js_to_number(version) >= CURRENT_VERSION


def migrate(objects: list[dict[str, Any]], new_id: Callable[[set[str]], str] = new_entry_id) -> None:
    """Migrate parsed objects (header first) to version 3, in place."""
    version = js_to_number(header_version(objects[0]))
    if version >= CURRENT_VERSION:
        return
    if version < 2:
        _v1_to_v2(objects, new_id)
    if version < 3:
        _v2_to_v3(objects)


def _v1_to_v2(objects: list[dict[str, Any]], new_id: Callable[[set[str]], str]) -> None:
    taken: set[str] = set()
    previous: str | None = None
    for obj in objects:
        if obj.get("type") == "session":
            obj["version"] = 2
            continue
        obj["id"] = new_id(taken)
        taken.add(obj["id"])
        obj["parentId"] = previous
        previous = obj["id"]
        if obj.get("type") == "compaction":
            _first_kept_index_to_id(obj, objects)


def _first_kept_index_to_id(obj: dict[str, Any], objects: list[dict[str, Any]]) -> None:
    index = obj.get("firstKeptEntryIndex")
    if not isinstance(index, (int, float)) or isinstance(index, bool):
        return
    target = objects[int(index)] if float(index).is_integer() and 0 <= index < len(objects) else None
    if target is not None and target.get("type") != "session" and "id" in target:
        obj["firstKeptEntryId"] = target["id"]
    del obj["firstKeptEntryIndex"]


def _v2_to_v3(objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        if obj.get("type") == "session":
            obj["version"] = CURRENT_VERSION
        elif obj.get("type") == "message":
            message = obj.get("message")
            if isinstance(message, dict) and message.get("role") == "hookMessage":
                message["role"] = "custom"
