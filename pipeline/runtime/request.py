"""What a conversation hands its host: the next model request (:class:`ModelRequest`, its
provider body built by :func:`wire_parts`) and, after a reply is recorded, what to do next
(:class:`Next`)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import Any, Callable, Literal, Optional, Sequence

from pipeline.llm.wire import ConvertTexts, ToolDefinition, anthropic_messages, openai_messages
from pipeline.llm.wire import to_anthropic_messages, to_openai_chat
from pipeline.runtime.host import ModelInfo
from pipeline.runtime.memory import Memory
from pipeline.session.messages import AssistantMessage, ToolCall

Action = Literal["tools", "retry", "compact", "stop", "fail"]
Wire = Literal["openai", "anthropic"]


@dataclass(frozen=True)
class Next:
    """What the host does after :meth:`Conversation.record`.

    ``tools``: run ``tool_calls`` and record each result, then request again; ``retry``:
    wait ``delay_ms`` and request again (the failed reply already left the context);
    ``compact``: call :meth:`Conversation.auto_compact` (``reason`` threshold/overflow;
    ``retry``: the request is sent again afterwards); ``stop``: the run is over;
    ``fail``: the run is over with ``error``.
    """

    action: Action
    reply: AssistantMessage
    tool_calls: tuple[ToolCall, ...] = ()
    delay_ms: float = 0
    reason: Optional[str] = None
    retry: bool = False
    error: Optional[str] = None


class ModelRequest:
    """One model request: the system prompt, the tools, the model, and (built on first
    access, so a request costs the same whatever the session's length) the projected
    ``messages`` (pi's LLM messages) and, when a wire format was asked for, the provider
    ``body``. Both are snapshots of the request as made (until the next prompt, which may
    drop a failed reply)."""

    def __init__(self, system_prompt: str, tools: tuple[ToolDefinition, ...], model: ModelInfo,
                 llm: list[Any], count: int, wire: Optional[str] = None,
                 parts: Optional[tuple[Any, ...]] = None) -> None:
        self.system_prompt, self.tools, self.model, self.wire = system_prompt, tools, model, wire
        self.message_count = count
        self._llm, self._parts = llm, parts
        self._messages: Optional[list[Any]] = None
        self._body: Optional[dict[str, Any]] = None

    @property
    def messages(self) -> list[Any]:
        if self._messages is None:
            self._messages = self._llm[:self.message_count]
        return self._messages

    @property
    def body(self) -> Optional[dict[str, Any]]:
        if self._body is None and self._parts is not None:
            body, head, prefix, upto = self._parts
            own = body["messages"]
            messages = own[:head]  # one copy of the prefix's references, no intermediate lists
            messages.extend(prefix if upto == len(prefix) else islice(prefix, upto))
            messages.extend(own[head:] if head else own)
            body["messages"] = messages
            self._body, self._parts = body, None
        return self._body


def wire_parts(wire: str, memory: Memory, llm: list[Any], *, system: str, tools: tuple[ToolDefinition, ...],
               model: ModelInfo, texts: ConvertTexts, update: Any, thinking_level: Optional[str]) -> tuple[Any, ...]:
    """The provider body of a request in ``wire`` (``openai`` chat completions, ``anthropic``
    messages) as :class:`ModelRequest` joins it on first access: (the body with the tail's
    messages, where the prefix goes, the prefix, its length). The prefix is the memory's
    converted messages (:meth:`Memory.wire_messages`), unless ``llm`` is not the memory's (a
    forced prompt) or Anthropic may hold a system message past a cut."""
    target = model.target()
    reasoning = thinking_level if model.reasoning and thinking_level not in (None, "off") else None

    def split(convert: Callable[[Sequence[Any]], list[Any]]) -> tuple[list[Any], Sequence[Any]]:
        if llm is not memory.llm or (wire == "anthropic" and memory.system_in_llm):
            return [], llm
        return memory.wire_messages(wire, convert)

    if wire == "openai":
        prefix, tail = split(lambda m: openai_messages(m, system_prompt=None, model=target, texts=texts,
                                                       system_update=update))
        body = to_openai_chat(tail, system_prompt=system, tools=tools, model=target, texts=texts,
                              reasoning_effort=reasoning, system_update=update)
        head = 1 if system else 0
    elif wire == "anthropic":
        prefix, tail = split(lambda m: anthropic_messages(m, model=target, texts=texts, system_update=update))
        body = to_anthropic_messages(tail, system_prompt=system, tools=tools, model=target, texts=texts,
                                     system_update=update)
        head = 0
    else:
        raise ValueError(f"unknown wire format {wire!r}; expected openai or anthropic")
    if not tools and memory.has_tool_history and wire == "openai":
        body["tools"] = []
    return body, head, prefix, len(prefix)
