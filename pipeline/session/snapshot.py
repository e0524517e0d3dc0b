"""The system prompt a session's projection replays to (pi 1.x), and the snapshot of it a
compaction entry carries.

pi 1.x records the system prompt as ``system`` message entries (content, named sections,
tool declarations added and removed). A compaction drops everything before its kept range,
recorded system messages included, so pi writes the replay of the branch's projection at
that point on the compaction entry (``systemMessage``, stamped with the entry's time); the
projection then shows it first, before the summary (:func:`~pipeline.session.projection.project_path`).

:func:`current_system_message` is pi-ai's ``getCurrentSystemMessage``: contents joined,
sections patched by name (``null`` deletes; a known name keeps its place), tools removed by
name, then added.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Sequence

from pipeline.js import date_ms
from pipeline.session.entries import Entry
from pipeline.session.messages import AgentMessage, UnknownMessage
from pipeline.session.projection import project_path


def is_system(message: AgentMessage) -> bool:
    """A recorded ``system`` message (a role pi 0.84.0 does not know)."""
    return isinstance(message, UnknownMessage) and message.message_role == "system"


def projected_messages(path: Sequence[Entry]) -> list[AgentMessage]:
    """The messages of pi 1.x's projection of ``path`` (``buildSessionContext`` in 1.x)."""
    return [m for item in project_path(path) for m in item.messages]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text") or "" for b in content if isinstance(b, Mapping) and b.get("type") == "text")
    return ""


def current_system_message(messages: Iterable[Mapping[str, Any]]) -> Optional[dict[str, Any]]:
    """pi-ai's ``getCurrentSystemMessage`` over raw messages (non-system ones are skipped);
    ``None`` when there is no system message and no tool."""
    contents: list[str] = []
    sections: dict[str, Any] = {}
    tools: dict[Any, Any] = {}
    timestamp: Any = None
    for message in messages:
        if message.get("role") != "system":
            continue
        if timestamp is None:
            timestamp = message.get("timestamp")
        if text := _text(message.get("content")):
            contents.append(text)
        for name, value in (message.get("sections") or {}).items():
            if value is None:
                sections.pop(name, None)
            else:
                sections[name] = value
        for tool in message.get("toolsRemoved") or ():
            tools.pop(tool.get("name"), None)
        for tool in message.get("toolsAdded") or ():
            tools[tool.get("name")] = tool
    if timestamp is None and not tools:
        return None
    out: dict[str, Any] = {"role": "system", "content": "\n\n".join(contents)}
    if sections:
        out["sections"] = sections
    if tools:
        out["toolsAdded"] = list(tools.values())
    out["timestamp"] = timestamp if timestamp is not None else 0
    return out


def system_snapshot(path: Sequence[Entry], timestamp: str) -> Optional[dict[str, Any]]:
    """The ``systemMessage`` of a compaction entry appended at the end of ``path`` at
    ``timestamp`` (ISO): the projection's current system message, its time the entry's."""
    current = current_system_message(m.raw for m in projected_messages(path) if is_system(m))
    if current is None:
        return None
    current["timestamp"] = date_ms(timestamp)
    return current
