"""Wall-clock deadlines of provider calls (standard library only, so importing it is cheap).

A :class:`Deadline` is a point on the monotonic clock. :func:`within` makes one current
for a block; nested blocks keep the earlier one, so a compaction
(``summarizer.compaction_deadline_s``, :func:`compaction_deadline`) bounds every summary
call in it, and each call (``summarizer.call_deadline_s``, every attempt and retry wait
included) is bounded as well. The HTTP clients read :func:`current_deadline` at every
socket operation (:class:`~pipeline.llm.limits.BoundedTransport`), between the chunks of
a body and before each retry wait; when it has passed the call ends with
:class:`LLMDeadlineError`, which is never retried.

Deadlines are measured on :func:`time.monotonic` unless a block runs under
:func:`deadline_clock`: the deadlines made inside it are measured on the clock given (the
seam the deadline tests use to check this arithmetic without sleeping). The socket
timeouts derived from a deadline are still real ones.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Callable, ContextManager, Iterator

from pipeline.llm.errors import LLMError

CALL_SETTING = "summarizer.call_deadline_s"
COMPACTION_SETTING = "summarizer.compaction_deadline_s"
#: A timeout that fires this close to the deadline is the deadline's doing.
SLACK = 0.05

#: Seconds on a monotonic clock.
Clock = Callable[[], float]
_CLOCK: ContextVar[Clock] = ContextVar("pipeline_llm_deadline_clock", default=time.monotonic)


@dataclass(frozen=True)
class Deadline:
    """A point on the monotonic clock (or ``clock``), with the setting that put it there."""

    at: float
    seconds: float
    setting: str
    clock: Clock = field(default=time.monotonic, compare=False, repr=False)

    def left(self) -> float:
        return self.at - self.clock()

    def expired(self, slack: float = 0.0) -> bool:
        return self.left() <= slack


class LLMDeadlineError(LLMError):
    """No complete answer before the call's or the compaction's deadline (not retried)."""

    code = "provider.deadline"

    def __init__(self, label: str, deadline: Deadline, detail: str = "") -> None:
        self.deadline = deadline
        tail = f": {detail}" if detail else ""
        super().__init__(
            f"{label}: timed out: no complete answer within the deadline of {deadline.seconds:g}s"
            f" ({deadline.setting}){tail}",
            hint=f"raise {deadline.setting} if the provider is just slow",
        )


_CURRENT: ContextVar[Deadline | None] = ContextVar("pipeline_llm_deadline", default=None)


@contextmanager
def deadline_clock(clock: Clock) -> Iterator[Clock]:
    """Measure the deadlines made in the block (:func:`within`) on ``clock``, not :func:`time.monotonic`."""
    token = _CLOCK.set(clock)
    try:
        yield clock
    finally:
        _CLOCK.reset(token)


def current_deadline() -> Deadline | None:
    """The deadline in force (the earliest of the enclosing :func:`within` blocks), or None."""
    return _CURRENT.get()


@contextmanager
def within(seconds: float | None, setting: str = CALL_SETTING) -> Iterator[Deadline | None]:
    """Make a deadline ``seconds`` from now current for the block (unless an earlier one is)."""
    current = _CURRENT.get()
    if seconds is None:
        yield current
        return
    clock = _CLOCK.get()
    new = Deadline(clock() + seconds, float(seconds), setting, clock)
    earlier = current is None or (new.at < current.at if current.clock is clock else new.left() < current.left())
    chosen = new if earlier else current
    token = _CURRENT.set(chosen)
    try:
        yield chosen
    finally:
        _CURRENT.reset(token)


def compaction_deadline(seconds: float | None) -> ContextManager[Deadline | None]:
    """:func:`within` for one whole compaction (``summarizer.compaction_deadline_s``)."""
    return within(seconds, COMPACTION_SETTING)


def bounded_timeout(timeout: float | None, error: type[Exception]) -> float | None:
    """``timeout`` cut to what is left of the current deadline; raise ``error`` when nothing is."""
    deadline = _CURRENT.get()
    if deadline is None:
        return timeout
    left = deadline.left()
    if left <= 0:
        raise error("the deadline has passed")
    return left if timeout is None else min(timeout, left)


def check_deadline(label: str, doing: str) -> None:
    """Raise :class:`LLMDeadlineError` when the current deadline has passed."""
    deadline = _CURRENT.get()
    if deadline is not None and deadline.expired():
        raise LLMDeadlineError(label, deadline, doing)
