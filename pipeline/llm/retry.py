"""The one retry policy of the LLM layer: what is retried, how long to wait, when to stop.

Retried: HTTP 408, 409, 429 and every 5xx; timeouts; connection errors; an empty
completion once (see :class:`~pipeline.llm.errors.LLMEmptyCompletionError`). Not retried:
other 4xx (400/401/403/404... fail at once), invalid or unusable response JSON (usually a
wrong ``base_url`` answering with an HTML page; waiting does not fix it), a missing key.

Delay before retry ``n`` (1-based): the server's ``retry-after-ms`` or ``Retry-After``
(seconds or an HTTP date) when present, used as is; otherwise exponential backoff
``c = min(base_delay * 2**(n-1), max_delay)`` with jitter: ``full`` waits ``rng() * c``,
``equal`` waits ``c/2 + rng() * c/2`` (the default), ``none`` waits ``c``. A server asking
for more than ``max_delay`` (60 s by default, like pi) ends the call at once with
:class:`~pipeline.llm.errors.LLMRetryDelayError`. The defaults (3 retries, 2 s base) are
pi's ``retry.maxRetries`` / ``retry.baseDelayMs`` for summarisation calls (docs/pi-rules.md#retries).
``sleep`` and ``rng`` are injected so tests can record the delays without waiting.

Given a :class:`~pipeline.llm.deadline.Deadline`, no wait is begun that would end past
it: the call ends at once with :class:`~pipeline.llm.deadline.LLMDeadlineError`, naming
the attempts made and the last error.
"""

from __future__ import annotations

import logging
import math
import random
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Callable, Literal, Mapping, TypeVar

from pipeline.llm.deadline import Deadline, LLMDeadlineError
from pipeline.llm.errors import (
    LLMConfigError,
    LLMEmptyCompletionError,
    LLMError,
    LLMRetriesExhaustedError,
    LLMRetryDelayError,
    LLMStatusError,
)

T = TypeVar("T")
Jitter = Literal["full", "equal", "none"]
log = logging.getLogger("pipeline.llm")

RETRYABLE_STATUSES = frozenset({408, 409, 429})


@dataclass(frozen=True)
class RetryPolicy:
    """Bounds of the retry loop; see the module docstring for the delay formula."""

    max_retries: int = 3
    base_delay: float = 2.0
    max_delay: float = 60.0
    jitter: Jitter = "equal"
    empty_retries: int = 1

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.empty_retries < 0:
            raise LLMConfigError(f"retry counts must be >= 0, got max_retries={self.max_retries}")
        if not (self.base_delay >= 0 and self.max_delay >= 0):
            raise LLMConfigError("retry delays must be >= 0 seconds")
        if self.jitter not in ("full", "equal", "none"):
            raise LLMConfigError(f"unknown jitter {self.jitter!r}; expected full, equal or none")

    def backoff(self, retry: int, rng: Callable[[], float]) -> float:
        """Delay before retry number ``retry`` (1-based) when the server gave none."""
        ceiling = min(self.base_delay * 2 ** (retry - 1), self.max_delay)
        if self.jitter == "full":
            return rng() * ceiling
        if self.jitter == "equal":
            return ceiling / 2 + rng() * ceiling / 2
        return ceiling


def is_retryable_status(status: int) -> bool:
    """True for 408, 409, 429 and 5xx."""
    return status in RETRYABLE_STATUSES or 500 <= status <= 599


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asks us to wait, from ``retry-after-ms`` or ``Retry-After``.

    ``Retry-After`` may be seconds or an HTTP date (relative to ``now``, default the
    clock). Unparsable or negative values count as absent; a past date means 0.
    """
    millis = _number(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    raw = headers.get("retry-after")
    if raw is None:
        return None
    seconds = _number(raw)
    if seconds is not None:
        return seconds
    return _seconds_until(raw, time.time() if now is None else now)


def _number(raw: str | None) -> float | None:
    try:
        value = float(raw) if raw is not None else math.nan
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def _seconds_until(http_date: str, now: float) -> float | None:
    try:
        when = parsedate_to_datetime(http_date.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now)


def call_with_retries(
    attempt: Callable[[], T],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], object] = time.sleep,
    rng: Callable[[], float] = random.random,
    deadline: Deadline | None = None,
) -> T:
    """Run ``attempt`` until it succeeds, retrying retryable ``LLMError``s per ``policy``
    (and while a retry's wait still ends before ``deadline``)."""
    attempts = empties = 0
    while True:
        attempts += 1
        try:
            return attempt()
        except LLMError as caught:
            error = caught
        # Raised outside the ``except`` block, so no exception chains onto another.
        give_up = _give_up(error, attempts, empties, policy)
        if give_up is not None:
            raise give_up
        empties += isinstance(error, LLMEmptyCompletionError)
        delay = _delay(error, attempts, policy, rng)
        if deadline is not None and delay >= deadline.left():
            raise _out_of_time(error, attempts, deadline)
        log.info("retry %d/%d in %.3gs after: %s", attempts, policy.max_retries, delay, error)
        sleep(delay)


def _give_up(error: LLMError, attempts: int, empties: int, policy: RetryPolicy) -> LLMError | None:
    """The error to raise now, or ``None`` to retry."""
    if not error.retryable:
        return error
    if isinstance(error, LLMEmptyCompletionError):
        return error if empties >= policy.empty_retries or attempts > policy.max_retries else None
    if attempts > policy.max_retries:
        return LLMRetriesExhaustedError(attempts, error)
    asked = error.retry_after if isinstance(error, LLMStatusError) else None
    if isinstance(error, LLMStatusError) and asked is not None and asked > policy.max_delay:
        return LLMRetryDelayError(error, asked, policy.max_delay)
    return None


def _delay(error: LLMError, retry: int, policy: RetryPolicy, rng: Callable[[], float]) -> float:
    asked = error.retry_after if isinstance(error, LLMStatusError) else None
    return asked if asked is not None else policy.backoff(retry, rng)


def _out_of_time(error: LLMError, attempts: int, deadline: Deadline) -> LLMDeadlineError:
    label, _, rest = error.message.partition(": ")
    tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
    return LLMDeadlineError(label, deadline, f"no time left for a retry after {tries}; last: {rest}")
