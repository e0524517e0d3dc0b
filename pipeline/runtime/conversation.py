"""The conversation facade: the one object a host needs to run pi's agent loop on a session.

::

    conv = Conversation.open(profile, session, model=ModelInfo(...), tools=[...], cwd="/repo")
    conv.prompt("fix the failing test")          # hooks, /skill:, templates, pre-prompt check
    while True:
        request = conv.next_request("openai")    # system prompt, messages, tools, wire body
        step = conv.record(client.send(request)) # the reply, then: tools | retry | compact | stop | fail
        ...

Every decision is one of :mod:`pipeline.runtime`'s pure policies (``check_compaction``,
``TurnRetry``, ``RecoveryCycle``, hooks via ``run_hooks``/``RunPrompt``); compaction goes
through :mod:`pipeline.compaction`'s one driver, branch summaries through its engine; the
context is kept in memory (:class:`~pipeline.runtime.memory.Memory`). Events go to ``listener``.
Constructing writes nothing: :meth:`Conversation.start` (first use, or ``open``) does.
"""

from __future__ import annotations

import time
from collections import deque
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional, Sequence, cast

from pipeline.errors import PipelineError, Problem
from pipeline.js import iso_timestamp
from pipeline.llm.convert import ConvertTexts, ToolDefinition, to_anthropic_messages, to_openai_chat
from pipeline.llm.convert import anthropic_messages, openai_messages
from pipeline.model.profile import Profile
from pipeline.model.render_plan import RenderPlan
from pipeline.prompt import ContextFile, RenderContext, Skill, render_sections, render_system_prompt, section_record
from pipeline.runtime import events as ev
from pipeline.runtime.host import AgentStart, BeforeAgentStart, HookResult, InputHook, ModelInfo, Tool
from pipeline.runtime.memory import Memory
from pipeline.runtime.override import RunPrompt, run_hooks
from pipeline.runtime.system import RecordedPrompt, RunOptions, declaration
from pipeline.runtime.request import ModelRequest, Next, Wire
from pipeline.runtime.policy import RecoveryCycle, RetrySettings, TurnRetry, check_compaction, latest_compaction_time
from pipeline.session.messages import AssistantMessage, ToolCall, parse_message
from pipeline.runtime.edits import context_messages, edited_tokens, omit_attempt
from pipeline.session.system import apply_sections
from pipeline.session.store import SessionFile
from pipeline.session.texts import ContextTexts

if TYPE_CHECKING:  # pragma: no cover
    from pipeline.compaction import CompactionOutcome, Navigated
    from pipeline.session.entries import ContextEditEntry

def _ms_clock() -> float:
    return float(int(time.time() * 1000))


class Conversation:
    """One agent conversation on a session file (see the module docstring)."""

    def __init__(
        self,
        profile: Profile,
        session: SessionFile,
        *,
        model: ModelInfo,
        tools: Sequence[Tool] = (),
        cwd: str,
        summarizer: Any = None,
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
        clock: Callable[[], float] = _ms_clock,
        thinking_level: Optional[str] = None,
    ) -> None:
        if profile.runtime is None:
            raise PipelineError(Problem("the profile has no `runtime` block, which a conversation needs",
                                        key="runtime", hint="extend builtin:default or add the block",
                                        code="profile.missing-key"))
        self.profile, self.session, self.model, self.cwd = profile, session, model, cwd
        self.plan = RenderPlan.of(profile.system_prompt)  # what rendering reads, derived once
        self.runtime = profile.runtime
        self.texts = ContextTexts.from_profile(profile)
        self.wire_texts = ConvertTexts(**{k: v.render() for k, v in self.runtime.wire})
        self.retry_settings = RetrySettings.from_profile(profile)
        self.summarizer = summarizer
        self.templates, self.skills, self.context_files = tuple(templates), tuple(skills), tuple(context_files)
        self.custom_prompt, self.append_prompts, self.guidelines = custom_prompt, tuple(append_prompts), tuple(guidelines)
        self.sections = dict(sections)
        self.recording = bool(self.runtime.record_system_prompt)  # sessions record the system prompt
        self._options = RunOptions(self.sections, self.guidelines)
        self.recorded = RecordedPrompt(profile.system_prompt, recording=self.recording)
        self.input_hooks, self.before_agent_start = tuple(input_hooks), tuple(before_agent_start)
        self.listener = listener
        self.clock = clock
        session.now = lambda: iso_timestamp(datetime.fromtimestamp(self.clock() / 1000, timezone.utc))
        self._tools: tuple[Tool, ...] = tuple(tools)
        self._base: Optional[str] = None
        self._run: Optional[RunPrompt] = None
        self._retry, self._cycle = TurnRetry(), RecoveryCycle()
        self._queue: deque[str] = deque()
        self._reply_entry: Optional[str] = None  # the entry of the last recorded reply
        self.hook_seen: tuple[str, ...] = ()
        self.memory = Memory(self.texts, keep_system=self.recording and model.mid_conversation_system)
        self._level, self._started = thinking_level, False
        self._sync()  # constructing reads the session and writes nothing (:meth:`start` does)
        # the level a host passes wins over the one the session recorded, as in pi
        self.thinking_level = thinking_level if thinking_level is not None else self._recorded_level

    @classmethod
    def open(cls, profile: Profile, session: SessionFile, **options: Any) -> "Conversation":
        """A conversation, started (:meth:`start`): what :meth:`pipeline.Pipeline.conversation` returns."""
        return cls(profile, session, **options).start()

    def start(self) -> "Conversation":
        """The conversation's first write, once: a new session starts with its model and thinking
        level, as pi's does. Every method that writes calls it first; calling it again does nothing."""
        if not self._started and not self.session.entries:
            self.session.append_model_change(self.model.provider, self.model.id)
            self.session.append_thinking_level_change(self._level or "off")
            self._sync()
            self.thinking_level = self._level if self._level is not None else self._recorded_level
        self._started = True
        return self

    # ----------------------------------------------------------------- state

    def _sync(self) -> None:
        """Rebuild the context from the session (after opening, compaction, navigation)."""
        messages, self._recorded_level = context_messages(self.session, self.runtime)
        self.memory.reset(messages)
        path = self.session.path_to()
        self._compaction_ms = latest_compaction_time(path)
        self.recorded.reset(messages)  # the projection's system messages: after a compaction, its snapshot first

    def _emit(self, event: Any) -> None:
        if self.listener is not None:
            self.listener(event)

    def _now(self) -> int | float:
        value = self.clock()
        return int(value) if float(value).is_integer() else value

    @property
    def tools(self) -> tuple[Tool, ...]:
        return self._tools

    def tool(self, name: str) -> Optional[Tool]:
        """The active tool called ``name``."""
        return next((t for t in self._tools if t.name == name), None)

    # ----------------------------------------------------------------- system prompt

    def _catalog(self, tool: Tool) -> Any:
        return self.profile.system_prompt.tools.get(tool.name)

    def _snippet(self, tool: Tool) -> Optional[str]:
        if tool.snippet is not None:
            return tool.snippet
        entry = self._catalog(tool)
        return entry.snippet.render() if entry is not None and entry.snippet is not None else None

    def _guidelines(self, tool: Tool) -> tuple[str, ...]:
        if tool.guidelines is not None:
            return tool.guidelines
        entry = self._catalog(tool)
        return tuple(g.render() for g in entry.guidelines) if entry is not None else ()

    def description(self, tool: Tool) -> str:
        """The tool's description: its own, else the catalog's, else its snippet."""
        if tool.description is not None:
            return tool.description
        entry = self._catalog(tool)
        if entry is not None and entry.description is not None:
            return entry.description.render()
        return self._snippet(tool) or ""

    def render_context(self, options: Optional[RunOptions] = None) -> RenderContext:
        """The inputs of the base system prompt (the active tools and the resources); with
        ``options``, a run's caller sections and guidelines instead of the conversation's."""
        snippets = {t.name: s for t in self._tools if (s := self._snippet(t)) is not None}
        options = options or RunOptions(self.sections, self.guidelines)
        return RenderContext(
            cwd=self.cwd, tools=tuple(t.name for t in self._tools), tool_snippets=snippets,
            tool_guidelines={t.name: self._guidelines(t) for t in self._tools}, guidelines=options.guidelines,
            custom_prompt=self.custom_prompt, append_prompts=self.append_prompts,
            context_files=self.context_files, skills=self.skills, sections=options.sections,
        )

    @property
    def base_prompt(self) -> str:
        """The base system prompt, rendered when the tools or the resources changed."""
        if self._base is None:
            self._base = render_system_prompt(self.plan, self.render_context())
        return self._base

    @property
    def system_prompt(self) -> str:
        """The prompt of the next request: the run's override when one is set, else the base
        (a recording profile: the system prompt the recorded system messages give)."""
        if self.recording and not self._forced():
            return self._recorded_view()[0]
        return self._run.at_turn(self.base_prompt) if self._run is not None else self.base_prompt

    def _forced(self) -> bool:
        """A hook set the whole prompt of the current run."""
        return self._run is not None and self._run.override is not None

    def _match_model(self) -> None:
        """Keep later system messages in the context exactly when the current model reads them
        (a host may switch ``model``): the context is rebuilt from the session when that changes."""
        wanted = self.recorded.in_place_for(self.model.mid_conversation_system)
        if self.memory.keep_system != wanted:
            self.memory.keep_system = wanted
            self._sync()

    def record_system_prompt(self) -> Optional[dict]:
        """Record what changed in the system prompt (the run's options rendered, against the
        replay of the recorded system messages) as a system message entry; ``None`` when
        nothing did (or the profile does not record the prompt)."""
        self.start()
        if not self.recording:
            return None
        record = section_record(render_sections(self.plan, self.render_context(self._options)))
        tools = [declaration(t) for t in self.tool_definitions()]
        return self.recorded.record(record, tools, self._now(), self._append)

    def _recorded_view(self) -> tuple[str, tuple[ToolDefinition, ...]]:
        """(system prompt, tools) the recorded system messages give this conversation's model."""
        return self.recorded.view(in_place=self.memory.keep_system, sent_in_place=self.memory.system_in_llm)

    def _system_update(self) -> Any:
        """How the converters render a later system message (``None``: they are left out)."""
        return self.recorded.update(in_place=self.memory.keep_system)

    def set_tools(self, tools: Sequence[Tool]) -> None:
        """Change the active tools; the base prompt is rebuilt (an override stays for its run)."""
        self._tools = tuple(tools)
        self._base = None

    def reload(self, **resources: Any) -> None:
        """Replace resources (``templates``, ``skills``, ``context_files``, ``custom_prompt``,
        ``append_prompts``, ``guidelines``, ``sections``) and rebuild the base prompt; the
        context is read again from the session (entries other writers appended are taken in)."""
        allowed = ("templates", "skills", "context_files", "custom_prompt", "append_prompts", "guidelines", "sections")
        for name, value in resources.items():
            if name not in allowed:
                raise TypeError(f"reload() got an unexpected resource {name!r}")
            setattr(self, name, value if name == "custom_prompt" else dict(value) if name == "sections" else tuple(value))
        self._base = None
        self._sync()

    # ----------------------------------------------------------------- prompting

    def expand(self, text: str) -> str:
        """Input hooks, then ``/skill:name args``, then prompt templates (unknown input unchanged)."""
        from pipeline.templates import expand_input
        from pipeline.templates.skill import expand_skill

        for hook in self.input_hooks:
            changed = hook(text)
            if changed is not None:
                text = changed
        skill = expand_skill(text, self.skills, self.runtime.skill)
        return skill if skill is not None else expand_input(text, self.templates, self.profile.templates.argument_splitting)

    def prompt(self, text: str) -> str:
        """Start a run with the user's ``text``: expansion, the compaction check before a
        prompt, the before-agent-start hooks, the user message appended. Returns the text sent."""
        self.start()
        expanded = self.expand(text)
        last = self.memory.last_assistant()
        if last is not None:
            decision = self._check(last, "before_prompt")
            if decision.action == "compact":
                if decision.drop_reply:
                    self.memory.drop_last_reply()
                self._compact(decision.reason, will_retry=decision.retry)
        self._start_run(expanded)
        return expanded

    def _start_run(self, text: str) -> None:
        messages: list[Mapping[str, Any]] = []
        sections, guidelines = dict(self.sections), list(self.guidelines)

        def results() -> Iterable[Optional[str]]:
            nonlocal sections
            current = self.base_prompt
            for hook in self.before_agent_start:
                result = hook(AgentStart(text, current, dict(sections))) or HookResult()
                if result.message is not None:
                    messages.append(result.message)
                if result.system_prompt is not None:
                    current = result.system_prompt
                if self.recording:
                    sections = apply_sections(sections, result.sections)
                    guidelines.extend(result.guidelines)
                yield result.system_prompt

        chain = run_hooks(self.base_prompt, results())
        self.hook_seen = chain.seen
        self._run = RunPrompt(self.base_prompt, chain.override)
        self._options = RunOptions(sections, tuple(guidelines))
        # pi 1.x: a forced prompt only replaces the run's requests' prompt; the structured
        # sections are still compared and recorded (nothing changes for them in most runs)
        self._record_thinking_level()
        self.record_system_prompt()
        self._append_user(text)
        for message in messages:
            self._append_custom(message)

    def _record_thinking_level(self) -> None:
        """``runtime.record_thinking_level`` (pi 1.x): the conversation's level, when the branch
        records another one (both as the model runs them: ``off`` without reasoning)."""
        if not self.runtime.record_thinking_level or self._recorded_level is None:
            return
        live = self.model.runnable_level(self.thinking_level)
        if self.model.runnable_level(self._recorded_level) != live:
            self.session.append_thinking_level_change(live)
            self._recorded_level = live

    def _append_user(self, text: str) -> None:
        message = {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": self._now()}
        self._append(message)
        self._cycle = self._cycle.on_user_message()

    def _append_custom(self, message: Mapping[str, Any]) -> None:
        entry = self.session.append_custom_message(
            message.get("customType", ""), message.get("content"), display=message.get("display"),
            details=message.get("details"),
        )
        from pipeline.session.projection import entry_messages

        for agent_message in entry_messages(entry):
            self.memory.push(agent_message)

    def _append(self, message: Mapping[str, Any]) -> str:
        entry = self.session.append_message(dict(message))
        self.memory.push(parse_message(dict(message)))
        return entry.id

    def queue(self, text: str) -> None:
        """A message for after the current run (pi's follow-up): expanded now, sent when the run would end."""
        self._queue.append(self.expand(text))

    @property
    def queued(self) -> int:
        return len(self._queue)

    def deliver_queued(self) -> bool:
        """Append the next queued message as a user message of the current run; False when none."""
        self.start()
        if not self._queue:
            return False
        self._append_user(self._queue.popleft())
        return True

    # ----------------------------------------------------------------- requests

    def tool_definitions(self) -> tuple[ToolDefinition, ...]:
        return tuple(ToolDefinition(name=t.name, description=self.description(t), parameters=t.parameters)
                     for t in self._tools)

    def next_request(self, wire: Optional[Wire] = None) -> ModelRequest:
        """The next model request; ``wire`` adds the provider body (``openai`` chat
        completions, ``anthropic`` messages)."""
        self.start()
        self._match_model()
        llm = self.memory.llm
        self.record_system_prompt()  # None unless the profile records the prompt
        if self.recording and not self._forced():
            system, tools = self._recorded_view()
        else:
            system, tools = self.system_prompt, self.tool_definitions()
            if self.memory.system_in_llm:  # a forced prompt: the run's requests have no later system messages
                llm = [m for m in llm if m.get("role") != "system"]
        parts = None if wire is None else self._body(wire, system, tools, llm)
        return ModelRequest(system, tools, self.model, llm, len(llm), wire, parts)

    def _reasoning(self) -> Optional[str]:
        level = self.thinking_level
        return level if self.model.reasoning and level not in (None, "off") else None

    def _wire_split(self, wire: str, llm: list, convert: Callable[[Sequence[dict]], list]) -> tuple[list, Sequence[dict]]:
        """The converted prefix and the tail to convert; the whole list when it is not the
        memory's (a forced prompt) or when Anthropic may hold a system message past a cut."""
        if llm is not self.memory.llm or (wire == "anthropic" and self.memory.system_in_llm):
            return [], llm
        return self.memory.wire_messages(wire, convert)

    def _body(self, wire: str, system: str, tools: tuple[ToolDefinition, ...], llm: list) -> tuple:
        """(the body with the tail's messages, where the prefix goes, the prefix, its length)."""
        target, texts, update = self.model.target(), self.wire_texts, self._system_update()
        if wire == "openai":
            prefix, tail = self._wire_split("openai", llm, lambda m: openai_messages(
                m, system_prompt=None, model=target, texts=texts, system_update=update))
            body = to_openai_chat(tail, system_prompt=system, tools=tools, model=target, texts=texts,
                                  reasoning_effort=self._reasoning(), system_update=update)
            head = 1 if system else 0
        elif wire == "anthropic":
            prefix, tail = self._wire_split("anthropic", llm, lambda m: anthropic_messages(
                m, model=target, texts=texts, system_update=update))
            body = to_anthropic_messages(tail, system_prompt=system, tools=tools, model=target, texts=texts,
                                         system_update=update)
            head = 0
        else:
            raise ValueError(f"unknown wire format {wire!r}; expected openai or anthropic")
        if not tools and self.memory.has_tool_history and wire == "openai":
            body["tools"] = []
        return body, head, prefix, len(prefix)

    # ----------------------------------------------------------------- replies

    def record(self, reply: Mapping[str, Any] | AssistantMessage) -> Next:
        """Append the assistant reply (pi's message shape) and say what happens next."""
        self.start()
        raw = dict(reply.raw if isinstance(reply, AssistantMessage) else reply)
        raw.setdefault("timestamp", self._now())
        self._reply_entry = self._append(raw)
        message = self.memory.agent[-1]
        assert isinstance(message, AssistantMessage)
        self._retry, succeeded = self._retry.on_reply(message)
        if succeeded is not None:
            self._emit(ev.RetryEnd(True, succeeded))
        self._cycle = self._cycle.on_reply(message)
        if message.stop_reason == "toolUse" and message.tool_calls:
            return Next("tools", message, tool_calls=message.tool_calls)
        return self._after_run(message)

    def _after_run(self, message: AssistantMessage) -> Next:
        decision = self._retry.after_run(message, self.retry_settings, self.model.context_window)
        self._retry = decision.state
        if decision.action == "retry":
            self._omit(message)
            self.memory.drop_last_reply()
            self._emit(ev.RetryStart(decision.attempt, decision.max_attempts, decision.delay_ms, message.error_message))
            return Next("retry", message, delay_ms=decision.delay_ms)
        if decision.action == "give_up":
            self._emit(ev.RetryEnd(False, decision.attempt, message.error_message))
        check = self._check(message, "after_run")
        if check.action == "fail":
            error = f"the context still overflows after compacting: {message.error_message or message.stop_reason}"
            self._emit(ev.CompactionEnd("overflow", error=error))
            return self._end(Next("fail", message, error=error))
        if check.action == "compact":
            if check.drop_reply:
                self._omit(message)
                self.memory.drop_last_reply()
            return Next("compact", message, reason=check.reason, retry=check.retry)
        return self._finish(message)

    def _omit(self, message: AssistantMessage) -> None:
        """``runtime.context_edits``: the failed attempt leaves the context through context edits."""
        if self.runtime.context_edits and self._reply_entry is not None:
            omit_attempt(self.session, self._reply_entry, message)

    def edit_context(self, target_id: str, replacement: Any = None) -> ContextEditEntry:
        """pi 1.x's context edit at a turn boundary (an extension's ``context_edit`` draft):
        append the entry (``appendContextEdit``'s checks and string normalization) and read
        the context again as its projection."""
        self.start()
        entry = self.session.append_context_edit(target_id, replacement)
        self._sync()
        return entry

    def _finish(self, message: AssistantMessage) -> Next:
        if message.stop_reason == "error":
            return self._end(Next("fail", message, error=message.error_message or "the model reported an error"))
        return self._end(Next("stop", message))

    def _end(self, step: Next) -> Next:
        """The run ends with ``step`` unless queued messages keep it going."""
        if step.action == "fail" or (step.action == "stop" and not self._queue):
            self._run = None
        return step

    def _check(self, reply: AssistantMessage, phase: str) -> Any:
        decision = check_compaction(
            reply, phase=phase, model=self.model.current(), latest_compaction_ms=self._compaction_ms,  # type: ignore[arg-type]
            recovery_attempts=self._cycle.attempts, messages=self.memory.agent, settings=self.profile.compaction,
            edited_tokens=edited_tokens(self.session, self.profile.compaction),
        )
        self._cycle = self._cycle.after(decision)
        return decision

    def record_tool_result(self, call: ToolCall, content: Sequence[Mapping[str, Any]], *, is_error: bool = False,
                           details: Any = None) -> None:
        """Append the result of one tool call (pi's ``toolResult`` message)."""
        self.start()
        message: dict[str, Any] = {"role": "toolResult", "toolCallId": call.id, "toolName": call.name,
                                   "content": [dict(b) for b in content]}
        if details is not None:
            message["details"] = details
        message["isError"] = is_error
        message["timestamp"] = self._now()
        self._append(message)

    def tool_error(self, kind: str, **values: str) -> list[dict]:
        """The profile's ``runtime.tool_errors.<kind>`` text as content blocks."""
        return [{"type": "text", "text": getattr(self.runtime.tool_errors, kind).render(values)}]

    # ----------------------------------------------------------------- compaction

    def auto_compact(self, step: Next) -> bool:
        """Carry out a ``compact`` step; True when the agent goes on (a retry, or queued messages)."""
        compacted = self._compact(step.reason or "threshold", will_retry=step.retry)
        if compacted and step.retry:
            return True
        if self._queue:
            return True
        self._end(Next("stop", step.reply))
        return False

    def compact(self, instructions: Optional[str] = None) -> CompactionOutcome:
        """A manual compaction (``/compact [instructions]``): the driver's
        :class:`~pipeline.compaction.CompactionOutcome` (``nothing`` set when there was nothing to compact)."""
        self.start()
        return cast("CompactionOutcome", self._compact("manual", instructions=instructions))  # manual: never None

    def _summarizer(self) -> Any:
        if self.summarizer is None:
            from pipeline.compaction import make_summary_client

            self.summarizer = make_summary_client(self.profile, self.profile.summarizer)
        return self.summarizer

    def _compact(self, reason: str, *, will_retry: bool = False,
                 instructions: Optional[str] = None) -> Optional[CompactionOutcome]:
        """The driver's outcome (:func:`pipeline.compaction.compact`, the current model's settings),
        or ``None``: an automatic compaction found nothing to do or the provider failed (no retry)."""
        from pipeline.compaction import NothingToCompact, compact, plan_session

        current = self.model.current()
        settings = self.profile.compaction.for_model(current.provider, current.id)
        if isinstance(plan_session(self.session, settings), NothingToCompact) and reason != "manual":
            return None  # pi decides to compact, finds nothing to summarize: no events, no retry
        self._emit(ev.CompactionStart(reason))
        try:
            done = compact(self.session, self.profile, self._summarizer(), provider=current.provider, model=current.id,
                           window=current.context_window, instructions=instructions, thinking_level=self.thinking_level)
        except PipelineError as err:  # the provider (or the session) failed: the session is unchanged
            self._emit(ev.CompactionEnd(reason, error=str(err)))
            if reason == "manual":
                raise
            return None  # as pi: an automatic compaction ends with its error, no retry
        except Exception as err:  # a bug, not a failed compaction: said, then raised
            self._emit(ev.CompactionEnd(reason, error=f"internal error: {type(err).__name__}: {err}"))
            raise
        if done.nothing is not None and not done.summarized:  # the plan found nothing (hybrid: after masking)
            if done.masked:
                self._sync()
            self._emit(ev.CompactionEnd(reason, error=done.nothing.message))
            return done
        self._sync()
        # a summary: pi's count before a failed reply is dropped; a mask: its estimate (usage counts the unmasked)
        after = self.tokens_after(done.settings) if done.entry is not None else done.mask.tokens_after if done.mask else None
        if will_retry:
            self.memory.drop_failed_reply()
        self._emit(ev.CompactionEnd.of(reason, done, after, will_retry))
        return done

    def context_tokens(self) -> float:
        """The estimated size of the context now (pi's ``estimateContextTokens``)."""
        from pipeline.compaction import estimate_context

        return estimate_context(self.memory.agent, self.profile.compaction).tokens

    def tokens_after(self, settings: Any = None) -> int:
        """pi's ``estimatedTokensAfter``: the context estimated message by message (every usage recorded
        before counts what was summarized); ``estimate_on: projection`` counts system messages too."""
        from pipeline.compaction.tokens import tokens_after_compaction

        return tokens_after_compaction(self.memory.agent, settings if settings is not None else self.profile.compaction)

    # ----------------------------------------------------------------- navigation

    def navigate(self, target_id: str, *, summarize: bool = False,
                 instructions: Optional[str] = None) -> Optional[Navigated]:
        """Move to another point of the tree (pi's ``/tree``), with a branch summary when asked."""
        self.start()
        from pipeline.compaction import branch_session, navigation_leaf

        if summarize:
            done = branch_session(self.session, self.profile, self._summarizer(), target_id,
                                  custom_instructions=instructions)
        else:
            target = self.session.get(target_id)
            if target is None:
                self.session.resolve_id(target_id)  # raises the located error
            leaf = navigation_leaf(target)
            self.session.branch(leaf) if leaf is not None else self.session.reset_leaf()
            done = None
        self._run = None
        self._sync()
        return done

