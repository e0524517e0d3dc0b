"""A reference agent loop on the conversation facade (pi's ``AgentSession.prompt`` loop).

::

    agent = Agent(conversation, client, wire="openai", listener=print)
    result = agent.run("what does this project do?")
    result.answer

One :meth:`Agent.run` is one user prompt: requests until the model stops, tool calls
run in order with their results appended, transient errors retried after the profile's
delay, compactions (threshold after the run, overflow with one retry) done when the
conversation says so, queued messages delivered before the run ends. ``cancel`` (a
``threading.Event``) stops the current request (the reply is recorded as aborted) or
the wait before a retry. The model client is anything with ``send(body, cancel=...)``
returning pi's assistant message (:class:`pipeline.llm.chat.ChatClient`).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Protocol

from pipeline.errors import PipelineError, Problem
from pipeline.model.run_plan import RunPlan
from pipeline.js import js_json
from pipeline.runtime import events as ev
from pipeline.runtime.arguments import argument_problems
from pipeline.runtime.conversation import Conversation, Next

if TYPE_CHECKING:  # pragma: no cover
    from pipeline.compaction.driver import CompactionOutcome
    from pipeline.llm.chat import ChatClient
from pipeline.runtime.host import ToolOutput
from pipeline.session.messages import AssistantMessage, TextContent, ToolCall


class ModelClient(Protocol):
    def send(self, body: Any, *, cancel: Optional[threading.Event] = None) -> dict: ...


@dataclass(frozen=True)
class RunResult:
    """How a run ended: the last reply's text, its stop reason, the error when it failed."""

    answer: str
    stop_reason: Optional[str]
    error: Optional[str] = None
    events: tuple = field(default=(), repr=False)


def reply_text(reply: AssistantMessage) -> str:
    return "".join(b.text for b in reply.content if isinstance(b, TextContent))


class Agent:
    """Runs prompts on a :class:`Conversation` with a model client (see the module docstring)."""

    def __init__(self, conversation: Conversation, client: ModelClient, *, wire: str = "openai",
                 listener: Optional[ev.Listener] = None) -> None:
        self.conversation, self.client, self.wire = conversation, client, wire
        self._listener = listener
        self._events: list = []
        self._outer: Optional[ev.Listener] = None
        self._attached = False  # constructing leaves the conversation alone: :meth:`attach` hooks in

    @classmethod
    def open(cls, conversation: Conversation, client: ModelClient, *, wire: str = "openai",
             listener: Optional[ev.Listener] = None) -> "Agent":
        """An agent, attached to its conversation (:meth:`attach`)."""
        return cls(conversation, client, wire=wire, listener=listener).attach()

    def attach(self) -> "Agent":
        """Hear the conversation's events (the agent's listener after the conversation's own),
        once; :meth:`run` and :meth:`compact` call it first."""
        if not self._attached:
            self._attached = True
            self._outer = self.conversation.listener
            self.conversation.listener = self._emit
        return self

    def _emit(self, event: Any) -> None:
        self._events.append(event)
        if self._outer is not None:
            self._outer(event)
        if self._listener is not None:
            self._listener(event)

    def run(self, text: str, *, cancel: Optional[threading.Event] = None) -> RunResult:
        """One prompt, run to its end."""
        self.attach()
        self._events = []
        cancel = cancel or threading.Event()
        self._emit(ev.RunStart(text))
        unready = self._unready()
        if unready is not None:  # checked before the prompt is written: a later run sends it once
            self._emit(ev.Failure(unready))
            self._emit(ev.RunEnd("", None))
            return RunResult("", None, unready, tuple(self._events))
        self.conversation.prompt(text)
        step = self._turns(cancel)
        answer = reply_text(step.reply)
        if step.action == "fail":
            self._emit(ev.Failure(step.error or "the run failed"))
        self._emit(ev.RunEnd(answer, step.reply.stop_reason))
        error = step.error if step.action == "fail" else None
        if error is None and step.reply.stop_reason == "error":  # e.g. an overflow with nothing to compact
            error = step.reply.error_message or "the model reported an error"
        return RunResult(answer, step.reply.stop_reason, error, tuple(self._events))

    def compact(self, instructions: Optional[str] = None) -> "CompactionOutcome":
        """A manual compaction (:meth:`Conversation.compact`), its events to this agent's listener."""
        self.attach()
        return self.conversation.compact(instructions)

    def _unready(self) -> Optional[str]:
        """What keeps the client from sending (a missing key), from its ``check_ready``; None when ready."""
        check = getattr(self.client, "check_ready", None)
        if check is None:
            return None
        try:
            check()
        except PipelineError as err:  # a setting to fix, reported as the run's failure
            return str(err)
        return None

    def _turns(self, cancel: threading.Event) -> Next:
        conv, index = self.conversation, 0
        while True:
            request = conv.next_request(self.wire)  # type: ignore[arg-type]
            self._emit(ev.Request(index, request.message_count, tuple(t.name for t in request.tools)))
            index += 1
            if getattr(self.client, "streams_text", False):  # text shown as it arrives
                reply = self.client.send(request.body, cancel=cancel,
                                         on_text=lambda text: self._emit(ev.TextDelta(text)))  # type: ignore[call-arg]
            else:
                reply = self.client.send(request.body, cancel=cancel)
            step = conv.record(reply)
            self._emit(ev.Reply(step.reply.stop_reason, step.reply.error_message))
            if not self._go_on(step, cancel):
                return step

    def _go_on(self, step: Next, cancel: threading.Event) -> bool:
        """Carry out ``step``; True when another request follows."""
        conv = self.conversation
        if step.action == "tools":
            self._run_tools(step.tool_calls, cancel)
            return not cancel.is_set()
        if step.action == "retry":
            return not cancel.wait(step.delay_ms / 1000)
        if step.action == "compact":
            if not conv.auto_compact(step):
                return False
            return step.retry or conv.deliver_queued()
        if step.action == "stop" and step.reply.stop_reason != "aborted":
            return conv.deliver_queued()
        return False

    # ----------------------------------------------------------------- tools

    def _run_tools(self, calls: tuple[ToolCall, ...], cancel: threading.Event) -> None:
        for call in calls:
            if cancel.is_set():
                return
            self._emit(ev.ToolStart(call.id or "", call.name or "", call.arguments))
            content, is_error, details = self._execute(call)
            self.conversation.record_tool_result(call, content, is_error=is_error, details=details)
            self._emit(ev.ToolEnd(call.id or "", call.name or "", is_error))

    def _execute(self, call: ToolCall) -> tuple[list, bool, Any]:
        conv = self.conversation
        name = call.name or ""
        tool = conv.tool(name)
        if tool is None:
            return conv.tool_error("unknown", name=name), True, {}
        arguments = call.arguments if isinstance(call.arguments, dict) else {}
        problems = argument_problems(arguments, tool.parameters)
        if problems:
            shown = json.dumps(arguments, indent=2, ensure_ascii=False)
            return conv.tool_error("invalid_arguments", name=name, problems="\n".join(f"  - {p}" for p in problems),
                                   arguments=shown), True, {}
        try:
            output = tool.function(arguments)
        except Exception as err:  # a tool that raises: an error result, the loop goes on
            return conv.tool_error("failed", name=name, error=f"{type(err).__name__}: {err}"), True, None
        if isinstance(output, ToolOutput):
            return output.blocks(), output.is_error, output.details
        return [{"type": "text", "text": output if isinstance(output, str) else js_json(output)}], False, None


def model_client(plan: RunPlan, model: Any, wire: str = "openai", **options: Any) -> "ChatClient":
    """A :class:`pipeline.llm.chat.ChatClient` for ``model`` (a :class:`~pipeline.runtime.host.ModelInfo`)
    with the run plan's texts and bounds (:func:`pipeline.llm.clients.chat_client`); ``options``:
    ``base_url``, ``api_key_env``, ``timeout``, ``env``..."""
    from pipeline.llm.clients import chat_client

    if plan.runtime is None:
        raise PipelineError(Problem("the profile has no `runtime` block, which a chat client needs", key="runtime",
                                    code="profile.missing-key"))
    return chat_client(plan.summarizer, wire, model=model.target(), aborted_text=plan.runtime.aborted.render(),
                       **options)
