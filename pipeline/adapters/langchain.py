"""LangChain v1: the profile as an ``AgentMiddleware`` (``pip install 'context-pipeline[langchain]'``).

::

    from pipeline.adapters.langchain import ProfileMiddleware

    middleware = ProfileMiddleware.create("default", "chat.jsonl", context_window=200_000)
    agent = create_agent(model, tools=[...], middleware=[middleware])
    state = agent.invoke({"messages": [HumanMessage("hi")]})

``before_model`` records the new messages in the pi session and, when a run starts (the
state ends with a user message), runs the profile's compaction check; when it compacts, the
state's messages become the summary message and the kept messages. ``wrap_model_call``
sets the system message to the profile's prompt for the tools of that request (a system
prompt given to ``create_agent`` follows it). ``after_agent`` records the final reply.

A model call that fails with a context overflow is recovered inside ``wrap_model_call``
the way our own loop does it (:meth:`ContextBridge.recover`): the failed reply is recorded,
the session compacted, and the call made again with the summary message, the kept messages
and the request's pending prompt or tool results, at most ``compaction.overflow_retries``
times (then the error propagates out of ``invoke``). The answer comes back as an
``ExtendedModelResponse`` whose command replaces the state's messages with that context and
the answer, so the rest of the run and the state the caller gets are compacted too.
"""

from __future__ import annotations

import uuid
from typing import Any, Iterable, Optional

from pipeline.adapters._bridge import JSON, BridgeAdapter, ContextBridge, require, text_of, usage_json

require("langchain.agents", "langchain")

from langchain.agents.middleware import AgentMiddleware  # noqa: E402
from langchain.agents.middleware.types import ExtendedModelResponse, ModelResponse  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, SystemMessage, ToolMessage  # noqa: E402
from langgraph.graph.message import REMOVE_ALL_MESSAGES  # noqa: E402
from langgraph.types import Command  # noqa: E402

__all__ = ["ProfileMiddleware", "from_pi", "to_pi"]


class ProfileMiddleware(AgentMiddleware, BridgeAdapter):
    """The profile's system prompt and compaction policy for ``create_agent``."""

    def __init__(self, bridge: ContextBridge) -> None:
        super().__init__()
        self.bridge = bridge
        self._known: set[str] = set()


    def before_model(self, state: Any, runtime: Any) -> Optional[dict[str, Any]]:
        messages = list(state["messages"])
        new = [m for m in messages if m.id not in self._known]
        self._known.update(m.id for m in new)
        run_start = bool(new) and isinstance(new[-1], HumanMessage)
        earlier, prompt = (new[:-1], new[-1:]) if run_start else (new, [])
        context = self.bridge.sync(to_pi(earlier, self.bridge), to_pi(prompt, self.bridge) if run_start else None)
        if context is None:
            return None
        kept = from_pi(context[:-1]) + prompt
        self._known = {m.id for m in kept}
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *kept]}

    def after_agent(self, state: Any, runtime: Any) -> None:
        new = [m for m in state["messages"] if m.id not in self._known]
        self._known.update(m.id for m in new)
        self.bridge.sync(to_pi(new, self.bridge))
        return None

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        request, kept = self._with_prompt(request), None
        while True:
            try:
                return self._replacing(handler(request), kept)
            except Exception as err:
                request, kept = self._recovered(request, err)

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        request, kept = self._with_prompt(request), None
        while True:
            try:
                return self._replacing(await handler(request), kept)
            except Exception as err:
                request, kept = self._recovered(request, err)

    def _recovered(self, request: Any, error: Exception) -> tuple[Any, list[Any]]:
        """After an overflow: the request again with the compacted context (else re-raise)."""
        context = self.bridge.recover(error)
        if context is None:
            raise error
        pending = _pending(request.messages)
        kept = from_pi(context[:len(context) - len(pending)]) + pending
        self._known = {m.id for m in kept}
        return request.override(messages=kept), kept

    def _replacing(self, response: Any, kept: Optional[list[Any]]) -> Any:
        """The answer, with a command that makes ``kept`` and it the state's messages."""
        if kept is None or isinstance(response, ExtendedModelResponse):
            return response
        if isinstance(response, AIMessage):
            response = ModelResponse(result=[response])
        update = {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *kept, *response.result]}
        return ExtendedModelResponse(model_response=response, command=Command(update=update))

    def _with_prompt(self, request: Any) -> Any:
        tools = [t["name"] if isinstance(t, dict) else t.name for t in request.tools]
        prompt = self.bridge.system_prompt(tools)
        if request.system_message is not None and request.system_message.text:
            prompt = prompt + "\n\n" + request.system_message.text
        return request.override(system_message=SystemMessage(prompt))


def _pending(messages: Any) -> list[Any]:
    """The request's messages after its last reply (the prompt or the tool results it sends)."""
    messages = list(messages)
    last = max((i for i, m in enumerate(messages) if isinstance(m, AIMessage)), default=-1)
    return [m for m in messages[last + 1:] if isinstance(m, (HumanMessage, ToolMessage))]


# --------------------------------------------------------------------------- LangChain -> pi


def to_pi(messages: Iterable[Any], bridge: ContextBridge) -> list[JSON]:
    """LangChain messages as pi message JSON (system messages are left out: the profile
    gives the system prompt)."""
    out: list[JSON] = []
    for message in messages:
        if isinstance(message, AIMessage):
            out.append(_reply(message, bridge))
        elif isinstance(message, ToolMessage):
            out.append({"role": "toolResult", "toolCallId": message.tool_call_id, "toolName": message.name or "",
                        "content": [{"type": "text", "text": message.text}], "isError": message.status == "error",
                        "timestamp": bridge.now()})
        elif isinstance(message, HumanMessage):
            out.append({"role": "user", "content": [{"type": "text", "text": message.text}], "timestamp": bridge.now()})
    return out


def _reply(message: Any, bridge: ContextBridge) -> JSON:
    content: list[JSON] = [{"type": "text", "text": message.text}] if message.text else []
    content += [{"type": "toolCall", "id": c["id"], "name": c["name"], "arguments": c.get("args") or {}}
                for c in message.tool_calls]
    finish = (message.response_metadata or {}).get("finish_reason")
    stop = "length" if finish == "length" else ("toolUse" if message.tool_calls else "stop")
    return {"role": "assistant", "content": content, **bridge.reply_fields(), "usage": _usage(message.usage_metadata),
            "stopReason": stop, "timestamp": bridge.now()}


def _usage(usage: Any) -> JSON:
    usage = usage or {}
    details = usage.get("input_token_details") or {}
    read, write = details.get("cache_read") or 0, details.get("cache_creation") or 0
    return usage_json(max((usage.get("input_tokens") or 0) - read - write, 0), usage.get("output_tokens") or 0,
                      read, write)


# --------------------------------------------------------------------------- pi -> LangChain


def from_pi(messages: Iterable[JSON]) -> list[Any]:
    """pi LLM messages (user, assistant, toolResult) as LangChain messages, each with an id."""
    out: list[Any] = []
    for message in messages:
        role, text, mid = message.get("role"), text_of(message.get("content")), str(uuid.uuid4())
        if role == "assistant":
            calls = [{"id": b.get("id"), "name": b.get("name"), "args": b.get("arguments") or {}, "type": "tool_call"}
                     for b in message.get("content") or () if b.get("type") == "toolCall"]
            out.append(AIMessage(content=text, tool_calls=calls, id=mid, usage_metadata=_metadata(message)))
        elif role == "toolResult":
            out.append(ToolMessage(content=text, tool_call_id=message.get("toolCallId"), name=message.get("toolName"),
                                   status="error" if message.get("isError") else "success", id=mid))
        else:
            out.append(HumanMessage(content=text, id=mid))
    return out


def _metadata(message: JSON) -> Any:
    u = message.get("usage") or {}
    prompt = u.get("input", 0) + u.get("cacheRead", 0) + u.get("cacheWrite", 0)
    return {"input_tokens": prompt, "output_tokens": u.get("output", 0), "total_tokens": prompt + u.get("output", 0),
            "input_token_details": {"cache_read": u.get("cacheRead", 0), "cache_creation": u.get("cacheWrite", 0)}}
