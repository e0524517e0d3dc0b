"""Sessions that record the system prompt (``runtime.record_system_prompt``, pi 1.x).

The prompt and the tool set live in the session as ``system`` message entries: the first
prompt of a fresh session records the whole prompt (``content ""``, every section in
``sections``, the tool declarations in ``toolsAdded``) before the user's message; before
each later model request the sections a fresh render gives (the run's options, after the
host's hooks changed them) are compared with the *replay* of the recorded messages, and
what differs is recorded as a new system message (changed and removed sections, tools
added and removed); nothing when nothing changed. A session written without such entries
(pi 0.84.0) gets its whole prompt recorded mid-conversation, before the next user message.

The replay rule and the message types are :mod:`pipeline.session.system`'s; here is what a
conversation does with them (:class:`RecordedPrompt`, held by the conversation). What a
provider is sent follows from the record (:class:`SystemLog`):

* a model that reads system messages mid-conversation (``ModelInfo.mid_conversation_system``)
  gets the leading system messages joined as its system prompt — unchanged for the whole
  session, so the cached prefix survives — and each later one in place, framed with the
  profile's ``system_prompt.patch`` words (:func:`frame_update`);
* any other model gets one system prompt holding the replay
  (:meth:`~pipeline.session.system.SystemState.prompt` of :func:`~pipeline.session.system.replay`),
  later system messages left out;
* the tools sent are the replayed tool set.

Pure apart from the records passed in: no I/O, no clock.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from pipeline.llm.wire import ToolDefinition
from pipeline.model.run_plan import PatchTexts
from pipeline.prompt.patch import Patch, frame_patch, section_patch
from pipeline.session.messages import AgentMessage, SystemMessage
from pipeline.session.system import SystemState, content_text, replay

Raw = Mapping[str, Any]


def tool_definitions(state: SystemState) -> tuple[ToolDefinition, ...]:
    """The tools a replay declares, as the converters send them."""
    return tuple(ToolDefinition(name=d["name"], description=d.get("description") or "",
                                parameters=d.get("parameters") or {}) for d in state.tools.values())


def declaration(tool: ToolDefinition) -> dict[str, Any]:
    """A tool as a system message declares it (name, description, a JSON copy of the schema)."""
    return {"name": tool.name, "description": tool.description, "parameters": json.loads(json.dumps(tool.parameters))}


def tool_changes(previous: Mapping[str, Mapping[str, Any]], current: Sequence[Mapping[str, Any]]
                 ) -> tuple[list[dict], list[dict]]:
    """(declarations new or changed, in ``current`` order; ``{name}`` of tools gone or changed,
    in ``previous`` order). A changed declaration is a removal plus an addition. Declarations
    are compared on what a tool declares here (name, description, parameters): keys another
    writer added (pi 1.x's ``constrainedSampling``) do not make a tool differ."""
    now = {d["name"]: d for d in current}
    same = lambda a, b: b is not None and _declared(a) == _declared(b)  # noqa: E731
    added = [dict(d) for d in current if not same(d, previous.get(d["name"]))]
    removed = [{"name": name} for name, d in previous.items() if not same(d, now.get(name))]
    return added, removed


def _declared(declaration: Mapping[str, Any]) -> str:
    return json.dumps([declaration.get(k) for k in ("name", "description", "parameters")])


def system_message(*, sections: Optional[Patch], added: Sequence[Mapping], removed: Sequence[Mapping],
                   timestamp: Any) -> dict[str, Any]:
    """A system message entry's message (keys in pi's order)."""
    message: dict[str, Any] = {"role": "system", "content": ""}
    if sections:
        message["sections"] = dict(sections)
    message["timestamp"] = timestamp
    if added:
        message["toolsAdded"] = [dict(d) for d in added]
    if removed:
        message["toolsRemoved"] = [dict(d) for d in removed]
    return message


def frame_update(message: SystemMessage | Raw, texts: PatchTexts) -> str:
    """A later system message as a model reading it mid-conversation gets it: its content
    (if any), then its section patch framed in the profile's words."""
    view = message if isinstance(message, SystemMessage) else SystemMessage(message)
    sections = view.sections
    parts = [content_text(view.content), frame_patch(sections, texts) if sections else ""]
    return texts.separator.join(p for p in parts if p)


@dataclass(frozen=True)
class RunOptions:
    """The render options of one run, as the host's hooks left them."""

    sections: Mapping[str, str] = field(default_factory=dict)
    guidelines: tuple[str, ...] = ()


class SystemLog:
    """The system messages on the session's current branch, and what to record next."""

    def __init__(self, messages: Iterable[AgentMessage | Raw] = ()) -> None:
        self.messages: list[AgentMessage | Raw] = list(messages)

    def replay(self) -> SystemState:
        return replay(self.messages)

    def next_message(self, record: Mapping[str, str], tools: Sequence[Mapping[str, Any]],
                     timestamp: Any) -> Optional[dict[str, Any]]:
        """The system message to record for a request with ``record`` and ``tools``, or ``None``
        when the replay already says exactly that (the first one holds everything)."""
        if not self.messages:
            if not record and not tools:
                return None
            return system_message(sections=dict(record), added=tools, removed=(), timestamp=timestamp)
        replayed = self.replay()
        patch = section_patch(replayed.record, record)
        added, removed = tool_changes(replayed.tools, tools)
        if patch is None and not added and not removed:
            return None
        return system_message(sections=patch, added=added, removed=removed, timestamp=timestamp)

    def leading(self, in_place: int) -> SystemState:
        """The replay of the system messages a mid-conversation model gets as its leading
        prompt: all but the last ``in_place`` (those sent where they were recorded)."""
        return replay(self.messages[:len(self.messages) - in_place] if in_place else self.messages)


class RecordedPrompt:
    """One conversation's recorded system prompt (``runtime.record_system_prompt``, pi 1.x):
    the system messages on its branch (:class:`SystemLog`), what to record before a
    request, and what a request is sent. :class:`~pipeline.runtime.conversation.Conversation`
    holds one and passes it what it reads."""

    def __init__(self, join: Optional[str], texts: Optional[PatchTexts], *, recording: bool) -> None:
        self.recording = recording
        self.join, self.texts = join, texts
        self.log = SystemLog()

    def in_place_for(self, mid_conversation_system: bool) -> bool:
        """Whether later system messages stay in the context, sent where they were recorded:
        exactly when the prompt is recorded and the model reads them mid-conversation."""
        return self.recording and mid_conversation_system

    def reset(self, messages: Iterable[AgentMessage]) -> None:
        """The system messages of a context read again from the session (after a compaction,
        its snapshot first)."""
        if self.recording:
            self.log = SystemLog(m for m in messages if isinstance(m, SystemMessage))

    def record(self, record: Mapping[str, str], tools: Sequence[Mapping[str, Any]], timestamp: Any,
               append: Callable[[dict[str, Any]], Any]) -> Optional[dict[str, Any]]:
        """Record what changed (``record``: the run's sections rendered; ``tools``: their
        declarations) against the replay: the new system message, handed to ``append``
        (which writes it), or ``None`` when nothing changed or nothing is recorded."""
        if not self.recording:
            return None
        message = self.log.next_message(record, tools, timestamp)
        if message is not None:
            append(message)
            self.log.messages.append(SystemMessage(message))
        return message

    def view(self, *, in_place: bool, sent_in_place: int) -> tuple[str, tuple[ToolDefinition, ...]]:
        """(system prompt, tools) of a request: with later system messages sent in place
        (``sent_in_place`` of them are in the context), the leading ones' prompt; else the
        whole replay's."""
        replayed = self.log.replay()
        if in_place:
            return self.log.leading(sent_in_place).prompt(self.join), tool_definitions(replayed)
        return replayed.prompt(self.join), tool_definitions(replayed)

    def update(self, *, in_place: bool) -> Optional[Callable[[Raw], str]]:
        """How the converters render a later system message (``None``: they are left out)."""
        texts = self.texts
        if not in_place or texts is None:
            return None
        return lambda message: frame_update(message, texts)
