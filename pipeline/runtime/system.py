"""Sessions that record the system prompt (``runtime.record_system_prompt``, pi 1.x).

The prompt and the tool set live in the session as ``system`` message entries: the first
prompt of a fresh session records the whole prompt (``content ""``, every section in
``sections``, the tool declarations in ``toolsAdded``) before the user's message; before
each later model request the sections a fresh render gives (the run's options, after the
host's hooks changed them) are compared with the *replay* of the recorded messages, and
what differs is recorded as a new system message (changed and removed sections, tools
added and removed); nothing when nothing changed. A session written without such entries
(pi 0.84.0) gets its whole prompt recorded mid-conversation, before the next user message.

What a provider is sent follows from the record (:class:`SystemLog`):

* a model that reads system messages mid-conversation (``ModelInfo.mid_conversation_system``)
  gets the leading system messages joined as its system prompt — unchanged for the whole
  session, so the cached prefix survives — and each later one in place, framed with the
  profile's ``system_prompt.patch`` words (:func:`frame_update`);
* any other model gets one system prompt holding the replay (:func:`replay_messages`),
  later system messages left out;
* the tools sent are the replayed tool set.

Pure apart from the records passed in: no I/O, no clock.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence

from pipeline.llm.convert import ToolDefinition
from pipeline.model.prompt import PatchTexts
from pipeline.prompt import render_sections, section_record
from pipeline.prompt.patch import Patch, frame_patch, join_record, section_patch
from pipeline.session.snapshot import content_text, replay_system

Raw = Mapping[str, Any]


@dataclass(frozen=True)
class SystemReplay:
    """What the system messages of a conversation add up to."""

    contents: tuple[str, ...] = ()
    record: Mapping[str, str] = field(default_factory=dict)
    tools: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # name → declaration

    def prompt(self, join: Optional[str]) -> str:
        """The one system prompt a model without mid-conversation system messages is sent."""
        return join_record(self.record, join, self.contents)

    def tool_definitions(self) -> tuple[ToolDefinition, ...]:
        return tuple(ToolDefinition(name=d["name"], description=d.get("description") or "",
                                    parameters=d.get("parameters") or {}) for d in self.tools.values())


def replay_messages(messages: Iterable[Raw]) -> SystemReplay:
    """Replay system messages in order (the session's rule: :func:`~pipeline.session.snapshot.replay_system`)."""
    state = replay_system(messages)
    return SystemReplay(state.contents, dict(state.sections), dict(state.tools))


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


def frame_update(message: Raw, texts: PatchTexts) -> str:
    """A later system message as a model reading it mid-conversation gets it: its content
    (if any), then its section patch framed in the profile's words."""
    sections = message.get("sections") or {}
    parts = [content_text(message.get("content")), frame_patch(sections, texts) if sections else ""]
    return texts.separator.join(p for p in parts if p)


def apply_sections(base: Mapping[str, str], changes: Mapping[str, Optional[str]]) -> dict[str, str]:
    """Caller sections after a hook's changes: a text sets the name (in place when known,
    else last), ``None`` removes it."""
    out = dict(base)
    for name, text in changes.items():
        if text is None:
            out.pop(name, None)
        else:
            out[name] = text
    return out


@dataclass(frozen=True)
class RunOptions:
    """The render options of one run, as the host's hooks left them."""

    sections: Mapping[str, str] = field(default_factory=dict)
    guidelines: tuple[str, ...] = ()


class SystemLog:
    """The system messages on the session's current branch, and what to record next."""

    def __init__(self, messages: Iterable[Raw] = ()) -> None:
        self.messages: list[Raw] = list(messages)

    def replay(self) -> SystemReplay:
        return replay_messages(self.messages)

    def next_message(self, record: Mapping[str, str], tools: Sequence[Mapping[str, Any]],
                     timestamp: Any) -> Optional[dict[str, Any]]:
        """The system message to record for a request with ``record`` and ``tools``, or ``None``
        when the replay already says exactly that (the first one holds everything)."""
        if not self.messages:
            if not record and not tools:
                return None
            return system_message(sections=dict(record), added=tools, removed=(), timestamp=timestamp)
        replay = self.replay()
        patch = section_patch(replay.record, record)
        added, removed = tool_changes(replay.tools, tools)
        if patch is None and not added and not removed:
            return None
        return system_message(sections=patch, added=added, removed=removed, timestamp=timestamp)

    def leading(self, in_place: int) -> SystemReplay:
        """The replay of the system messages a mid-conversation model gets as its leading
        prompt: all but the last ``in_place`` (those sent where they were recorded)."""
        return replay_messages(self.messages[:len(self.messages) - in_place] if in_place else self.messages)


class RecordedPrompt:
    """The conversation's part in recording the system prompt (mixed into
    :class:`~pipeline.runtime.conversation.Conversation`, whose state it reads)."""

    profile: Any
    recording: bool
    memory: Any
    system_log: SystemLog
    _options: RunOptions
    _run: Any

    def _match_model(self) -> None:
        """Keep later system messages in the context exactly when the current model reads them
        (a host may switch ``model``): the context is rebuilt from the session when that changes."""
        wanted = self.recording and self.model.mid_conversation_system  # type: ignore[attr-defined]
        if self.memory.keep_system != wanted:
            self.memory.keep_system = wanted
            self._sync()  # type: ignore[attr-defined]

    def _forced(self) -> bool:
        """A hook set the whole prompt of the current run."""
        return self._run is not None and self._run.override is not None

    def record_system_prompt(self) -> Optional[dict]:
        """Record what changed in the system prompt (the run's options rendered, against the
        replay of the recorded system messages) as a system message entry; ``None`` when
        nothing did (or the profile does not record the prompt)."""
        if not self.recording:
            return None
        record = section_record(render_sections(self.plan, self.render_context(self._options)))  # type: ignore[attr-defined]
        tools = [declaration(t) for t in self.tool_definitions()]  # type: ignore[attr-defined]
        message = self.system_log.next_message(record, tools, self._now())  # type: ignore[attr-defined]
        if message is not None:
            self._append(message)  # type: ignore[attr-defined]
            self.system_log.messages.append(message)
        return message

    def _recorded_view(self) -> tuple[str, tuple[ToolDefinition, ...]]:
        """(system prompt, tools) the recorded system messages give this conversation's model:
        the leading ones' prompt when later ones are sent in place, else the whole replay."""
        join = self.profile.system_prompt.join
        replay = self.system_log.replay()
        if self.memory.keep_system:
            return self.system_log.leading(self.memory.system_in_llm).prompt(join), replay.tool_definitions()
        return replay.prompt(join), replay.tool_definitions()

    def _system_update(self) -> Any:
        """How the converters render a later system message (``None``: they are left out)."""
        texts = self.profile.system_prompt.patch
        if not self.memory.keep_system or texts is None:
            return None
        return lambda message: frame_update(message, texts)
