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

from dataclasses import dataclass, field
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


def content_text(content: Any) -> str:
    """The text of a message's ``content`` (a string, or its text blocks joined by newlines)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text") or "" for b in content if isinstance(b, Mapping) and b.get("type") == "text")
    return ""


@dataclass(frozen=True)
class SystemState:
    """What a run of system messages adds up to: non-empty contents, sections by name, tools
    by name (declarations), and the first message's timestamp (``None``: no system message)."""

    contents: tuple[str, ...] = ()
    sections: Mapping[str, str] = field(default_factory=dict)
    tools: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    timestamp: Any = None


def replay_system(messages: Iterable[Mapping[str, Any]]) -> SystemState:
    """The system messages among ``messages`` replayed in order: contents collected;
    ``sections`` patched by name (``None`` deletes, a known name keeps its place, a new one
    goes last); tools removed by name, then added (a redefinition moves to the end)."""
    contents: list[str] = []
    sections: dict[str, Any] = {}
    tools: dict[Any, Any] = {}
    timestamp: Any = None
    for message in messages:
        if message.get("role") != "system":
            continue
        if timestamp is None:
            timestamp = message.get("timestamp")
        if text := content_text(message.get("content")):
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
    return SystemState(tuple(contents), sections, tools, timestamp)


def current_system_message(messages: Iterable[Mapping[str, Any]]) -> Optional[dict[str, Any]]:
    """pi-ai's ``getCurrentSystemMessage`` over raw messages (non-system ones are skipped);
    ``None`` when there is no system message and no tool."""
    state = replay_system(messages)
    if state.timestamp is None and not state.tools:
        return None
    out: dict[str, Any] = {"role": "system", "content": "\n\n".join(state.contents)}
    if state.sections:
        out["sections"] = dict(state.sections)
    if state.tools:
        out["toolsAdded"] = list(state.tools.values())
    out["timestamp"] = state.timestamp if state.timestamp is not None else 0
    return out


def system_snapshot(path: Sequence[Entry], timestamp: str) -> Optional[dict[str, Any]]:
    """The ``systemMessage`` of a compaction entry appended at the end of ``path`` at
    ``timestamp`` (ISO): the projection's current system message, its time the entry's."""
    current = current_system_message(m.raw for m in projected_messages(path) if is_system(m))
    if current is None:
        return None
    current["timestamp"] = date_ms(timestamp)
    return current
