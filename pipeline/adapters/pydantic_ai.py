"""pydantic-ai: the profile as a capability (``pip install 'context-pipeline[pydantic-ai]'``).

::

    from pipeline.adapters.pydantic_ai import ProfileCapability

    capability = ProfileCapability.create("default", "chat.jsonl", context_window=200_000)
    agent = Agent(model, tools=[...], capabilities=[capability])
    result = agent.run_sync("hi")
    result = agent.run_sync("more", message_history=result.all_messages())

Before every model request the capability (1) sets the request's instructions to the
profile's system prompt for the function tools that request really carries (the agent's
own instructions follow it), and (2) records the new messages in the pi session; at the
first request of a run it runs the profile's compaction check and, when it compacts,
replaces the run's history with the summary message and the kept messages.

A model call that fails with a context overflow is recovered the way our own loop does it
(:meth:`ContextBridge.recover`), inside the call: ``before_model_request`` hands the request
a wrapper of the run's model whose ``request`` and ``request_stream`` catch the refusal
(a streamed call is refused when its stream opens, before any event); the failed reply is
recorded, the session compacted, the run's history replaced, and the wrapped model called
again with the compacted messages (the request's settings and parameters, the pending
request as the framework built it), at most ``compaction.overflow_retries`` times; after
that the error reaches the agent's caller. Not in ``on_model_request_error``: pydantic-ai
2.54, the last release for Python 3.10, calls it for no streamed request and has no
``RetryModelRequest``; the same code runs on 2.54 and on the newest release.
"""

from __future__ import annotations

import json
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any, AsyncIterator, Iterable, Optional

from pipeline.adapters._bridge import JSON, BridgeAdapter, ContextBridge, require, text_of, usage_json

require("pydantic_ai", "pydantic-ai")

from pydantic_ai import messages as pm  # noqa: E402
from pydantic_ai.capabilities import AbstractCapability  # noqa: E402
from pydantic_ai.models.wrapper import WrapperModel  # noqa: E402
from pydantic_ai.usage import RequestUsage  # noqa: E402

__all__ = ["ProfileCapability", "from_pi", "to_pi"]


@dataclass
class ProfileCapability(AbstractCapability[Any], BridgeAdapter):
    """The profile's instructions and compaction policy for a pydantic-ai agent."""

    bridge: ContextBridge
    _known: int = 0


    @classmethod
    def get_serialization_name(cls) -> Optional[str]:
        return None

    async def before_model_request(self, ctx: Any, request_context: Any) -> Any:
        self._compact(ctx, request_context)
        params = request_context.model_request_parameters
        tools = [tool.name for tool in params.function_tools]
        ours = pm.InstructionPart(self.bridge.system_prompt(tools), dynamic=True)
        parts = [ours, *(params.instruction_parts or [])]
        request_context.model_request_parameters = replace(params, instruction_parts=parts)
        if not isinstance(request_context.model, _Recovering):
            request_context.model = _Recovering(request_context.model, self, ctx)
        return request_context

    async def after_run(self, ctx: Any, *, result: Any) -> Any:
        """Record the run's last messages (its final reply) in the session."""
        history = list(result.all_messages())
        self.bridge.sync(to_pi(history[self._known:], self.bridge))
        self._known = len(history)
        return result

    def _recovered(self, ctx: Any, error: Exception, model: Any, parameters: Any) -> list[Any]:
        """After a failed call: the compacted history to call ``model`` with (prepared as the
        framework prepares a request's messages), the run's history replaced by it; or
        ``error`` raised when it is no overflow or the retries are used up."""
        context = self.bridge.recover(error)
        if context is None:
            raise error
        current = ctx.messages[-1]  # the request that failed: kept as the framework built it
        history = from_pi(context[:len(context) - _pi_count(current)]) + [current]
        ctx.messages[:] = history
        self._known = len(history)
        return model.prepare_messages(pm.repair_messages(history), parameters)

    def _compact(self, ctx: Any, request_context: Any) -> None:
        history = list(ctx.messages)
        if len(history) < self._known:
            self._known = 0
        new = history[self._known:]
        run_start = bool(new) and _is_prompt(new[-1])
        earlier, prompt = (new[:-1], new[-1:]) if run_start else (new, [])
        context = self.bridge.sync(to_pi(earlier, self.bridge), to_pi(prompt, self.bridge) if run_start else None)
        if context is None:
            self._known = len(history)
            return
        messages = from_pi(context[:-1]) + prompt
        ctx.messages[:] = messages
        request_context.messages = list(messages)
        self._known = len(messages)


class _Recovering(WrapperModel):
    """The run's model for one request: a call (streamed or not) refused with a context
    overflow is recovered by :meth:`ProfileCapability._recovered` and made again with the
    compacted history, until it succeeds or the bridge gives up (then the error is raised).
    A streamed call is refused when its stream is opened, before any event: the stream is
    opened again here, in the task that consumes it."""

    def __init__(self, wrapped: Any, capability: ProfileCapability, ctx: Any) -> None:
        super().__init__(wrapped)
        self._capability, self._ctx = capability, ctx

    async def request(self, messages: Any, model_settings: Any, model_request_parameters: Any) -> Any:
        while True:
            try:
                return await self.wrapped.request(messages, model_settings, model_request_parameters)
            except Exception as error:
                messages = self._capability._recovered(self._ctx, error, self.wrapped, model_request_parameters)

    @asynccontextmanager
    async def request_stream(self, messages: Any, model_settings: Any, model_request_parameters: Any,
                             run_context: Any = None) -> AsyncIterator[Any]:
        async with AsyncExitStack() as stack:
            while True:
                try:
                    stream = await stack.enter_async_context(
                        self.wrapped.request_stream(messages, model_settings, model_request_parameters, run_context))
                    break
                except Exception as error:
                    messages = self._capability._recovered(self._ctx, error, self.wrapped, model_request_parameters)
            yield stream


def _pi_count(message: Any) -> int:
    """How many pi messages :func:`to_pi` makes of one pydantic-ai request."""
    kinds = (pm.UserPromptPart, pm.ToolReturnPart, pm.RetryPromptPart)
    return 0 if isinstance(message, pm.ModelResponse) else sum(isinstance(p, kinds) for p in message.parts)


def _is_prompt(message: Any) -> bool:
    return isinstance(message, pm.ModelRequest) and any(isinstance(p, pm.UserPromptPart) for p in message.parts)


# --------------------------------------------------------------------------- pydantic-ai -> pi


def to_pi(messages: Iterable[Any], bridge: ContextBridge) -> list[JSON]:
    """pydantic-ai messages as pi message JSON (system prompt parts are left out: the
    profile gives the system prompt)."""
    out: list[JSON] = []
    for message in messages:
        if isinstance(message, pm.ModelResponse):
            out.append(_reply(message, bridge))
        else:
            out.extend(_request(message, bridge))
    return out


def _request(message: Any, bridge: ContextBridge) -> list[JSON]:
    out: list[JSON] = []
    for part in message.parts:
        if isinstance(part, pm.UserPromptPart):
            text = part.content if isinstance(part.content, str) else "".join(c for c in part.content if isinstance(c, str))
            out.append({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": bridge.now()})
        elif isinstance(part, pm.ToolReturnPart):
            out.append(_result(part.tool_call_id, part.tool_name, part.model_response_str(), False, bridge))
        elif isinstance(part, pm.RetryPromptPart):
            if part.tool_name:
                out.append(_result(part.tool_call_id, part.tool_name, part.model_response(), True, bridge))
            else:
                out.append({"role": "user", "content": [{"type": "text", "text": part.model_response()}],
                            "timestamp": bridge.now()})
    return out


def _result(call_id: str, name: str, text: str, error: bool, bridge: ContextBridge) -> JSON:
    return {"role": "toolResult", "toolCallId": call_id, "toolName": name,
            "content": [{"type": "text", "text": text}], "isError": error, "timestamp": bridge.now()}


def _reply(message: Any, bridge: ContextBridge) -> JSON:
    content: list[JSON] = []
    for part in message.parts:
        if isinstance(part, pm.ThinkingPart):
            content.append({"type": "thinking", "thinking": part.content})
        elif isinstance(part, pm.TextPart):
            content.append({"type": "text", "text": part.content})
        elif isinstance(part, pm.ToolCallPart):
            content.append({"type": "toolCall", "id": part.tool_call_id, "name": part.tool_name,
                            "arguments": part.args_as_dict()})
    calls = any(b["type"] == "toolCall" for b in content)
    stop = "length" if message.finish_reason == "length" else ("toolUse" if calls else "stop")
    return {"role": "assistant", "content": content, **bridge.reply_fields(), "usage": _usage(message.usage),
            "stopReason": stop, "timestamp": bridge.now()}


def _usage(usage: Any) -> JSON:
    read, write = usage.cache_read_tokens or 0, usage.cache_write_tokens or 0
    return usage_json(max((usage.input_tokens or 0) - read - write, 0), usage.output_tokens or 0, read, write)


# --------------------------------------------------------------------------- pi -> pydantic-ai


def from_pi(messages: Iterable[JSON]) -> list[Any]:
    """pi LLM messages (user, assistant, toolResult) as pydantic-ai messages; consecutive
    tool results share one request, as pydantic-ai sends them."""
    out: list[Any] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            out.append(_response(message))
            continue
        part = _part(message)
        if role == "toolResult" and out and isinstance(out[-1], pm.ModelRequest) and _results_only(out[-1]):
            out[-1] = pm.ModelRequest(parts=[*out[-1].parts, part])
        else:
            out.append(pm.ModelRequest(parts=[part]))
    return out


def _results_only(request: Any) -> bool:
    return all(isinstance(p, (pm.ToolReturnPart, pm.RetryPromptPart)) for p in request.parts)


def _part(message: JSON) -> Any:
    text = text_of(message.get("content"))
    if message.get("role") != "toolResult":
        return pm.UserPromptPart(text)
    if message.get("isError"):
        return pm.RetryPromptPart(text, tool_name=message.get("toolName"), tool_call_id=message.get("toolCallId"))
    return pm.ToolReturnPart(message.get("toolName"), text, tool_call_id=message.get("toolCallId"))


def _response(message: JSON) -> Any:
    parts: list[Any] = []
    for block in message.get("content") or ():
        kind = block.get("type")
        if kind == "text":
            parts.append(pm.TextPart(block.get("text") or ""))
        elif kind == "thinking":
            parts.append(pm.ThinkingPart(block.get("thinking") or ""))
        elif kind == "toolCall":
            parts.append(pm.ToolCallPart(block.get("name"), json.dumps(block.get("arguments") or {}),
                                         tool_call_id=block.get("id")))
    u = message.get("usage") or {}
    usage = RequestUsage(input_tokens=u.get("input", 0) + u.get("cacheRead", 0) + u.get("cacheWrite", 0),
                         output_tokens=u.get("output", 0), cache_read_tokens=u.get("cacheRead", 0),
                         cache_write_tokens=u.get("cacheWrite", 0))
    return pm.ModelResponse(parts=parts, usage=usage, model_name=message.get("model"))
