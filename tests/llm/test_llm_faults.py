"""The fault matrix, for both providers, against the real test server.

Delays are recorded by the injected ``sleeps`` (nothing really waits); the expected
backoff values come from the policy's documented formula (equal jitter, rng fixed at 0.5).
"""

from __future__ import annotations

import pytest
from llm_fakes import PROVIDERS, RNG_VALUE, Reply

from pipeline.llm.errors import (
    LLMConnectionError,
    LLMEmptyCompletionError,
    LLMResponseError,
    LLMRetriesExhaustedError,
    LLMRetryDelayError,
    LLMStatusError,
    LLMTimeoutError,
)
from pipeline.llm.factory import make_client
from pipeline.llm.retry import RetryPolicy
from pipeline.llm.types import SummaryRequest

REQUEST = SummaryRequest(system_prompt="S", user_text="U", max_tokens=500, model="test-model")
SHORT_TIMEOUT = 0.3
HANG = 3.0  # longer than SHORT_TIMEOUT; the handler is released when the test ends


def backoffs(n: int, policy: RetryPolicy = RetryPolicy()) -> list[float]:
    """The delays the policy asks for before retries 1..n, with the tests' fixed rng."""
    return [policy.backoff(i, lambda: RNG_VALUE) for i in range(1, n + 1)]


def error_reply(status: int, message: str = "boom", **headers: str) -> Reply:
    return Reply(status=status, body={"error": {"type": "test_error", "message": message}}, headers=headers)


def assert_one_line(error: Exception, provider: str) -> str:
    text = str(error)
    assert "\n" not in text and text.startswith(f"{provider}: ")
    return text


@pytest.mark.parametrize("provider", PROVIDERS)
def test_429_with_retry_after_then_success(provider, make, llm_server, sleeps):
    llm_server.script(error_reply(429, "slow down", **{"retry-after": "7"}), Reply(text="fine"))
    assert make(provider).complete(REQUEST).text == "fine"
    assert len(llm_server.requests) == 2
    assert sleeps == [7.0]
    assert llm_server.requests[0].raw == llm_server.requests[1].raw


@pytest.mark.parametrize("provider", PROVIDERS)
def test_retry_after_ms_wins_over_retry_after(provider, make, llm_server, sleeps):
    llm_server.script(error_reply(503, **{"retry-after-ms": "250", "retry-after": "9"}), Reply())
    make(provider).complete(REQUEST)
    assert sleeps == [0.25]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, 529])
def test_retryable_statuses_are_retried_with_backoff(provider, status, make, llm_server, sleeps):
    llm_server.script(error_reply(status), Reply(text="ok"))
    assert make(provider).complete(REQUEST).text == "ok"
    assert len(llm_server.requests) == 2
    assert sleeps == backoffs(1)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_repeated_500_gives_up_after_bounded_retries(provider, make, llm_server, sleeps):
    llm_server.script(*[error_reply(500, "internal oops")] * 10)
    with pytest.raises(LLMRetriesExhaustedError) as info:
        make(provider, max_retries=3).complete(REQUEST)
    assert len(llm_server.requests) == 4
    assert sleeps == backoffs(3) == [1.5, 3.0, 6.0]
    text = assert_one_line(info.value, provider)
    assert "gave up after 4 attempts" in text and "HTTP 500" in text and "internal oops" in text
    assert isinstance(info.value.last, LLMStatusError) and info.value.last.status == 500


@pytest.mark.parametrize("provider", PROVIDERS)
def test_retry_after_beyond_the_cap_gives_up_at_once(provider, make, llm_server, sleeps):
    llm_server.script(error_reply(429, **{"retry-after": "120"}), Reply())
    with pytest.raises(LLMRetryDelayError) as info:
        make(provider).complete(REQUEST)
    text = assert_one_line(info.value, provider)
    assert "server asked to wait 120s" in text and "60s" in text and "HTTP 429" in text
    assert (info.value.delay, info.value.cap) == (120.0, 60.0)
    assert len(llm_server.requests) == 1 and sleeps == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_retry_after_http_date_beyond_the_cap(provider, make, llm_server, sleeps):
    llm_server.script(error_reply(503, **{"retry-after": "Fri, 31 Dec 2100 23:59:59 GMT"}))
    with pytest.raises(LLMRetryDelayError, match="server asked to wait"):
        make(provider).complete(REQUEST)
    assert len(llm_server.requests) == 1 and sleeps == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_custom_cap_allows_longer_waits(provider, make, llm_server, sleeps):
    llm_server.script(error_reply(429, **{"retry-after": "120"}), Reply())
    make(provider, max_delay=300.0).complete(REQUEST)
    assert sleeps == [120.0]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_hang_past_the_timeout_is_retried_then_fails(provider, make, llm_server, sleeps):
    llm_server.script(Reply(delay=HANG), Reply(delay=HANG))
    with pytest.raises(LLMRetriesExhaustedError) as info:
        make(provider, timeout=SHORT_TIMEOUT, max_retries=1).complete(REQUEST)
    assert len(llm_server.requests) == 2
    assert sleeps == backoffs(1)
    assert isinstance(info.value.last, LLMTimeoutError)
    text = assert_one_line(info.value, provider)
    assert "timed out after 0.3s" in text and "gave up after 2 attempts" in text


@pytest.mark.parametrize("provider", PROVIDERS)
def test_hang_then_success(provider, make, llm_server, sleeps):
    llm_server.script(Reply(delay=HANG), Reply(text="late but fine"))
    assert make(provider, timeout=SHORT_TIMEOUT).complete(REQUEST).text == "late but fine"
    assert len(llm_server.requests) == 2 and sleeps == backoffs(1)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_invalid_json_is_a_clear_error_without_retry(provider, make, llm_server, sleeps):
    llm_server.script(Reply(body=b"<html><body>Bad gateway page</body></html>"), Reply())
    with pytest.raises(LLMResponseError) as info:
        make(provider).complete(REQUEST)
    text = assert_one_line(info.value, provider)
    assert "invalid JSON" in text and "Bad gateway page" in text
    assert len(llm_server.requests) == 1 and sleeps == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_truncated_json_is_a_clear_error(provider, make, llm_server):
    llm_server.script(Reply(body=b'{"choices": [{"mess'))
    with pytest.raises(LLMResponseError, match="invalid JSON"):
        make(provider).complete(REQUEST)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("empty", ["", "  \n\t "])
def test_empty_completion_is_retried_once_then_fails(provider, empty, make, llm_server, sleeps):
    llm_server.script(Reply(text=empty), Reply(text=empty), Reply(text="never reached"))
    with pytest.raises(LLMEmptyCompletionError) as info:
        make(provider).complete(REQUEST)
    assert "empty completion" in assert_one_line(info.value, provider)
    assert len(llm_server.requests) == 2 and sleeps == backoffs(1)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_empty_completion_then_text_succeeds(provider, make, llm_server):
    llm_server.script(Reply(text=""), Reply(text="second try"))
    assert make(provider).complete(REQUEST).text == "second try"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_empty_completion_at_the_output_limit_is_not_retried(provider, make, llm_server, sleeps):
    llm_server.script(Reply(text="", thinking="long thoughts", stop="length"), Reply(text="x"))
    with pytest.raises(LLMEmptyCompletionError) as info:
        make(provider).complete(REQUEST)
    assert "output limit of 500 tokens" in str(info.value)
    assert len(llm_server.requests) == 1 and sleeps == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_connection_refused_is_retried_then_fails(provider, closed_port, sleeps):
    client = make_client(
        provider,
        model="m",
        base_url=f"http://127.0.0.1:{closed_port}",
        env={"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"},
        max_retries=2,
        sleep=sleeps,
        rng=lambda: RNG_VALUE,
    )
    with client, pytest.raises(LLMRetriesExhaustedError) as info:
        client.complete(REQUEST)
    assert isinstance(info.value.last, LLMConnectionError)
    assert sleeps == backoffs(2)
    text = assert_one_line(info.value, provider)
    assert "connection error" in text and "refused" in text.lower() and str(closed_port) in text


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_other_4xx_fail_at_once(provider, status, make, llm_server, sleeps):
    llm_server.script(error_reply(status, "you did it wrong"), Reply())
    with pytest.raises(LLMStatusError) as info:
        make(provider).complete(REQUEST)
    assert len(llm_server.requests) == 1 and sleeps == []
    text = assert_one_line(info.value, provider)
    assert f"HTTP {status}" in text and "you did it wrong" in text
    assert info.value.status == status and not info.value.retryable


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("status", [401, 403])
def test_auth_failures_hint_at_the_key_variable(provider, status, make, llm_server):
    llm_server.script(error_reply(status, "invalid x-api-key"))
    with pytest.raises(LLMStatusError) as info:
        make(provider, api_key_env="MY_SUMMARY_KEY", env={"MY_SUMMARY_KEY": "abc"}).complete(REQUEST)
    assert "check the API key in MY_SUMMARY_KEY" in str(info.value)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_status_body_excerpt_is_short(provider, make, llm_server):
    llm_server.script(Reply(status=400, body="x" * 20000 + "\n\nmore lines"))
    with pytest.raises(LLMStatusError) as info:
        make(provider).complete(REQUEST)
    assert len(assert_one_line(info.value, provider)) < 300


@pytest.mark.parametrize("provider", PROVIDERS)
def test_overloaded_inside_retry_budget_succeeds_with_zero_retries_left(provider, make, llm_server, sleeps):
    llm_server.script(error_reply(529, "Overloaded"), error_reply(529, "Overloaded"), Reply(text="done"))
    assert make(provider, max_retries=2).complete(REQUEST).text == "done"
    assert sleeps == backoffs(2)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_no_retries_when_disabled(provider, make, llm_server, sleeps):
    llm_server.script(error_reply(500), Reply())
    with pytest.raises(LLMRetriesExhaustedError, match="gave up after 1 attempt:"):
        make(provider, max_retries=0).complete(REQUEST)
    assert len(llm_server.requests) == 1 and sleeps == []
