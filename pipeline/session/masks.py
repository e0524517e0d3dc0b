"""Masked tool results: a decision stored as a ``custom`` entry, honoured by the projection.

The ``mask_tool_results`` compaction strategy never rewrites what is written: it appends
one ``custom`` entry (``customType`` :data:`MASK_TYPE`) whose ``data`` says which tool
result entries the context shows with which text instead::

    {"type": "custom", "customType": "context-pipeline/mask", "data": {"version": 1,
     "entries": {"<tool result entry id>": "<placeholder text>"}}, ...}

Our projection (:func:`pipeline.session.projection.build_session_context`) replaces the
content of every masked tool result on the path with its placeholder; pi ignores custom
entries, so pi opens the file and shows the results unmasked (docs/compaction.md).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from pipeline.session.entries import CustomEntry, Entry
from pipeline.session.messages import AgentMessage, ToolResultMessage, parse_message

MASK_TYPE = "context-pipeline/mask"
MASK_VERSION = 1


def mask_data(placeholders: Mapping[str, str]) -> dict[str, object]:
    """The ``data`` of a mask entry for ``{entry id: placeholder}``."""
    return {"version": MASK_VERSION, "entries": dict(placeholders)}


def masked_entries(path: Sequence[Entry]) -> dict[str, str]:
    """``{entry id: placeholder}`` of every mask entry on ``path`` (a later entry wins)."""
    found: dict[str, str] = {}
    for entry in path:
        if type(entry) is CustomEntry and entry.custom_type == MASK_TYPE:
            found.update(_entries_of(entry.data))
    return found


def _entries_of(data: object) -> dict[str, str]:
    if not isinstance(data, dict) or data.get("version") != MASK_VERSION:
        return {}
    entries = data.get("entries")
    if not isinstance(entries, dict):
        return {}
    return {k: v for k, v in entries.items() if isinstance(k, str) and isinstance(v, str)}


def masked_message(message: AgentMessage, placeholder: str) -> AgentMessage:
    """A tool result with its content replaced by one text block (other messages unchanged)."""
    if not isinstance(message, ToolResultMessage):
        return message
    raw = dict(message.raw)
    raw["content"] = [{"type": "text", "text": placeholder}]
    return parse_message(raw)
