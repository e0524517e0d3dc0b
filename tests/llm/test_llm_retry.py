"""The retry policy on its own: delay formula, Retry-After parsing, the loop's decisions."""

from __future__ import annotations

from email.utils import format_datetime
from datetime import datetime, timezone

import pytest

from pipeline.llm.errors import (
    LLMConfigError,
    LLMEmptyCompletionError,
    LLMResponseError,
    LLMRetriesExhaustedError,
    LLMRetryDelayError,
    LLMStatusError,
    LLMTimeoutError,
)
from pipeline.llm.retry import RetryPolicy, call_with_retries, is_retryable_status, parse_retry_after


def scripted(*outcomes):
    """An attempt function returning/raising ``outcomes`` in turn; counts its calls."""
    queue = list(outcomes)

    def attempt():
        attempt.calls += 1
        outcome = queue.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    attempt.calls = 0
    return attempt


def status(code: int, retry_after: float | None = None) -> LLMStatusError:
    return LLMStatusError("p", code, "x", retryable=is_retryable_status(code), retry_after=retry_after)


# -- delay formula -------------------------------------------------------------------


@pytest.mark.parametrize(
    "jitter,rng,expected",
    [
        ("none", 0.9, [2.0, 4.0, 8.0, 16.0]),  # pi's summarisation waits: 2 s, 4 s, 8 s (docs/pi-rules.md#retries)
        ("equal", 0.0, [1.0, 2.0, 4.0, 8.0]),
        ("equal", 1.0, [2.0, 4.0, 8.0, 16.0]),
        ("equal", 0.5, [1.5, 3.0, 6.0, 12.0]),
        ("full", 0.25, [0.5, 1.0, 2.0, 4.0]),
        ("full", 0.0, [0.0, 0.0, 0.0, 0.0]),
    ],
)
def test_backoff_formula(jitter, rng, expected):
    policy = RetryPolicy(jitter=jitter)
    assert [policy.backoff(n, lambda: rng) for n in range(1, 5)] == expected


def test_backoff_is_capped_by_max_delay():
    policy = RetryPolicy(base_delay=10, max_delay=25, jitter="none")
    assert [policy.backoff(n, lambda: 0.0) for n in range(1, 5)] == [10, 20, 25, 25]


@pytest.mark.parametrize(
    "options",
    [{"max_retries": -1}, {"base_delay": -1}, {"max_delay": float("nan")}, {"jitter": "half"}, {"empty_retries": -2}],
)
def test_policy_rejects_bad_settings(options):
    with pytest.raises(LLMConfigError):
        RetryPolicy(**options)


# -- which statuses --------------------------------------------------------------------


@pytest.mark.parametrize("code", [408, 409, 429, 500, 502, 503, 504, 529, 599])
def test_retryable_statuses(code):
    assert is_retryable_status(code)


@pytest.mark.parametrize("code", [200, 301, 400, 401, 403, 404, 413, 422, 451, 600])
def test_not_retryable_statuses(code):
    assert not is_retryable_status(code)


# -- Retry-After -----------------------------------------------------------------------

NOW = datetime(2026, 5, 1, 12, 0, 0, tzinfo=timezone.utc).timestamp()


@pytest.mark.parametrize(
    "headers,expected",
    [
        ({}, None),
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after": "0"}, 0.0),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after-ms": "soon", "retry-after": "9"}, 9.0),
        ({"retry-after": "-3"}, None),
        ({"retry-after": "inf"}, None),
        ({"retry-after": "tomorrow-ish"}, None),
        ({"retry-after": "Fri, 01 May 2026 12:00:30 GMT"}, 30.0),
        ({"retry-after": "Fri, 01 May 2026 11:00:00 GMT"}, 0.0),  # a past date: go now
        ({"retry-after": "Fri, 01 May 2026 12:00:30"}, None),  # no zone: not an HTTP date
    ],
)
def test_parse_retry_after(headers, expected):
    assert parse_retry_after(headers, now=NOW) == expected


def test_parse_retry_after_http_date_uses_the_clock_by_default():
    far = format_datetime(datetime(2100, 1, 1, tzinfo=timezone.utc), usegmt=True)
    assert parse_retry_after({"retry-after": far}) > 365 * 24 * 3600


# -- the loop --------------------------------------------------------------------------


def test_success_first_time_does_not_sleep():
    sleeps = []
    assert call_with_retries(scripted("ok"), RetryPolicy(), sleep=sleeps.append, rng=lambda: 0.5) == "ok"
    assert sleeps == []


def test_server_delay_is_used_as_is_and_backoff_otherwise():
    sleeps = []
    attempt = scripted(status(429, retry_after=3.25), LLMTimeoutError("p: timed out"), status(500), "ok")
    assert call_with_retries(attempt, RetryPolicy(), sleep=sleeps.append, rng=lambda: 0.5) == "ok"
    # retry 1 honours the server; retries 2 and 3 back off (equal jitter, rng 0.5)
    assert sleeps == [3.25, 3.0, 6.0] and attempt.calls == 4


def test_non_retryable_errors_are_raised_unchanged():
    error = LLMResponseError("p: invalid JSON")
    with pytest.raises(LLMResponseError) as info:
        call_with_retries(scripted(error, "ok"), RetryPolicy(), sleep=pytest.fail)
    assert info.value is error


def test_other_exceptions_pass_through():
    with pytest.raises(KeyError):
        call_with_retries(scripted(KeyError("bug")), RetryPolicy(), sleep=pytest.fail)


def test_exhausted_wraps_the_last_error():
    sleeps = []
    attempt = scripted(status(502), status(503), "never")
    with pytest.raises(LLMRetriesExhaustedError) as info:
        call_with_retries(attempt, RetryPolicy(max_retries=1), sleep=sleeps.append, rng=lambda: 1.0)
    assert info.value.attempts == 2 and info.value.last.status == 503
    assert str(info.value) == "p: gave up after 2 attempts: HTTP 503: x"
    assert sleeps == [2.0]


def test_server_delay_over_the_cap_gives_up_before_sleeping():
    with pytest.raises(LLMRetryDelayError) as info:
        call_with_retries(scripted(status(429, retry_after=61)), RetryPolicy(), sleep=pytest.fail)
    assert str(info.value) == "p: HTTP 429: server asked to wait 61s before retrying, more than the maximum retry delay of 60s"


def test_server_delay_equal_to_the_cap_is_honoured():
    sleeps = []
    call_with_retries(scripted(status(429, retry_after=60), "ok"), RetryPolicy(), sleep=sleeps.append)
    assert sleeps == [60]


def test_empty_completion_retried_once_only():
    empty = LLMEmptyCompletionError("p", "stop", 100)
    sleeps = []
    attempt = scripted(empty, empty, "never")
    with pytest.raises(LLMEmptyCompletionError):
        call_with_retries(attempt, RetryPolicy(max_retries=5), sleep=sleeps.append, rng=lambda: 0.5)
    assert attempt.calls == 2 and sleeps == [1.5]


def test_empty_completion_does_not_use_more_than_the_retry_budget():
    attempt = scripted(LLMEmptyCompletionError("p", "stop", 100), "never")
    with pytest.raises(LLMEmptyCompletionError):
        call_with_retries(attempt, RetryPolicy(max_retries=0), sleep=pytest.fail)
    assert attempt.calls == 1


def test_empty_retry_counts_against_the_retry_budget():
    sleeps = []
    attempt = scripted(LLMEmptyCompletionError("p", "stop", 100), status(500), "never")
    with pytest.raises(LLMRetriesExhaustedError):
        call_with_retries(attempt, RetryPolicy(max_retries=1), sleep=sleeps.append, rng=lambda: 0.5)
    assert attempt.calls == 2 and sleeps == [1.5]
