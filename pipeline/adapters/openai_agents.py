"""The OpenAI Agents SDK: instructions, an input filter and a pi session (``pip install 'context-pipeline[openai-agents]'``).

::

    from pipeline.adapters.openai_agents import ProfileSession

    session = ProfileSession.create("default", "chat.jsonl", context_window=200_000)
    agent = Agent(name="coder", instructions=session.instructions, tools=[...])
    result = Runner.run_sync(agent, "hi", session=session, run_config=session.run_config())

* ``session.instructions``: dynamic instructions, the profile's system prompt for the tools
  the agent really has (``agent.get_all_tools``);
* ``session.input_filter`` (``RunConfig.call_model_input_filter``; ``run_config()`` sets
  it): puts the profile's prompt first in every call's instructions, for the tools of that
  call, when an agent keeps instructions of its own (they follow it);
* the :class:`ProfileSession` itself (the SDK's ``Session`` protocol): the items are stored
  as pi 0.84.0 JSONL; after a turn that ends a run, the profile's compaction check runs
  and may compact, so the next ``get_items`` returns the summary message and the kept items.
  The threshold reads each reply's usage from the run's per-request usage (the SDK hands
  its context wrapper to sessions whose methods take ``wrapper``); items carry none;
* ``session.model(inner)``: the agent's model wrapped in a :class:`ProfileModel` (the SDK's
  ``Model`` interface), which recovers from a context overflow the way our own loop does
  (:meth:`ContextBridge.recover`): the failed reply is recorded, the session compacted and
  the call made again with the summary, the kept items and the call's pending prompt or
  tool outputs, at most ``compaction.overflow_retries`` times (then the error propagates
  out of ``Runner.run``); the run's later calls send the compacted items too. The SDK's
  error handlers (``max_turns``, refusals, invalid output) and its retry policies (the same
  request again) cannot change a call's input, so the wrapping model is the hook.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

from pipeline.adapters._bridge import JSON, BridgeAdapter, ContextBridge, require, usage_json
from pipeline.llm.wire import responses

require("agents", "openai-agents")

from agents import RunConfig  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.models.fake_id import FAKE_RESPONSES_ID  # noqa: E402
from agents.run_config import ModelInputData  # noqa: E402

__all__ = ["ProfileModel", "ProfileSession", "from_pi", "to_pi"]


class ProfileSession(BridgeAdapter):
    """A pi JSONL session behind the SDK's ``Session`` protocol, with the profile's policy."""

    session_settings = None

    def __init__(self, bridge: ContextBridge) -> None:
        self.bridge = bridge
        self.session_id = str(bridge.session.header.raw.get("id"))
        self._names: dict[str, str] = {}


    # ------------------------------------------------------------------ Session protocol

    async def get_items(self, limit: Optional[int] = None, wrapper: Any = None) -> list[Any]:
        items = from_pi(m.raw for m in self.bridge.pipeline.project(self.bridge.session).messages)
        return items if limit is None else items[-limit:] if limit > 0 else []

    async def add_items(self, items: list[Any], wrapper: Any = None) -> None:
        messages = to_pi(items, self.bridge, self._names, _usages(wrapper))
        self.bridge.sync(messages)
        if messages and _ends_run(messages[-1]):
            self.bridge.after_run()

    async def pop_item(self, wrapper: Any = None) -> Any:
        branch = self.bridge.session.path_to()
        if not branch:
            return None
        last = branch[-1]
        self.bridge.session.branch(last.parent_id) if last.parent_id else self.bridge.session.reset_leaf()
        message = getattr(last, "message", None)
        items = from_pi([message.raw]) if message is not None else []
        return items[-1] if items else None

    async def clear_session(self, wrapper: Any = None) -> None:
        self.bridge.session.reset_leaf()

    # ------------------------------------------------------------------ instructions and filter

    async def instructions(self, ctx: Any, agent: Any) -> str:
        """Dynamic instructions: the profile's prompt for the agent's tools."""
        tools = await agent.get_all_tools(ctx)
        return self.bridge.system_prompt([t.name for t in tools])

    async def input_filter(self, data: Any) -> Any:
        """``RunConfig.call_model_input_filter``: the profile's prompt first in the instructions."""
        tools = [t.name for t in getattr(data.agent, "tools", ()) or ()]
        prompt = self.bridge.system_prompt(tools)
        own = data.model_data.instructions
        instructions = prompt if not own or own == prompt else prompt + "\n\n" + own
        return ModelInputData(input=data.model_data.input, instructions=instructions)

    def run_config(self, **settings: Any) -> Any:
        """A ``RunConfig`` with :meth:`input_filter` (``settings``: its other fields)."""
        return RunConfig(call_model_input_filter=self.input_filter, **settings)

    def model(self, inner: Any) -> "ProfileModel":
        """``inner`` (an SDK ``Model``) with overflow recovery on this session."""
        return ProfileModel(inner, self.bridge)


class ProfileModel(Model):
    """An SDK ``Model`` around another that recovers from context overflows (module docstring)."""

    def __init__(self, inner: Any, bridge: ContextBridge) -> None:
        self.inner, self.bridge = inner, bridge
        self._swap: Optional[tuple[list[Any], list[Any]]] = None

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
        raw = _items(input)
        input = self._swapped(raw)
        while True:
            try:
                return await self.inner.get_response(system_instructions, input, *args, **kwargs)
            except Exception as err:
                input = self._recovered(raw, input, err)

    async def stream_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> Any:
        raw = _items(input)
        input = self._swapped(raw)
        while True:
            started = False
            try:
                async for event in self.inner.stream_response(system_instructions, input, *args, **kwargs):
                    started = True
                    yield event
                return
            except Exception as err:
                if started:  # events reached the runner: too late to send the call again
                    raise
                input = self._recovered(raw, input, err)

    def get_retry_advice(self, request: Any) -> Any:
        return self.inner.get_retry_advice(request)

    async def close(self) -> None:
        await self.inner.close()

    def _swapped(self, raw: list[Any]) -> list[Any]:
        """The call's input, the items a recovery compacted replaced by their context."""
        if self._swap is not None and raw[:len(self._swap[0])] == self._swap[0]:
            return self._swap[1] + raw[len(self._swap[0]):]
        return raw

    def _recovered(self, raw: list[Any], input: list[Any], error: Exception) -> list[Any]:
        """After an overflow: the input to send again, compacted (else re-raise)."""
        context = self.bridge.recover(error)
        if context is None:
            raise error
        pending = _pending(input)
        items = from_pi(context[:len(context) - len(pending)]) + pending
        self._swap = (raw, items)  # later calls of the run start with `raw`: they send `items` instead
        return items


def _items(input: Any) -> list[Any]:
    return [{"role": "user", "content": input}] if isinstance(input, str) else list(input)


def _pending(items: list[Any]) -> list[Any]:
    """The input's items after the last reply: the prompt or the tool outputs the call sends."""
    out: list[Any] = []
    for item in reversed(items):
        data = item if isinstance(item, dict) else item.model_dump(exclude_unset=True)
        if data.get("type") != "function_call_output" and data.get("role") != "user":
            break
        out.insert(0, item)
    return out


def _usages(wrapper: Any) -> list[Any]:
    usage = getattr(wrapper, "usage", None)
    return list(getattr(usage, "request_usage_entries", None) or ())


def _ends_run(message: JSON) -> bool:
    return message.get("role") == "assistant" and not any(b.get("type") == "toolCall" for b in message["content"])


# --------------------------------------------------------------------------- items -> pi


def to_pi(items: Iterable[Any], bridge: ContextBridge, names: dict[str, str], usages: list[Any] = ()) -> list[JSON]:
    """Responses input items as pi message JSON (each item read by :mod:`pipeline.llm.wire.responses`):
    a reply's message and function calls make
    one assistant message; ``usages`` (the run's per-request usage) are given to the replies
    of this batch from the end; ``names`` maps call ids to tool names across batches."""
    out: list[JSON] = []
    for item in items:
        item = item if isinstance(item, dict) else item.model_dump(exclude_unset=True)
        kind = item.get("type", "message")
        if kind in responses.REPLY_TYPES and item.get("role", "assistant") == "assistant":
            reply = out[-1] if out and out[-1].get("role") == "assistant" and out[-1].get("_open") else None
            if reply is None:
                reply = {"role": "assistant", "content": [], "_open": True}
                out.append(reply)
            reply["content"].extend(responses.reply_blocks(item, names))
        elif kind == "function_call_output":
            call = item.get("call_id")
            out.append({"role": "toolResult", "toolCallId": call, "toolName": names.get(call, ""),
                        "content": [{"type": "text", "text": responses.output_text(item.get("output"))}], "isError": False,
                        "timestamp": bridge.now()})
        elif item.get("role") == "user":
            out.append({"role": "user", "content": [{"type": "text", "text": responses.user_text(item.get("content"))}],
                        "timestamp": bridge.now()})
    replies = [m for m in out if m.get("_open")]
    usages = list(usages)[-len(replies):] if replies else []
    usages = [None] * (len(replies) - len(usages)) + usages
    for reply, usage in zip(replies, usages):
        _close(reply, usage, bridge)
    return out


def _close(reply: JSON, usage: Any, bridge: ContextBridge) -> None:
    del reply["_open"]
    calls = any(b["type"] == "toolCall" for b in reply["content"])
    reply.update(bridge.reply_fields())
    reply["usage"] = _usage(usage)
    reply["stopReason"] = "toolUse" if calls else "stop"
    reply["timestamp"] = bridge.now()


def _usage(usage: Any) -> JSON:
    if usage is None:
        return usage_json()
    details = getattr(usage, "input_tokens_details", None)
    read = getattr(details, "cached_tokens", 0) or 0
    write = getattr(details, "cache_write_tokens", 0) or 0
    return usage_json(max(usage.input_tokens - read - write, 0), usage.output_tokens, read, write)


# --------------------------------------------------------------------------- pi -> items


def from_pi(messages: Iterable[JSON]) -> list[JSON]:
    """pi LLM messages as Responses input items (the summary is a user message)."""
    return responses.items_of(messages, FAKE_RESPONSES_ID)
