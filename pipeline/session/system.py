"""pi 1.x's recorded system prompt: the one home of its rules.

pi 1.x keeps the system prompt in the session. Two entry kinds carry it, both read as types
of their own by the session reader and written by the store:

* :class:`~pipeline.session.messages.SystemMessage` (a ``message`` entry with
  ``role: "system"``): the first one holds the whole prompt (its sections by name, the tool
  declarations in ``toolsAdded``), later ones patch it (changed sections, ``null`` for a
  removed one, tools added and removed);
* :class:`~pipeline.session.entries.ContextEditEntry` (``type: "context_edit"``): from then
  on an earlier entry shows the model a replacement, or nothing (the projection applies it,
  :func:`~pipeline.session.projection.project_path`).

The rules (docs/sessions.md#recorded-system-prompt):

* :func:`apply_sections`, the *replay rule* of a section record: a text sets the name (a
  known name keeps its place, a new one goes last), ``None`` removes it;
* :func:`replay`, the one replay: what the system messages among some messages add up to,
  from nothing or from an earlier state (:class:`SystemState`): contents collected, sections
  patched by the replay rule, tools removed by name, then added (a redefinition moves to the end);
* :class:`SystemState`, the one value of the recorded prompt: the replay's contents,
  sections (its *record*) and tools; :meth:`SystemState.patched` applies bare section patches,
  :meth:`SystemState.prompt` is the one system prompt a model without mid-conversation system
  messages is sent, :meth:`SystemState.current_message` is pi-ai's ``getCurrentSystemMessage``
  (``None`` when there is no system message and no tool).

Everything else that reads the recorded prompt (the prompt's patches and views,
``pipeline.prompt.patch``; the token estimate, ``pipeline.compaction.tokens``; the
conversation, ``pipeline.runtime.system``; a compaction's snapshot,
:mod:`pipeline.session.snapshot`; the facade's ``Pipeline.patches``) calls these.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Optional

from pipeline.session.entries import ContextEditEntry
from pipeline.session.messages import AgentMessage, SystemMessage


def is_system_message(message: object) -> bool:
    """A recorded system message (:class:`SystemMessage`)."""
    return isinstance(message, SystemMessage)


def is_context_edit(entry: object) -> bool:
    """A context edit (:class:`ContextEditEntry`)."""
    return isinstance(entry, ContextEditEntry)


def apply_sections(record: Mapping[str, str], patch: Optional[Mapping[str, Optional[str]]]) -> dict[str, str]:
    """``record`` with ``patch`` applied: a text sets the name (in place when known, else
    last), ``None`` removes it."""
    out = dict(record)
    for name, text in (patch or {}).items():
        if text is None:
            out.pop(name, None)
        else:
            out[name] = text
    return out


def content_text(content: Any) -> str:
    """The text of a system message's ``content``: a string, or its text blocks joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text for b in content if isinstance(b, Mapping) and b.get("type") == "text"
                         and isinstance(text := b.get("text"), str))
    return ""


#: Between sections (and message contents) of a replayed prompt when the profile sets no ``join``.
DEFAULT_JOIN = "\n\n"


@dataclass(frozen=True)
class SystemState:
    """What a run of system messages adds up to: the non-empty contents, sections by name (the
    *record*), tools by name (their declarations), the first timestamp found and how many
    messages there were."""

    contents: tuple[str, ...] = ()
    sections: Mapping[str, str] = field(default_factory=dict)
    tools: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    timestamp: Any = None
    count: int = 0

    @property
    def record(self) -> Mapping[str, str]:
        """The sections by name, in the replay's order."""
        return self.sections

    def patched(self, patches: Iterable[Optional[Mapping[str, Optional[str]]]]) -> "SystemState":
        """This state with bare section patches applied in turn (the replay rule)."""
        sections = dict(self.sections)
        for patch in patches:
            sections = apply_sections(sections, patch)
        return replace(self, sections=sections)

    def prompt(self, join: Optional[str] = None) -> str:
        """The one system prompt a model without mid-conversation system messages is sent: the
        contents, then the sections' texts, joined by the profile's ``join`` (default a blank line)."""
        parts = [*self.contents, *self.sections.values()]  # empty parts dropped
        return (DEFAULT_JOIN if join is None else join).join(p for p in parts if p)

    def current_message(self) -> Optional[dict[str, Any]]:
        """pi-ai's ``getCurrentSystemMessage``: the replay as one system message (contents
        joined by a blank line; ``timestamp`` the first message's, else 0); ``None`` when
        there was no system message and there is no tool."""
        if not self.count and not self.tools:
            return None
        out: dict[str, Any] = {"role": "system", "content": "\n\n".join(self.contents)}
        if self.sections:
            out["sections"] = dict(self.sections)
        if self.tools:
            out["toolsAdded"] = list(self.tools.values())
        out["timestamp"] = self.timestamp if self.timestamp is not None else 0
        return out


def system_messages(messages: Iterable[AgentMessage]) -> list[SystemMessage]:
    """The system messages among ``messages``, in order."""
    return [m for m in messages if isinstance(m, SystemMessage)]


def replay(messages: Iterable[AgentMessage | Mapping[str, Any]], start: Optional[SystemState] = None) -> SystemState:
    """The system messages among ``messages`` (views, or raw message objects) replayed in order,
    from ``start`` (default: nothing recorded)."""
    start = start or SystemState()
    contents: list[str] = list(start.contents)
    sections: dict[str, str] = dict(start.sections)
    tools: dict[Any, Mapping[str, Any]] = dict(start.tools)
    timestamp: Any = start.timestamp
    count = start.count
    for item in messages:
        message = _system(item)
        if message is None:
            continue
        count += 1
        if timestamp is None:
            timestamp = message.timestamp
        if text := content_text(message.content):
            contents.append(text)
        sections = apply_sections(sections, message.sections)
        for tool in message.tools_removed:
            tools.pop(tool.get("name"), None)
        for tool in message.tools_added:
            tools[tool.get("name")] = tool
    return SystemState(tuple(contents), sections, tools, timestamp, count)


def _system(item: AgentMessage | Mapping[str, Any]) -> Optional[SystemMessage]:
    if isinstance(item, SystemMessage):
        return item
    if isinstance(item, Mapping) and item.get("role") == SystemMessage.role:
        return SystemMessage(item)
    return None


def current_system_message(messages: Iterable[AgentMessage | Mapping[str, Any]]) -> Optional[dict[str, Any]]:
    """pi-ai's ``getCurrentSystemMessage`` over ``messages`` (non-system ones skipped)."""
    return replay(messages).current_message()


__all__ = ["DEFAULT_JOIN", "ContextEditEntry", "SystemMessage", "SystemState", "apply_sections", "content_text",
           "current_system_message", "is_context_edit", "is_system_message", "replay", "system_messages"]
