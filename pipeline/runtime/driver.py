"""The session driver: what every host of the policy does to its session, in one place.

A *host* runs an agent loop on a pi session: :class:`~pipeline.runtime.conversation.Conversation`
(our own loop: ``pipeline run``, ``pipeline chat``, :class:`~pipeline.runtime.loop.Agent`) and
:class:`~pipeline.adapters._bridge.ContextBridge` (a framework's loop). Each holds one
:class:`SessionDriver`, which owns:

* **the session**: opening or creating it (:func:`open_session`: a missing or empty file
  starts a new session, as pi does; an existing one must be appendable), and the first write
  (:meth:`SessionDriver.start`: a new session starts with its model and thinking level);
* **the clock**, passed in: message timestamps (:meth:`SessionDriver.now`) and the entries the
  driver writes (:meth:`SessionDriver.writing`, :meth:`pipeline.session.SessionFile.stamping`);
  the session given is never changed outside a write;
* **the model and the thinking level**: the model a host talks to now (a host may switch it),
  the level it asked for, the level the branch recorded, and pi 1.x's record of a change
  (``runtime.record_thinking_level``);
* **the compaction check** after a run and before a prompt (:meth:`SessionDriver.check`: pi's
  rule with the current model's settings, the latest compaction, the projection's estimate)
  and **overflow recovery**'s cycle (:class:`~pipeline.runtime.policy.RecoveryCycle`, fed by
  :meth:`SessionDriver.append`);
* **compaction** itself (:meth:`SessionDriver.compact`): :func:`pipeline.compaction.driver.compact`
  with the current model's settings, its events, what a failure means.

What the host keeps is its own: the in-memory context and the wire (the conversation), the
framework's message list (the bridge).
"""

from __future__ import annotations

import logging
import os
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Optional, Sequence, Union

from pipeline.errors import PipelineError
from pipeline.js import iso_timestamp
from pipeline.model.run_plan import RunPlan
from pipeline.runtime import events as ev
from pipeline.runtime.edits import context_messages, edited_tokens, omit_attempt
from pipeline.runtime.host import ModelInfo
from pipeline.runtime.policy import CompactionDecision, Phase, RecoveryCycle, check_compaction, latest_compaction_time
from pipeline.session.entries import Entry, MessageEntry
from pipeline.session.messages import AgentMessage, AssistantMessage
from pipeline.session.store import SessionFile

if TYPE_CHECKING:  # pragma: no cover
    from pipeline.compaction.driver import CompactionOutcome
    from pipeline.llm.types import SummaryClient

__all__ = ["Clock", "SessionDriver", "ms_clock", "open_session"]

logger = logging.getLogger("pipeline.runtime")

#: A clock in epoch milliseconds.
Clock = Callable[[], float]


def ms_clock() -> float:
    """Now, in whole epoch milliseconds (pi's ``Date.now()``)."""
    return float(int(time.time() * 1000))


def open_session(session: Union[SessionFile, str, "os.PathLike[str]"], cwd: str) -> SessionFile:
    """A host's session: a :class:`SessionFile` as given; a path continued when it holds a session
    (which must be appendable), a new session where it is missing or empty (as pi does with an
    empty file)."""
    if isinstance(session, SessionFile):
        return session
    path = Path(session)
    if path.is_file() and path.stat().st_size == 0:
        path.unlink()
    if not path.exists():
        return SessionFile.create(path, cwd=cwd)
    opened = SessionFile.open(path)
    opened.ensure_appendable()
    return opened


class SessionDriver:
    """One host's session, model, clock and compaction (see the module docstring).

    ``thinking_level``: the level the host asks for (``None``: the one the session recorded);
    a new session records it (``off`` when ``None``). ``summarizer``: the summary client
    (default: the profile's ``summarizer``). ``listener`` is given the compaction events.
    """

    def __init__(self, plan: RunPlan, session: SessionFile, *, model: ModelInfo,
                 thinking_level: Optional[str] = None, clock: Clock = ms_clock,
                 summarizer: Optional[SummaryClient] = None, listener: Optional[ev.Listener] = None) -> None:
        self.plan, self.session, self.model, self.clock = plan, session, model, clock
        self.summarizer, self.listener = summarizer, listener
        self.cycle = RecoveryCycle()
        self.recorded_level: Optional[str] = None
        self._level, self._started = thinking_level, False
        self.thinking_level = thinking_level

    # ------------------------------------------------------------------ session and clock

    def now(self) -> int | float:
        """A message timestamp from the clock (epoch ms; whole numbers as ``int``)."""
        value = self.clock()
        return int(value) if float(value).is_integer() else value

    def _iso(self) -> str:
        return iso_timestamp(datetime.fromtimestamp(self.clock() / 1000, timezone.utc))

    @contextmanager
    def writing(self) -> Iterator[SessionFile]:
        """The session, its appended entries stamped by this driver's clock."""
        with self.session.stamping(self._iso):
            yield self.session

    @property
    def started(self) -> bool:
        return self._started

    def start(self) -> bool:
        """The first write, once: a new session starts with its model and thinking level, as pi's
        does. True when it wrote them (the host reads the context again)."""
        if self._started:
            return False
        self._started = True
        if self.session.entries:
            return False
        with self.writing() as session:
            session.append_model_change(self.model.provider, self.model.id)
            session.append_thinking_level_change(self._level or "off")
        return True

    def read(self) -> tuple[AgentMessage, ...]:
        """The context's agent messages on the session's current branch (pi 1.x's projection when the
        profile records the prompt or edits the context); notes the level the branch recorded."""
        messages, self.recorded_level = context_messages(self.session, self.plan.runtime)
        return messages

    def resolve_level(self) -> None:
        """The level the host asked for wins over the one the session recorded, as in pi."""
        self.thinking_level = self._level if self._level is not None else self.recorded_level

    def record_thinking_level(self) -> None:
        """``runtime.record_thinking_level`` (pi 1.x): the live level, when the branch records another
        one (both as the model runs them: ``off`` without reasoning)."""
        runtime = self.plan.runtime
        if runtime is None or not runtime.record_thinking_level or self.recorded_level is None:
            return
        live = self.model.runnable_level(self.thinking_level)
        if self.model.runnable_level(self.recorded_level) != live:
            with self.writing() as session:
                session.append_thinking_level_change(live)
            self.recorded_level = live

    # ------------------------------------------------------------------ writes

    def append(self, message: Mapping[str, Any]) -> MessageEntry:
        """Append a message (pi's message JSON); a user message starts a new recovery cycle, a reply
        counts in it."""
        with self.writing() as session:
            entry = session.append_message(dict(message))
        role = message.get("role")
        if role == "user":
            self.cycle = self.cycle.on_user_message()
        elif role == "assistant":
            self.cycle = self.cycle.on_reply(message)
        return entry

    def append_custom_message(self, message: Mapping[str, Any]) -> Entry:
        """Append an extension's message (a hook's ``custom`` message) the model sees."""
        with self.writing() as session:
            return session.append_custom_message(message.get("customType", ""), message.get("content"),
                                                 display=message.get("display"), details=message.get("details"))

    def edit_context(self, target_id: str, replacement: Any = None) -> Entry:
        """pi 1.x's ``context_edit`` entry (:meth:`SessionFile.append_context_edit`)."""
        with self.writing() as session:
            return session.append_context_edit(target_id, replacement)

    def omit(self, entry_id: Optional[str], reply: AssistantMessage) -> None:
        """``runtime.context_edits``: a failed attempt leaves the context through context edits."""
        runtime = self.plan.runtime
        if runtime is not None and runtime.context_edits and entry_id is not None:
            with self.writing() as session:
                omit_attempt(session, entry_id, reply)

    # ------------------------------------------------------------------ the check and compaction

    def check(self, reply: AssistantMessage | Mapping[str, Any], phase: Phase,
              messages: Sequence[AgentMessage], *, attempts: Optional[int] = None) -> CompactionDecision:
        """pi's compaction check on ``reply`` (the current model's settings, the latest compaction on
        the branch, ``messages`` the context); recorded in the recovery cycle. ``attempts``: the
        compact-and-retry attempts used (default: the cycle's)."""
        current = self.model.current()
        settings = self.plan.compaction.for_model(current.provider, current.id)
        decision = check_compaction(
            reply, phase=phase, model=current, latest_compaction_ms=latest_compaction_time(self.session.path_to()),
            recovery_attempts=self.cycle.attempts if attempts is None else attempts, messages=messages,
            settings=settings, edited_tokens=edited_tokens(self.session, settings),
        )
        self.cycle = self.cycle.after(decision)
        return decision

    def summary_client(self) -> SummaryClient:
        """The summary client: the host's, else the profile's ``summarizer`` (made once; the whole
        profile is loaded for it, :meth:`RunPlan.profile`)."""
        if self.summarizer is None:
            from pipeline.compaction.engine import make_summary_client

            profile = self.plan.profile()
            self.summarizer = make_summary_client(profile, profile.summarizer)
        return self.summarizer

    def emit(self, event: Any) -> None:
        """Hand ``event`` to the listener, if any."""
        if self.listener is not None:
            self.listener(event)

    def compact(self, reason: str, *, instructions: Optional[str] = None, will_retry: bool = False,
                reload: Callable[[], Sequence[AgentMessage]] = lambda: (), raise_failure: bool = False,
                ) -> Optional[CompactionOutcome]:
        """Compact the branch (:func:`pipeline.compaction.driver.compact`, the current model's settings) and
        say so to the listener. ``reload`` reads the context again after the session changed (its
        messages give pi's ``estimatedTokensAfter``). ``None``: an automatic compaction found nothing
        to do, or the provider failed (the session unchanged); a ``manual`` one (or
        ``raise_failure``) raises the provider's error instead."""
        from pipeline.compaction.driver import compact
        from pipeline.compaction.engine import plan_session
        from pipeline.compaction.plan import NothingToCompact
        from pipeline.compaction.tokens import tokens_after_compaction

        current, profile = self.model.current(), self.plan.profile()  # compaction reads the whole profile
        settings = profile.compaction.for_model(current.provider, current.id)
        if reason != "manual" and isinstance(plan_session(self.session, settings), NothingToCompact):
            return None  # pi decides to compact, finds nothing to summarize: no events, no retry
        self.emit(ev.CompactionStart(reason))
        try:
            with self.writing() as session:
                done = compact(session, profile, self.summary_client(), provider=current.provider,
                               model=current.id, window=current.context_window, instructions=instructions,
                               thinking_level=self.thinking_level)
        except PipelineError as err:  # the provider (or the session) failed: the session is unchanged
            self.emit(ev.CompactionEnd(reason, error=str(err)))
            if reason == "manual" or raise_failure:
                raise
            return None  # as pi: an automatic compaction ends with its error, no retry
        except Exception as err:  # a bug, not a failed compaction: said, then raised
            self.emit(ev.CompactionEnd(reason, error=f"internal error: {type(err).__name__}: {err}"))
            raise
        if done.nothing is not None and not done.summarized:  # the plan found nothing (hybrid: after masking)
            if done.masked:
                reload()
            self.emit(ev.CompactionEnd(reason, error=done.nothing.message))
            return done
        messages = reload()
        # a summary: pi's count before a failed reply is dropped; a mask: its estimate (usage counts the unmasked)
        after = (tokens_after_compaction(messages, done.settings) if done.entry is not None
                 else done.mask.tokens_after if done.mask else None)
        self.emit(ev.CompactionEnd.of(reason, done, after, will_retry))
        return done
