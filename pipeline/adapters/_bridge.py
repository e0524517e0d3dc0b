"""The part every adapter shares: a framework's message list kept as a pi session.

A framework owns its loop and its message list; the :class:`ContextBridge` keeps the same
conversation as a pi 0.84.0 JSONL session (the record), and applies the profile's policy
to it through the facade:

* :meth:`ContextBridge.system_prompt` renders the profile's system prompt for the tools the
  framework will really send;
* :meth:`ContextBridge.sync` appends the messages the framework added (pi message JSON,
  converted by the adapter) and, given the prompt that starts a new run, first runs the
  compaction check our own loop runs after a run (:func:`pipeline.runtime.policy.check_compaction`,
  phase ``after_run``, on the last reply with the in-memory context), then appends the
  prompt, so the entries come in the order our loop writes them;
  :meth:`ContextBridge.after_run` runs the same check at once (a host that knows a run
  just ended). When it compacts (:meth:`Pipeline.compact` for this model: its
  ``compaction.model_overrides`` entry, ``compaction.strategy``), the
  new context comes back: the profile's summary message and the kept messages
  (:meth:`Pipeline.project`), which the adapter hands back to the framework.

A provider error surfaces in the framework as an exception, not as a reply; the adapter
hands it to :meth:`ContextBridge.recover` from the framework's hook around a model call.
When the error reports a context overflow (:func:`pipeline.runtime.classify.is_context_overflow`),
the bridge records it as pi's failed reply, runs the same check our loop runs on it
(:func:`~pipeline.runtime.policy.check_compaction` with the recovery cycle's attempts), and when
that says compact-and-retry it compacts and returns the context to send again, the failed
reply left out (it stays in the session file, as in ours); at most
``compaction.overflow_retries`` times per cycle, then ``None``: the adapter lets the
framework see the error. Other errors are the framework's own business (its retries).
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence, TypeVar, Union, cast

from pipeline.compaction.driver import CompactionOutcome
from pipeline.errors import PipelineError
from pipeline.facade import Pipeline, compile_profile
from pipeline.prompt import RenderContext
from pipeline.llm.wire import error_message
from pipeline.llm.wire.history import pi_text as text_of
from pipeline.runtime.classify import is_context_overflow
from pipeline.runtime.policy import CompactionDecision, CurrentModel
from pipeline.runtime.driver import SessionDriver, open_session
from pipeline.runtime.host import ModelInfo
from pipeline.secrets import redact
from pipeline.session import SessionFile

__all__ = ["BridgeAdapter", "Compaction", "ContextBridge", "require"]

logger = logging.getLogger("pipeline.adapters")

JSON = dict


def require(module: str, extra: str) -> Any:
    """Import a framework, or fail naming the extra that installs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(
            f"this adapter needs {module.split('.')[0]}: pip install 'context-pipeline[{extra}]'"
        ) from err


@dataclass(frozen=True)
class Compaction:
    """One compaction the bridge ran: the check's decision and the driver's outcome."""

    decision: CompactionDecision
    result: CompactionOutcome
    messages: tuple[JSON, ...]


class ContextBridge:
    """A framework conversation recorded as a pi session, with the profile's policy.

    ``profile``: a :class:`Pipeline`, a compiled profile or a profile name/path;
    ``session``: a :class:`SessionFile` or a path (a missing or empty file starts a new
    session: :func:`pipeline.runtime.driver.open_session`); ``context_window``
    (and ``model``/``provider``, the reply's identity in the session) describe the model the
    framework talks to; ``client``: the summary client (default: the profile's summarizer);
    ``context``: a :class:`RenderContext` for everything but the tools (default: ``cwd``);
    ``thinking_level``: recorded when the session is new (with the model);
    ``tool_snippets``: one-line snippets of tools the profile's catalog does not describe.
    The session, the model, the clock, the check, the recovery cycle and compaction are the
    bridge's :class:`~pipeline.runtime.driver.SessionDriver`, the one a conversation holds.
    """

    def __init__(
        self, profile: Union[Pipeline, Any, str], session: Union[SessionFile, str, os.PathLike], *,
        context_window: int, model: str = "model", provider: str = "openai", api: str = "openai-completions",
        max_tokens: int = 0, thinking_level: str = "off", cwd: Optional[str] = None, client: Any = None,
        context: Optional[RenderContext] = None, tool_snippets: Optional[Mapping[str, str]] = None,
    ) -> None:
        self.pipeline = profile if isinstance(profile, Pipeline) else compile_profile(profile)
        self.cwd = cwd or os.getcwd()
        opened = open_session(session, self.cwd)
        info = ModelInfo(id=model, provider=provider, api=api, context_window=context_window, max_tokens=max_tokens)
        # a new session records the host's level; a continued one keeps the level it recorded
        self.driver = SessionDriver(self.pipeline.run_plan, opened, model=info, clock=self._tick, summarizer=client,
                                    thinking_level=None if opened.entries else thinking_level)
        self.context = context or RenderContext(cwd=self.cwd)
        self.tool_snippets = dict(tool_snippets or {})
        self.compactions: list[Compaction] = []
        self.thinking_level = thinking_level
        self._last_ms = 0

    @classmethod
    def open(cls, profile: Union[Pipeline, Any, str], session: Union[SessionFile, str, os.PathLike],
             **options: Any) -> "ContextBridge":
        """A bridge, started (:meth:`start`)."""
        return cls(profile, session, **options).start()

    def start(self) -> "ContextBridge":
        """The bridge's first write, once: a new session starts with its model and thinking
        level, as pi's does. :meth:`sync`, :meth:`after_run` and :meth:`recover` call it first."""
        self.driver.start()
        return self

    @property
    def session(self) -> SessionFile:
        return self.driver.session

    @property
    def model(self) -> CurrentModel:
        """The policy's view of the framework's model."""
        return self.driver.model.current()

    @property
    def api(self) -> str:
        return self.driver.model.api

    # ------------------------------------------------------------------ prompt

    def system_prompt(self, tools: Sequence[str]) -> str:
        """The profile's system prompt for exactly ``tools`` (in the order given)."""
        snippets = {**self.context.tool_snippets, **self.tool_snippets}
        context = self.context.replace(tools=tuple(tools), tool_snippets=snippets)
        return self.pipeline.render_system_prompt(context)

    # ------------------------------------------------------------------ messages

    def _tick(self) -> float:
        self._last_ms = max(int(time.time() * 1000), self._last_ms + 1)
        return float(self._last_ms)

    def now(self) -> int:
        """A message timestamp (epoch ms), strictly increasing across the bridge's messages."""
        return int(self.driver.now())

    def reply_fields(self) -> JSON:
        """pi's identity fields of an assistant reply from this model."""
        return {"api": self.api, "provider": self.model.provider, "model": self.model.id}

    def sync(self, new: Sequence[JSON], prompt: Optional[Sequence[JSON]] = None) -> Optional[list[JSON]]:
        """Append ``new`` (pi message JSON the framework added) to the session; with
        ``prompt`` (the messages that start a new run), check and maybe compact first, then
        append the prompt. Returns the context after a compaction (pi LLM messages, the
        prompt included), else ``None``."""
        self.start()
        for message in new:
            self.driver.append(message)
        if prompt is None:
            return None
        compacted = self._check()
        for message in prompt:
            self.driver.append(message)
        return None if compacted is None else self._compacted(*compacted)

    # ------------------------------------------------------------------ overflow recovery

    def recover(self, error: BaseException) -> Optional[list[JSON]]:
        """A model call raised ``error``. A context overflow is recorded as the failed reply
        and, when the check says compact-and-retry, compacted: the context to send again (pi
        LLM messages, the failed reply left out). ``None``: not an overflow, recovery used up
        (``compaction.overflow_retries``) or nothing to compact; the caller re-raises."""
        self.start()
        reply = self.error_reply(provider_error_text(error, self.model.provider))
        if not is_context_overflow(reply, self.model.context_window):
            return None
        self.driver.append(reply)
        decision = self.decision(attempts=self.driver.cycle.attempts, record=True)
        if decision.action != "compact" or not decision.retry:
            return None
        result = self._compact_for_retry(decision)
        if result is None:
            return None
        messages = self._compacted(decision, result)
        if messages and messages[-1].get("role") == "assistant" and messages[-1].get("stopReason") == "error":
            messages = messages[:-1]  # the failed reply is not sent again (our loop drops it from memory)
        return messages

    def _compact_for_retry(self, decision: CompactionDecision) -> Optional[CompactionOutcome]:
        """The compaction, or ``None`` when it did nothing or the provider failed (the session
        unchanged; logged): then, as in our loop, there is no retry and the caller re-raises the
        overflow. Any other exception is a bug and propagates."""
        try:
            result = self._compact(decision)
        except PipelineError as err:
            logger.warning("compaction for the overflow retry failed: %s", err)
            return None
        return result if result is not None and result.did_anything else None

    def compact(self, instructions: Optional[str] = None) -> CompactionOutcome:
        """Compact the session now, as the profile says for this model (:meth:`SessionDriver.compact`:
        ``compaction.model_overrides``, ``compaction.strategy``, the context window)."""
        self.start()
        return cast(CompactionOutcome, self.driver.compact("manual", instructions=instructions))

    def _compact(self, decision: CompactionDecision) -> Optional[CompactionOutcome]:
        """The compaction a check asked for (the driver's; a failure raised)."""
        return self.driver.compact(decision.reason or "threshold", will_retry=decision.retry, raise_failure=True)

    def error_reply(self, text: str) -> JSON:
        """pi's failed reply from this model with ``text`` as its ``errorMessage``."""
        return {"role": "assistant", "content": [], **self.reply_fields(), "usage": usage_json(),
                "stopReason": "error", "errorMessage": text, "timestamp": self.now()}

    def after_run(self) -> Optional[list[JSON]]:
        """The check our loop runs after a run, on the session as it is: the context after a
        compaction (pi LLM messages), else ``None``."""
        self.start()
        compacted = self._check()
        return None if compacted is None else self._compacted(*compacted)

    def _compacted(self, decision: CompactionDecision, result: Any) -> list[JSON]:
        messages = [m.raw for m in self.pipeline.project(self.session).messages]
        self.compactions.append(Compaction(decision, result, tuple(messages)))
        return messages

    def _check(self) -> Optional[tuple[CompactionDecision, Any]]:
        decision = self.decision()
        if decision.action != "compact":
            return None
        result = self._compact(decision)
        return (decision, result) if result is not None and result.did_anything else None  # else nothing yet

    def decision(self, attempts: int = 0, *, record: bool = False) -> CompactionDecision:
        """What the check would decide now (on the session's last reply, ``attempts``
        compact-and-retry attempts used in this cycle), for callers and tests; ``record``:
        the decision counts in the recovery cycle."""
        reply = _last_reply(self.session.path_to())
        if reply is None:
            return CompactionDecision()
        cycle = self.driver.cycle
        decision = self.driver.check(reply, "after_run", self.pipeline.project(self.session).agent_messages,
                                     attempts=attempts)
        if not record:
            self.driver.cycle = cycle
        return decision


_Adapter = TypeVar("_Adapter", bound="BridgeAdapter")


class BridgeAdapter:
    """The one constructor of every adapter: a framework's hook object over a new bridge.

    Each adapter (pydantic-ai's capability, LangChain's middleware, the OpenAI Agents SDK's
    session) takes its :class:`ContextBridge` as its one argument; this mixin gives it
    ``create``, which builds the bridge from the profile and the session first.
    """

    __slots__ = ()

    @classmethod
    def create(
        cls: type[_Adapter], profile: Any, session: Any, *, context_window: int, model: str = "model",
        provider: str = "openai", api: str = "openai-completions", max_tokens: int = 0, thinking_level: str = "off",
        cwd: Optional[str] = None, client: Any = None, context: Any = None,
        tool_snippets: Optional[Mapping[str, str]] = None,
    ) -> _Adapter:
        """The adapter over a new :class:`ContextBridge`.

        ``profile``: a :class:`~pipeline.facade.Pipeline`, a compiled profile or a profile
        name/path; ``session``: a :class:`~pipeline.session.SessionFile` or a path (created
        when missing); ``context_window``: the model's context size in tokens (the
        compaction threshold is measured against it); ``model``, ``provider``, ``api``,
        ``max_tokens``: the model's identity in the session's replies; ``thinking_level``:
        recorded when the session is new; ``cwd``: the working directory of the prompt and
        a new session (default: the process's); ``client``: the summary client compaction
        uses (:func:`pipeline.compaction.engine.make_summary_client`, or any ``SummaryClient``).
        Without it the profile's ``summarizer`` writes the summary: offline, with no model
        call, for ``builtin:default``. ``context``: a :class:`~pipeline.prompt.RenderContext`
        for everything but the tools; ``tool_snippets``: one line for each tool of your own
        that the profile's catalog does not describe.
        """
        bridge = ContextBridge(
            profile, session, context_window=context_window, model=model, provider=provider, api=api,
            max_tokens=max_tokens, thinking_level=thinking_level, cwd=cwd, client=client, context=context,
            tool_snippets=tool_snippets,
        )
        return cast(Callable[[ContextBridge], _Adapter], cls)(bridge)


def _last_reply(branch: Sequence[Any]) -> Optional[Any]:
    for entry in reversed(branch):
        message = getattr(entry, "message", None)
        if message is not None and getattr(message, "role", None) == "assistant":
            return message
    return None


def provider_error_text(error: BaseException, provider: str = "openai") -> str:
    """The provider's error as pi words it (``<status>: <error JSON>`` for an HTTP error
    whose body the framework kept), else the exception's text; secrets redacted."""
    status, body = getattr(error, "status_code", None), getattr(error, "body", None)
    if isinstance(status, int) and isinstance(body, dict):
        text = error_message(provider, status, json.dumps(body if "error" in body else {"error": body}))
    else:
        text = str(error) or type(error).__name__
    return redact(" ".join(text.split()))


def usage_json(input: int = 0, output: int = 0, cache_read: int = 0, cache_write: int = 0) -> JSON:
    """pi's usage record (no prices here: cost 0, as pi records for an unknown model)."""
    total = input + output + cache_read + cache_write
    cost = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    return {"input": input, "output": output, "cacheRead": cache_read, "cacheWrite": cache_write,
            "totalTokens": total, "cost": cost}


