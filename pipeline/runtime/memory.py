"""The conversation's in-memory context, kept incrementally (pi's ``agent.state.messages``).

:class:`Memory` holds the agent messages (as the session projection gives them, then
each message as it is recorded), their LLM form (``convertToLlm`` of each) and, per wire
format, the provider messages of everything before the last user message. A request
converts only the messages since then (one run), so its cost does not grow with the
length of the session; :meth:`Memory.reset` rebuilds everything after a compaction or a
move in the tree.

The cut at a user message is exact: the provider conversion carries state from one
message to the next (tool calls waiting for results, renamed tool-call ids) only until
the next user message, where it starts afresh.

With ``keep_system`` (a session that records its system prompt, sent to a model that reads
system messages mid-conversation) a recorded ``system`` message is kept in the LLM list at
its place, except a leading one (the first message, before any LLM message), which is
the leading system prompt (:attr:`Memory.leading_system`). Without it, system messages have no LLM
form (the replay of all of them is the request's one system prompt).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional, Sequence

from pipeline.gcpause import gc_paused
from pipeline.session.messages import AgentMessage, AssistantMessage, SystemMessage
from pipeline.session.projection import convert_to_llm
from pipeline.model.run_plan import ContextTexts

#: A converter of LLM messages (JSON) to provider messages: ``messages → list``.
Convert = Callable[[Sequence[dict]], list]


class _WireCache:
    __slots__ = ("upto", "messages")

    def __init__(self) -> None:
        self.upto = 0  # llm[:upto] are converted (upto is 0 or the index of a user message)
        self.messages: list = []


class Memory:
    """Agent messages, their LLM JSON and per-wire converted prefixes."""

    def __init__(self, texts: ContextTexts, messages: Iterable[AgentMessage] = (), *, keep_system: bool = False) -> None:
        self._texts = texts
        self.keep_system = keep_system
        self.reset(messages)

    def reset(self, messages: Iterable[AgentMessage]) -> None:
        """Start over from ``messages`` (the session context)."""
        self.agent: list[AgentMessage] = []
        self.llm: list[dict] = []
        self._llm_of: list[int] = []  # index into llm of agent[i], or -1 when it has no LLM form
        self._last_user = 0
        self._tool_history = False
        self._wires: dict[str, _WireCache] = {}
        self.leading_system: list[dict] = []  # system messages before any LLM message (keep_system)
        self.system_in_llm = 0  # how many system messages the LLM list holds
        with gc_paused(promote=True):  # built once and kept: not worth the collector's scans
            for message in messages:
                self.push(message)

    # ----------------------------------------------------------------- changes

    def push(self, message: AgentMessage) -> None:
        """Append one message (and its LLM form, if it has one)."""
        self.agent.append(message)
        if self.keep_system and isinstance(message, SystemMessage):
            self._push_system(dict(message.raw))
            return
        converted = convert_to_llm((message,), self._texts)
        if not converted:
            self._llm_of.append(-1)
            return
        raw = dict(converted[0].raw)
        self._llm_of.append(len(self.llm))
        if raw.get("role") == "user":
            self._last_user = len(self.llm)
        elif raw.get("role") == "toolResult" or _has_tool_call(raw):
            self._tool_history = True
        self.llm.append(raw)

    def _push_system(self, raw: dict) -> None:
        if not self.llm and not self.leading_system:  # only a first message leads (pi-ai's initial system message)
            self.leading_system.append(raw)
            self._llm_of.append(-1)
            return
        self._llm_of.append(len(self.llm))
        self.llm.append(raw)
        self.system_in_llm += 1

    def drop_failed_reply(self) -> None:
        """Remove the last message when it is a reply that failed (``error``) or was cut (``length``):
        a compaction that retries sends the request again without it (it stays in the session)."""
        last = self.agent[-1] if self.agent else None
        if isinstance(last, AssistantMessage) and last.stop_reason in ("error", "length"):
            self.drop_last_reply()

    def drop_last_reply(self) -> Optional[AgentMessage]:
        """Remove the last message when it is an assistant reply (it stays in the session)."""
        if not self.agent or not isinstance(self.agent[-1], AssistantMessage):
            return None
        message = self.agent.pop()
        if self._llm_of.pop() >= 0:
            self.llm.pop()
        return message

    # ----------------------------------------------------------------- reading

    def last_assistant(self) -> Optional[AssistantMessage]:
        """The last assistant message in memory (aborted and failed ones included)."""
        return next((m for m in reversed(self.agent) if isinstance(m, AssistantMessage)), None)

    @property
    def has_tool_history(self) -> bool:
        return self._tool_history

    def wire_messages(self, wire: str, convert: Convert) -> tuple[list, Sequence[dict]]:
        """(provider messages of everything before the last user message, the LLM messages
        from it on); ``convert`` turns a run of LLM messages into provider messages."""
        cache = self._wires.setdefault(wire, _WireCache())
        if cache.upto < self._last_user:
            with gc_paused(promote=True):
                cache.messages.extend(convert(self.llm[cache.upto:self._last_user]))
            cache.upto = self._last_user
        return cache.messages, self.llm[cache.upto:]


def _has_tool_call(raw: dict[str, Any]) -> bool:
    content = raw.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "toolCall" for b in content)

