"""What the runtime does after a reply: compaction check, overflow recovery, turn retries (docs/pi-rules.md#after-a-run-the-compaction-check).

Everything here is a pure function of its inputs: no I/O, no clock. Delays are returned in
milliseconds for the driver to wait (abortably); messages are never removed here, the
decisions say when the driver must drop the failed reply from its in-memory context.

The driver's order after an agent run (pi's ``AgentSession._handlePostAgentRun``):

1. feed every assistant reply, as it ends, to :meth:`TurnRetry.on_reply` and
   :meth:`RecoveryCycle.on_reply`; feed every user message to
   :meth:`RecoveryCycle.on_user_message`;
2. after the run, :meth:`TurnRetry.after_run` on the last reply; ``retry`` → wait, drop the
   reply, continue the agent (stop here);
3. otherwise :func:`check_compaction` with ``phase="after_run"``; record it with
   :meth:`RecoveryCycle.after`; ``compact`` → compact (dropping the reply first when
   ``drop_reply``), then continue the agent when ``retry`` (or when messages are queued);
   ``fail`` → report that recovery failed.

Before a new user prompt (agent idle), run :func:`check_compaction` with
``phase="before_prompt"`` on the last assistant message in memory (aborted ones
included); the prompt itself is then sent, so the agent is not continued even when the
decision says ``retry`` (pi still reports ``willRetry`` on its compaction events).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Literal, Mapping, Optional, Sequence

from pipeline.compaction.tokens import context_tokens, estimate_context
from pipeline.model.run_plan import CompactionCheck, RetrySettings
from pipeline.runtime.classify import (
    Reply,
    as_reply,
    is_context_overflow,
    is_recoverable_length,
    is_retryable_error,
    is_turn_retryable,
)
from pipeline.session.entries import CompactionEntry, CustomEntry, Entry
from pipeline.session.masks import MASK_TYPE
from pipeline.js import date_ms, js_get
from pipeline.session.messages import AgentMessage, AssistantMessage, parse_message

Phase = Literal["after_run", "before_prompt"]
Action = Literal["none", "compact", "fail"]
Reason = Literal["threshold", "overflow"]

# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class CurrentModel:
    """The model the session uses now: identity and limits (pi's ``Model``).

    ``context_window`` and ``max_tokens`` (the model's own max output) of ``0`` mean unknown.
    """

    provider: str
    id: str
    context_window: int = 0
    max_tokens: int = 0

    def produced(self, reply: AssistantMessage) -> bool:
        """Whether ``reply`` came from this very model (same provider and model id)."""
        return reply.provider == self.provider and reply.model == self.id


def latest_compaction_time(branch: Sequence[Entry]) -> Optional[float]:
    """Epoch ms of the latest ``compaction`` entry on the branch (root → leaf), or ``None``
    when there is none. An unparseable timestamp gives ``nan`` (pi's ``Invalid Date``:
    every comparison with it is false). A mask entry (``compaction.strategy``
    ``mask_tool_results``, :mod:`pipeline.session.masks`) counts as a compaction: replies
    before it report the unmasked size."""
    for entry in reversed(branch):
        if isinstance(entry, CompactionEntry) or (isinstance(entry, CustomEntry) and entry.custom_type == MASK_TYPE):
            ms = date_ms(js_get(entry.raw, "timestamp"))
            return math.nan if ms is None else float(ms)
    return None


_MISSING = object()


def _not_after(message: AgentMessage, compaction_ms: float) -> bool:
    """JS ``message.timestamp <= compactionMs``: a missing timestamp is never older, ``null`` is 0."""
    value = message.raw.get("timestamp", _MISSING)
    if value is _MISSING:
        return False
    if value is None:
        value = 0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return value <= compaction_ms

# --------------------------------------------------------------------------- compaction check


@dataclass(frozen=True)
class CompactionDecision:
    """The outcome of the compaction check (docs/pi-rules.md#after-a-run-the-compaction-check).

    ``action``: ``none`` | ``compact`` | ``fail`` (recovery already used up: report it);
    ``reason``: ``threshold`` | ``overflow`` (``None`` with ``none``);
    ``drop_reply``: remove the failed reply from the in-memory context before compacting
    (it stays in the session file); ``retry``: after compacting, continue the agent from
    the last user/tool message (pi's ``willRetry``); ``tokens``: the context size the
    threshold test used (``None`` when it did not run).
    """

    action: Action = "none"
    reason: Optional[Reason] = None
    drop_reply: bool = False
    retry: bool = False
    tokens: Optional[float] = None


NOTHING = CompactionDecision()
_FAIL = CompactionDecision("fail", "overflow")
_DEFAULT_SETTINGS = CompactionCheck()  # the block's defaults


def check_compaction(
    reply: Reply,
    *,
    phase: Phase,
    model: Optional[CurrentModel],
    latest_compaction_ms: Optional[float] = None,
    recovery_attempts: int = 0,
    messages: Sequence[AgentMessage | Mapping[str, Any]] = (),
    settings: CompactionCheck = _DEFAULT_SETTINGS,
    edited_tokens: Optional[float] = None,
) -> CompactionDecision:
    """pi's ``_checkCompaction`` (docs/pi-rules.md#after-a-run-the-compaction-check) as a decision.

    1. compaction disabled → nothing (overflow recovery is off too);
    2. ``after_run`` and the reply was aborted → nothing;
    3. the reply is not newer than the branch's latest compaction → nothing;
    4. recoverable failure from the current model (overflow, docs/pi-rules.md#overflow, or a ``length`` stop below
       the model's max output): a ``stop`` reply compacts without retry and is kept;
       otherwise ``recovery_attempts >= settings.overflow_retries`` → ``fail``; else drop
       the reply, compact, retry;
    5. threshold: compact (no retry) when the context exceeds ``window - reserve_tokens``;
       the reply's usage gives the size unless the reply is an error or reports zero
       tokens, then the estimate of ``messages`` (the in-memory context) does — no usable
       anchor in it, or one not newer than the latest compaction → nothing.

    ``reply``: the last assistant message (typed or its JSON object); ``phase``: after an
    agent run or before a new user prompt; ``model``: the current model (``None``: none
    selected — never "same model", window 0); ``latest_compaction_ms``: see
    :func:`latest_compaction_time`; ``recovery_attempts``: :attr:`RecoveryCycle.attempts`;
    ``messages``: the in-memory context, typed or JSON; ``settings``: the run plan's
    compaction check (:class:`~pipeline.model.run_plan.CompactionCheck`: ``enabled``, the
    trigger, ``overflow_retries`` and the estimate's ``chars_per_token``/``image_chars``/``estimate_on``); ``edited_tokens``
    (``estimate_on: projection`` and the branch has context edits): the projection's
    estimate, which the threshold step uses instead of the reply's usage (pi 1.x).
    """
    msg = as_reply(reply)
    if model is not None:  # the model's own `compaction.model_overrides` entry, key by key
        settings = settings.for_model(model.provider, model.id)
    if not settings.enabled or (phase == "after_run" and msg.stop_reason == "aborted"):
        return NOTHING
    if latest_compaction_ms is not None and _not_after(msg, latest_compaction_ms):
        return NOTHING
    if model is not None and _recoverable(msg, model):
        return _recover(msg, recovery_attempts, settings)
    if edited_tokens is not None:
        return _compare(edited_tokens, model, settings)
    return _threshold(msg, model, latest_compaction_ms, messages, settings)


def _recoverable(msg: AssistantMessage, model: CurrentModel) -> bool:
    if not model.produced(msg):
        return False
    return is_context_overflow(msg, model.context_window) or is_recoverable_length(msg, model.max_tokens)


def _recover(msg: AssistantMessage, attempts: int, settings: CompactionCheck) -> CompactionDecision:
    if msg.stop_reason == "stop":
        return CompactionDecision("compact", "overflow")
    if attempts >= settings.overflow_retries:
        return _FAIL
    return CompactionDecision("compact", "overflow", drop_reply=True, retry=True)


def _threshold(
    msg: AssistantMessage,
    model: Optional[CurrentModel],
    compaction_ms: Optional[float],
    messages: Sequence[AgentMessage | Mapping[str, Any]],
    settings: CompactionCheck,
) -> CompactionDecision:
    tokens = context_tokens(msg.usage) if msg.usage is not None else 0
    if msg.stop_reason == "error" or tokens == 0:
        tokens = _estimated_tokens(messages, compaction_ms, settings)
        if tokens is None:
            return NOTHING
    return _compare(tokens, model, settings)


def _compare(tokens: float, model: Optional[CurrentModel], settings: CompactionCheck) -> CompactionDecision:
    window = model.context_window if model is not None else 0
    if settings.fires(tokens, window):
        return CompactionDecision("compact", "threshold", tokens=tokens)
    return replace(NOTHING, tokens=tokens)


def _estimated_tokens(
    messages: Sequence[AgentMessage | Mapping[str, Any]], compaction_ms: Optional[float], settings: CompactionCheck
) -> Optional[float]:
    """The in-memory context estimate, or ``None`` without a usable anchor newer than the
    latest compaction (a kept pre-compaction reply reports the old, larger context)."""
    typed = [m if hasattr(m, "raw") else parse_message(m) for m in messages]
    estimate = estimate_context(typed, settings)
    if estimate.last_usage_index is None:  # pi 1.x: the plain estimate; 0.84.0: no usage data, no compaction
        return estimate.tokens if settings.estimate_on == "projection" else None
    anchor = typed[estimate.last_usage_index]
    if compaction_ms is not None and _not_after(anchor, compaction_ms):
        return None
    return estimate.tokens


@dataclass(frozen=True)
class RecoveryCycle:
    """How many compact-and-retry attempts the current cycle has used (pi keeps a flag).

    A cycle ends with a user message or a clean reply (any stop other than ``error`` or
    ``length``); ``check_compaction(recovery_attempts=cycle.attempts)`` then allows
    ``settings.overflow_retries`` attempts (pi: one).
    """

    attempts: int = 0

    def on_user_message(self) -> "RecoveryCycle":
        """A user message starts: a new cycle."""
        return RecoveryCycle()

    def on_reply(self, reply: Reply) -> "RecoveryCycle":
        """An assistant reply ended: a clean one starts a new cycle."""
        return self if as_reply(reply).stop_reason in ("error", "length") else RecoveryCycle()

    def after(self, decision: CompactionDecision) -> "RecoveryCycle":
        """Count the attempt a compact-and-retry decision starts (before compaction runs)."""
        return RecoveryCycle(self.attempts + 1) if decision.retry else self


# --------------------------------------------------------------------------- turn retries


RetryAction = Literal["none", "retry", "give_up"]


@dataclass(frozen=True)
class RetryDecision:
    """The outcome of :meth:`TurnRetry.after_run`.

    ``retry``: wait ``delay_ms``, drop the failed reply from memory (it stays in the file)
    and continue the agent; this is retry number ``attempt`` of ``max_attempts``.
    ``give_up``: retries were used (``attempt`` of them) and the run still ended in an
    error: report the final error. ``none``: nothing to do. ``state`` is the counter
    after the decision. In every case but ``retry`` the compaction check runs next.
    """

    action: RetryAction
    state: "TurnRetry"
    attempt: int = 0
    max_attempts: int = 0
    delay_ms: float = 0

    @property
    def drop_reply(self) -> bool:
        return self.action == "retry"


@dataclass(frozen=True)
class TurnRetry:
    """The retry counter of agent turns (docs/pi-rules.md#retries); ``attempt`` = retries made so far."""

    attempt: int = 0

    def on_reply(self, reply: Reply) -> tuple["TurnRetry", Optional[int]]:
        """An assistant reply ended. Any reply but an error resets the counter; the second
        value is the number of retries that just succeeded (``None`` when there were none)."""
        if as_reply(reply).stop_reason == "error" or self.attempt == 0:
            return self, None
        return TurnRetry(), self.attempt

    def after_run(self, reply: Reply, settings: RetrySettings, context_window: int | float) -> RetryDecision:
        """After an agent run, on its last reply: retry a transient non-overflow error with
        backoff, or give up once ``settings.max_retries`` retries are spent."""
        msg = as_reply(reply)
        if settings.enabled and is_turn_retryable(msg, context_window):
            attempt = self.attempt + 1
            if attempt <= settings.max_retries:
                return RetryDecision(
                    "retry", TurnRetry(attempt), attempt, settings.max_retries, settings.delay_ms(attempt)
                )
        if msg.stop_reason == "error" and self.attempt > 0:
            return RetryDecision("give_up", TurnRetry(), self.attempt, settings.max_retries)
        return RetryDecision("none", self)

    def cancelled(self) -> tuple["TurnRetry", int]:
        """The wait was aborted: the counter resets; returns the attempt that was cancelled."""
        return TurnRetry(), self.attempt


def summary_retry_delay(reply: Reply, retries_made: int, settings: RetrySettings) -> Optional[float]:
    """pi-ai ``retryAssistantCall`` for one summarisation call (docs/pi-rules.md#retries), after a response.

    Returns the wait before the next try when ``reply`` is a transient error and fewer
    than ``max_retries`` retries were made (and retries are enabled), else ``None``: the
    response is final (success, abort, permanent error, or budget spent). Unlike agent
    turns, an overflow text that contains a transient substring is retried too.
    """
    budget = settings.max_retries if settings.enabled else 0
    if retries_made >= budget or not is_retryable_error(reply):
        return None
    return settings.delay_ms(retries_made + 1)


__all__ = [
    "CompactionDecision", "CurrentModel", "NOTHING", "Phase", "RecoveryCycle", "RetryDecision",
    "TurnRetry", "check_compaction", "latest_compaction_time", "summary_retry_delay",
]
