"""The conversation facade: the one object a host needs to run pi's agent loop on a session.

::

    conv = Conversation.open(compiled.run_plan, session, model=ModelInfo(...), tools=[...], cwd="/repo")
    conv.prompt("fix the failing test")          # hooks, /skill:, templates, pre-prompt check
    while True:
        request = conv.next_request("openai")    # system prompt, messages, tools, wire body
        step = conv.record(client.send(request)) # the reply, then: tools | retry | compact | stop | fail
        ...

A thin host: the session, the model, the thinking level, the clock, the compaction check,
overflow recovery and compaction are its :class:`~pipeline.runtime.driver.SessionDriver`'s
(the one the adapters' bridge holds too); the system prompt (tools, resources, a run's hooks,
the recorded prompt) is its :class:`~pipeline.runtime.prompting.PromptState`; the provider
body is :func:`~pipeline.runtime.request.wire_parts`'s. What is its own: the context kept in
memory (:class:`~pipeline.runtime.memory.Memory`), turn retries (``TurnRetry``), the queue of
follow-up messages, and the order of a run's steps. Events go to ``listener``. Constructing
writes nothing: :meth:`Conversation.start` (first use, or ``open``) does.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, cast

from pipeline.errors import PipelineError, Problem
from pipeline.llm.wire import ConvertTexts
from pipeline.model.run_plan import RunPlan
from pipeline.prompt import ContextFile, Skill
from pipeline.runtime import events as ev
from pipeline.runtime.driver import Clock, SessionDriver, ms_clock
from pipeline.runtime.host import BeforeAgentStart, InputHook, ModelInfo, Tool
from pipeline.runtime.memory import Memory
from pipeline.runtime.policy import TurnRetry
from pipeline.runtime.prompting import RESOURCES, PromptState
from pipeline.runtime.request import ModelRequest, Next, Wire, wire_parts
from pipeline.session.messages import AssistantMessage, ToolCall, parse_message
from pipeline.session.projection import entry_messages
from pipeline.session.store import SessionFile

if TYPE_CHECKING:  # pragma: no cover
    from pipeline.compaction.driver import CompactionOutcome
    from pipeline.compaction.engine import Navigated
    from pipeline.llm.types import SummaryClient
    from pipeline.session.entries import ContextEditEntry


class Conversation:
    """One agent conversation on a session file (see the module docstring)."""

    def __init__(
        self,
        plan: RunPlan,
        session: SessionFile,
        *,
        model: ModelInfo,
        tools: Sequence[Tool] = (),
        cwd: str,
        summarizer: Optional[SummaryClient] = None,
        templates: Sequence[Any] = (),
        skills: Sequence[Skill] = (),
        context_files: Sequence[ContextFile] = (),
        custom_prompt: Optional[str] = None,
        append_prompts: Sequence[str] = (),
        guidelines: Sequence[str] = (),
        sections: Mapping[str, str] = {},
        input_hooks: Sequence[InputHook] = (),
        before_agent_start: Sequence[BeforeAgentStart] = (),
        listener: Optional[ev.Listener] = None,
        clock: Clock = ms_clock,
        thinking_level: Optional[str] = None,
    ) -> None:
        if plan.runtime is None:
            raise PipelineError(Problem("the profile has no `runtime` block, which a conversation needs",
                                        key="runtime", hint="extend builtin:default or add the block",
                                        code="profile.missing-key"))
        self.plan, self.session, self.cwd, self.runtime = plan, session, cwd, plan.runtime
        self.driver = SessionDriver(plan, session, model=model, thinking_level=thinking_level, clock=clock,
                                    summarizer=summarizer, listener=listener)
        recording = bool(self.runtime.record_system_prompt)  # sessions record the system prompt
        self.prompts = PromptState(
            plan.render, patch=plan.patch, recording=recording, cwd=cwd, tools=tools, skills=skills,
            context_files=context_files, custom_prompt=custom_prompt, append_prompts=append_prompts,
            guidelines=guidelines, sections=sections, before_agent_start=before_agent_start)
        self.wire_texts = ConvertTexts(**self.runtime.wire.rendered())
        self.retry_settings = plan.retry
        self.templates, self.input_hooks = tuple(templates), tuple(input_hooks)
        self._retry = TurnRetry()
        self._queue: deque[str] = deque()
        self._reply_entry: Optional[str] = None  # the entry of the last recorded reply
        self.memory = Memory(plan.context, keep_system=recording and model.mid_conversation_system)
        self._sync()  # constructing reads the session and writes nothing (:meth:`start` does)
        self.driver.resolve_level()

    @classmethod
    def open(cls, plan: RunPlan, session: SessionFile, **options: Any) -> "Conversation":
        """A conversation, started (:meth:`start`): what :meth:`pipeline.Pipeline.conversation` returns."""
        return cls(plan, session, **options).start()

    def start(self) -> "Conversation":
        """The conversation's first write, once: a new session starts with its model and thinking
        level, as pi's does (:meth:`SessionDriver.start`). Every method that writes calls it first;
        calling it again does nothing."""
        if self.driver.start():
            self._sync()
            self.driver.resolve_level()
        return self

    # ----------------------------------------------------------------- state (the driver's)

    @property
    def model(self) -> ModelInfo:
        """The model the conversation talks to now (a host may switch it)."""
        return self.driver.model

    @model.setter
    def model(self, value: ModelInfo) -> None:
        self.driver.model = value

    @property
    def thinking_level(self) -> Optional[str]:
        """The live thinking level (the host's, else the one the session recorded)."""
        return self.driver.thinking_level

    @thinking_level.setter
    def thinking_level(self, value: Optional[str]) -> None:
        self.driver.thinking_level = value

    @property
    def listener(self) -> Optional[ev.Listener]:
        """Given every event (the driver's compaction events too)."""
        return self.driver.listener

    @listener.setter
    def listener(self, value: Optional[ev.Listener]) -> None:
        self.driver.listener = value

    @property
    def summarizer(self) -> Optional[SummaryClient]:
        """The summary client (the host's; the profile's once a compaction made it)."""
        return self.driver.summarizer

    def _sync(self) -> list[Any]:
        """Rebuild the context from the session (after opening, compaction, navigation)."""
        messages = self.driver.read()
        self.memory.reset(messages)
        self.prompts.reset(messages)  # the projection's system messages: after a compaction, its snapshot first
        return self.memory.agent

    # ----------------------------------------------------------------- system prompt (the prompt state's)

    @property
    def tools(self) -> tuple[Tool, ...]:
        return self.prompts.tools

    def tool(self, name: str) -> Optional[Tool]:
        """The active tool called ``name``."""
        return next((t for t in self.prompts.tools if t.name == name), None)

    @property
    def base_prompt(self) -> str:
        """The base system prompt, rendered when the tools or the resources changed."""
        return self.prompts.base

    @property
    def system_prompt(self) -> str:
        """The prompt of the next request: the run's override when one is set, else the base
        (a recording profile: the system prompt the recorded system messages give)."""
        return self.prompts.current(in_place=self.memory.keep_system, sent_in_place=self.memory.system_in_llm)

    def record_system_prompt(self) -> Optional[dict]:
        """Record what changed in the system prompt (the run's options rendered, against the
        replay of the recorded system messages) as a system message entry; ``None`` when
        nothing did (or the profile does not record the prompt)."""
        self.start()
        return self.prompts.record(self.driver.now(), self._append)

    def set_tools(self, tools: Sequence[Tool]) -> None:
        """Change the active tools; the base prompt is rebuilt (an override stays for its run)."""
        self.prompts.set_tools(tools)

    def reload(self, **resources: Any) -> None:
        """Replace resources (``templates``, ``skills``, ``context_files``, ``custom_prompt``,
        ``append_prompts``, ``guidelines``, ``sections``) and rebuild the base prompt; the
        context is read again from the session (entries other writers appended are taken in)."""
        for name in resources:
            if name not in (*RESOURCES, "templates"):
                raise TypeError(f"reload() got an unexpected resource {name!r}")
        if "templates" in resources:
            self.templates = tuple(resources.pop("templates"))
        self.prompts.reload(resources)
        self._sync()

    # ----------------------------------------------------------------- prompting

    def expand(self, text: str) -> str:
        """Input hooks, then ``/skill:name args``, then prompt templates (unknown input unchanged)."""
        from pipeline.templates.invoke import expand_input
        from pipeline.templates.skill import expand_skill

        for hook in self.input_hooks:
            changed = hook(text)
            if changed is not None:
                text = changed
        skill = expand_skill(text, self.prompts.skills, self.runtime.skill)
        return skill if skill is not None else expand_input(text, self.templates, self.plan.templates.argument_splitting)

    def prompt(self, text: str) -> str:
        """Start a run with the user's ``text``: expansion, the compaction check before a
        prompt, the before-agent-start hooks, the user message appended. Returns the text sent."""
        self.start()
        expanded = self.expand(text)
        last = self.memory.last_assistant()
        if last is not None:
            decision = self.driver.check(last, "before_prompt", self.memory.agent)
            if decision.action == "compact":
                if decision.drop_reply:
                    self.memory.drop_last_reply()
                self._compact(decision.reason or "threshold", will_retry=decision.retry)
        added = self.prompts.start_run(expanded)
        # pi 1.x: a forced prompt only replaces the run's requests' prompt; the structured
        # sections are still compared and recorded (nothing changes for them in most runs)
        self.driver.record_thinking_level()
        self.record_system_prompt()
        self._append({"role": "user", "content": [{"type": "text", "text": expanded}], "timestamp": self.driver.now()})
        for message in added:
            for agent_message in entry_messages(self.driver.append_custom_message(message)):
                self.memory.push(agent_message)
        return expanded

    def _append(self, message: Mapping[str, Any]) -> str:
        entry = self.driver.append(message)
        self.memory.push(parse_message(dict(message)))
        return entry.id

    def queue(self, text: str) -> None:
        """A message for after the current run (pi's follow-up): expanded now, sent when the run would end."""
        self._queue.append(self.expand(text))

    def deliver_queued(self) -> bool:
        """Append the next queued message as a user message of the current run; False when none."""
        self.start()
        if not self._queue:
            return False
        self._append({"role": "user", "content": [{"type": "text", "text": self._queue.popleft()}],
                      "timestamp": self.driver.now()})
        return True

    # ----------------------------------------------------------------- requests

    def next_request(self, wire: Optional[Wire] = None) -> ModelRequest:
        """The next model request; ``wire`` adds the provider body (``openai`` chat
        completions, ``anthropic`` messages)."""
        self.start()
        model, memory = self.driver.model, self.memory
        wanted = self.prompts.recorded.in_place_for(model.mid_conversation_system)
        if memory.keep_system != wanted:  # a host switched the model: it reads later system messages or not
            memory.keep_system = wanted
            self._sync()
        llm = memory.llm
        self.record_system_prompt()  # None unless the profile records the prompt
        system, tools, unrecorded = self.prompts.request(in_place=memory.keep_system, sent_in_place=memory.system_in_llm)
        if unrecorded and memory.system_in_llm:  # a forced prompt: the run's requests have no later system messages
            llm = [m for m in llm if m.get("role") != "system"]
        parts = None if wire is None else wire_parts(
            wire, memory, llm, system=system, tools=tools, model=model, texts=self.wire_texts,
            update=self.prompts.recorded.update(in_place=memory.keep_system), thinking_level=self.driver.thinking_level)
        return ModelRequest(system, tools, model, llm, len(llm), wire, parts)

    # ----------------------------------------------------------------- replies

    def record(self, reply: Mapping[str, Any] | AssistantMessage) -> Next:
        """Append the assistant reply (pi's message shape) and say what happens next."""
        self.start()
        raw = dict(reply.raw if isinstance(reply, AssistantMessage) else reply)
        raw.setdefault("timestamp", self.driver.now())
        self._reply_entry = self._append(raw)
        message = self.memory.agent[-1]
        assert isinstance(message, AssistantMessage)
        self._retry, succeeded = self._retry.on_reply(message)
        if succeeded is not None:
            self.driver.emit(ev.RetryEnd(True, succeeded))
        if message.stop_reason == "toolUse" and message.tool_calls:
            return Next("tools", message, tool_calls=message.tool_calls)
        return self._after_run(message)

    def _after_run(self, message: AssistantMessage) -> Next:
        decision = self._retry.after_run(message, self.retry_settings, self.driver.model.context_window)
        self._retry = decision.state
        if decision.action == "retry":
            self.driver.omit(self._reply_entry, message)
            self.memory.drop_last_reply()
            self.driver.emit(ev.RetryStart(decision.attempt, decision.max_attempts, decision.delay_ms, message.error_message))
            return Next("retry", message, delay_ms=decision.delay_ms)
        if decision.action == "give_up":
            self.driver.emit(ev.RetryEnd(False, decision.attempt, message.error_message))
        check = self.driver.check(message, "after_run", self.memory.agent)
        if check.action == "fail":
            error = f"the context still overflows after compacting: {message.error_message or message.stop_reason}"
            self.driver.emit(ev.CompactionEnd("overflow", error=error))
            return self._end(Next("fail", message, error=error))
        if check.action == "compact":
            if check.drop_reply:
                self.driver.omit(self._reply_entry, message)
                self.memory.drop_last_reply()
            return Next("compact", message, reason=check.reason, retry=check.retry)
        if message.stop_reason == "error":
            return self._end(Next("fail", message, error=message.error_message or "the model reported an error"))
        return self._end(Next("stop", message))

    def edit_context(self, target_id: str, replacement: Any = None) -> ContextEditEntry:
        """pi 1.x's context edit at a turn boundary (an extension's ``context_edit`` draft):
        append the entry (``appendContextEdit``'s checks and string normalization) and read
        the context again as its projection."""
        self.start()
        entry = self.driver.edit_context(target_id, replacement)
        self._sync()
        return cast("ContextEditEntry", entry)

    def _end(self, step: Next) -> Next:
        """The run ends with ``step`` unless queued messages keep it going."""
        if step.action == "fail" or (step.action == "stop" and not self._queue):
            self.prompts.end_run()
        return step

    def record_tool_result(self, call: ToolCall, content: Sequence[Mapping[str, Any]], *, is_error: bool = False,
                           details: Any = None) -> None:
        """Append the result of one tool call (pi's ``toolResult`` message)."""
        self.start()
        message: dict[str, Any] = {"role": "toolResult", "toolCallId": call.id, "toolName": call.name,
                                   "content": [dict(b) for b in content]}
        if details is not None:
            message["details"] = details
        message["isError"] = is_error
        message["timestamp"] = self.driver.now()
        self._append(message)

    def tool_error(self, kind: str, **values: str) -> list[dict]:
        """The profile's ``runtime.tool_errors.<kind>`` text as content blocks."""
        return [{"type": "text", "text": getattr(self.runtime.tool_errors, kind).render(values)}]

    # ----------------------------------------------------------------- compaction (the driver's)

    def auto_compact(self, step: Next) -> bool:
        """Carry out a ``compact`` step; True when the agent goes on (a retry, or queued messages)."""
        compacted = self._compact(step.reason or "threshold", will_retry=step.retry)
        if (compacted and step.retry) or self._queue:
            return True
        self._end(Next("stop", step.reply))
        return False

    def compact(self, instructions: Optional[str] = None) -> CompactionOutcome:
        """A manual compaction (``/compact [instructions]``): the driver's
        :class:`~pipeline.compaction.driver.CompactionOutcome` (``nothing`` set when there was nothing to compact)."""
        self.start()
        return cast("CompactionOutcome", self._compact("manual", instructions=instructions))  # manual: never None

    def _compact(self, reason: str, *, will_retry: bool = False,
                 instructions: Optional[str] = None) -> Optional[CompactionOutcome]:
        done = self.driver.compact(reason, instructions=instructions, will_retry=will_retry, reload=self._sync)
        if done is not None and will_retry and (done.nothing is None or done.summarized):
            self.memory.drop_failed_reply()
        return done

    # ----------------------------------------------------------------- navigation

    def navigate(self, target_id: str, *, summarize: bool = False,
                 instructions: Optional[str] = None) -> Optional[Navigated]:
        """Move to another point of the tree (pi's ``/tree``), with a branch summary when asked."""
        self.start()
        from pipeline.compaction.branch import navigation_leaf
        from pipeline.compaction.engine import branch_session

        with self.driver.writing() as session:
            if summarize:  # a branch summary reads the whole profile
                done = branch_session(session, self.plan.profile(), self.driver.summary_client(), target_id,
                                      custom_instructions=instructions)
            else:
                target = session.get(target_id)
                if target is None:
                    session.resolve_id(target_id)  # raises the located error
                leaf = navigation_leaf(target)
                session.branch(leaf) if leaf is not None else session.reset_leaf()
                done = None
        self.prompts.end_run()
        self._sync()
        return done
