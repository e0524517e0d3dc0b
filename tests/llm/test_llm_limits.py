"""The hostile-server fault matrix: every call ends in bounded time, memory and one line.

Each fault runs for both wire formats against the real test server on 127.0.0.1, with a
short deadline (``DEADLINE``), measured on an injected clock where the deadline arithmetic
is the point (see ``STEP``), so the suite stays fast. What is checked each time: the
error class, that it came within the deadline (plus a margin for a loaded machine),
that the message is one line starting with the provider, and that no secret is in it.
"""

from __future__ import annotations

import gzip
import json
import time
import tracemalloc
import zlib

import pytest
from llm_fakes import FAKE_KEY, KEY_ENV, PROVIDERS, Reply

from pipeline.llm.deadline import LLMDeadlineError, compaction_deadline
from pipeline.llm.errors import LLMConnectionError, LLMError, LLMResponseError, LLMRetriesExhaustedError, LLMStatusError
from pipeline.llm.factory import make_client
from pipeline.llm.limits import Limits, LLMResponseTooLargeError, LLMSummaryTooLongError
from pipeline.llm.types import SummaryRequest

REQUEST = SummaryRequest(system_prompt="S", user_text="U", max_tokens=500, model="test-model")
DEADLINE = 1.0
MARGIN = 2.0  # a loaded CI machine; the unbounded faults would run for minutes
MiB = 1 << 20


def fails(client, expected: type[LLMError] = LLMError, *, within: float = DEADLINE + MARGIN) -> LLMError:
    """Run one call that must fail with ``expected`` within ``within`` seconds; the error."""
    start = time.monotonic()
    with pytest.raises(expected) as info:
        client.complete(REQUEST)
    assert time.monotonic() - start < within
    text = str(info.value)
    assert "\n" not in text and text.startswith(f"{client.provider}: ") and FAKE_KEY not in text
    assert info.value.__cause__ is None and info.value.__context__ is None
    return info.value


def bounded(make, provider, *, deadline=DEADLINE, max_bytes=Limits().max_response_bytes, **options):
    return make(provider, limits=Limits(call_deadline=deadline, max_response_bytes=max_bytes), **options)


# -- deadlines ---------------------------------------------------------------------------


# The deadline arithmetic runs on an injected clock (``ticking``: every reading of the
# clock moves it on by STEP seconds), against a server trickling every TICK real seconds:
# no test waits for its deadline. Two stay on the real clock, where the point is the real
# socket timeout cut from the deadline: a silent server here, and `pipeline compact` in
# test_llm_cli_limits.py.
STEP = 0.05
TICK = 0.01
OVER = 10 * STEP  # the readings of the clock between the deadline passing and the error


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("fault", ["trickle", "trickle_body"])
def test_a_slow_server_ends_at_the_call_deadline(provider, fault, make, llm_server, sleeps, ticking):
    """A byte at a time (status line and headers included): the per-read timeout (5 s here)
    never fires, the deadline does, and the call is not retried."""
    llm_server.script(Reply(fault=fault, interval=TICK), Reply(text="never asked"))
    clock = ticking(STEP)
    error = fails(bounded(make, provider, timeout=5.0), LLMDeadlineError)
    assert DEADLINE <= clock.elapsed <= DEADLINE + OVER
    text = str(error)
    assert "timed out" in text and "deadline of 1s (summarizer.call_deadline_s)" in text
    assert len(llm_server.requests) == 1 and sleeps == []
    assert error.problems[0].hint == "raise summarizer.call_deadline_s if the provider is just slow"


def test_a_silent_server_ends_at_the_call_deadline_on_the_real_clock(make, llm_server, sleeps):
    """Nothing at all, on the real clock and a real socket: the read's timeout is cut to what
    is left of the deadline, so the call ends at the deadline, not after the 5 s timeout."""
    llm_server.script(Reply(fault="silence"), Reply(text="never asked"))
    start = time.monotonic()
    error = fails(bounded(make, "openai", timeout=5.0), LLMDeadlineError)
    assert time.monotonic() - start >= DEADLINE - 0.1
    assert "deadline of 1s (summarizer.call_deadline_s)" in str(error)
    assert len(llm_server.requests) == 1 and sleeps == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_retries_of_short_timeouts_stop_at_the_deadline(provider, make, llm_server, sleeps, ticking):
    """Each attempt times out (a silent server, a 10 ms read timeout) and is retried at once
    (no backoff); the attempts stop when the deadline is spent, not after max_retries."""
    llm_server.script(*[Reply(fault="silence")] * 20)
    clock = ticking(STEP)
    fails(bounded(make, provider, timeout=0.01, max_retries=15, base_delay=0.0), LLMDeadlineError)
    assert 2 <= len(llm_server.requests) <= 12 and len(sleeps) == len(llm_server.requests) - 1
    assert DEADLINE <= clock.elapsed <= DEADLINE + OVER


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_retry_wait_past_the_deadline_is_not_begun(provider, make, llm_server, sleeps):
    llm_server.script(Reply(status=503, body={"error": {"message": "busy"}}, headers={"retry-after": "30"}), Reply())
    error = fails(bounded(make, provider), LLMDeadlineError, within=1.0)
    assert "no time left for a retry after 1 attempt; last: HTTP 503: busy" in str(error)
    assert sleeps == [] and len(llm_server.requests) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_compaction_deadline_bounds_a_call_with_a_longer_one(provider, make, llm_server, ticking):
    llm_server.script(Reply(fault="trickle_body", interval=TICK))
    client = bounded(make, provider, deadline=60.0)
    clock = ticking(STEP)
    with compaction_deadline(0.6):
        error = fails(client, LLMDeadlineError, within=0.6 + MARGIN)
    assert "deadline of 0.6s (summarizer.compaction_deadline_s)" in str(error)
    assert 0.6 <= clock.elapsed <= 0.6 + OVER


def test_an_earlier_outer_deadline_wins_and_a_later_one_does_not():
    from pipeline.llm.deadline import current_deadline, within

    with compaction_deadline(10.0) as outer:
        with within(100.0) as inner:
            assert inner is outer and current_deadline() is outer
        with within(1.0) as inner:
            assert inner.setting == "summarizer.call_deadline_s" and inner.at < outer.at
        assert current_deadline() is outer
    assert current_deadline() is None


# -- response size -----------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("chunked", [False, True])
def test_a_5_mb_summary_is_refused_by_its_length(provider, chunked, make, llm_server):
    """5 MB fits the response cap (8 MiB) but not 500 tokens x 16 characters."""
    llm_server.script(Reply(fault="huge", size=5_000_000, chunked=chunked))
    error = fails(bounded(make, provider), LLMSummaryTooLongError)
    assert "summary refused: 5000000 characters for a budget of 500 tokens" in str(error)
    assert "more than 16 characters per token (summarizer.max_chars_per_token)" in str(error)
    assert len(llm_server.requests) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_summary_length_cap_is_exact(provider, make, llm_server):
    llm_server.script(Reply(text="x" * 8000), Reply(text="x" * 8001))
    client = bounded(make, provider)
    assert len(client.complete(REQUEST).text) == 8000
    fails(client, LLMSummaryTooLongError)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_announced_100_mb_body_is_refused_before_reading(provider, make, llm_server):
    llm_server.script(Reply(fault="huge", size=100_000_000))
    error = fails(bounded(make, provider), LLMResponseTooLargeError, within=MARGIN)
    assert "response refused: the server announced 100000" in str(error)
    assert f"more than summarizer.max_response_bytes ({8 * MiB} bytes)" in str(error)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("fault", ["huge", "endless"])
def test_a_chunked_body_stops_at_the_cap(provider, fault, make, llm_server):
    """100 MB or endless, without a content-length: reading stops one chunk past 2 MiB."""
    llm_server.script(Reply(fault=fault, size=100_000_000, chunked=True))
    error = fails(bounded(make, provider, max_bytes=2 * MiB), LLMResponseTooLargeError, within=MARGIN)
    assert f"the body goes past {2 * MiB} bytes" in str(error)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_gzip_bomb_is_never_inflated_past_the_cap(provider, make, llm_server):
    """2 GiB of zeros, gzip-compressed on the fly: one 64 KiB read alone would inflate to
    ~64 MB; the client inflates at most the room left, so its memory stays near the cap."""
    llm_server.script(Reply(fault="bomb"))
    client = bounded(make, provider, max_bytes=2 * MiB)
    tracemalloc.start()
    try:
        error = fails(client, LLMResponseTooLargeError, within=MARGIN)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert f"the body goes past {2 * MiB} bytes" in str(error)
    assert peak < 16 * MiB


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("encoding", ["gzip", "deflate", "raw-deflate"])
def test_compressed_answers_within_the_cap_are_read(provider, encoding, make, llm_server):
    reply = Reply(text="packed")
    from llm_fakes import SUCCESS, ANTHROPIC_PATH, OPENAI_PATH

    path = OPENAI_PATH if provider == "openai" else ANTHROPIC_PATH
    plain = json.dumps(SUCCESS[path](reply, {"model": "m"})).encode()
    if encoding == "gzip":
        packed = gzip.compress(plain)
    elif encoding == "deflate":
        packed = zlib.compress(plain)
    else:
        squeezer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
        packed = squeezer.compress(plain) + squeezer.flush()
    name = "deflate" if "deflate" in encoding else "gzip"
    llm_server.script(Reply(body=packed, headers={"content-encoding": name}))
    assert bounded(make, provider).complete(REQUEST).text == "packed"
    assert llm_server.requests[0].headers["accept-encoding"] == "identity"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_other_encodings_and_corrupt_gzip_are_refused(provider, make, llm_server):
    llm_server.script(Reply(body=b"\x1b\x00\x00", headers={"content-encoding": "br"}),
                      Reply(body=b"\x1f\x8b not gzip at all", headers={"content-encoding": "gzip"}))
    client = bounded(make, provider)
    assert "unsupported content-encoding 'br'" in str(fails(client, LLMResponseError))
    assert "compressed response body is corrupt" in str(fails(client, LLMResponseError))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_endless_error_body_is_quoted_not_read_to_the_end(provider, make, llm_server):
    llm_server.script(Reply(status=500, fault="endless"))
    error = fails(bounded(make, provider, max_retries=0), LLMRetriesExhaustedError, within=MARGIN)
    assert "HTTP 500: {\"choices\": [{\"message\": {\"content\": \"endless endless" in str(error)
    assert len(str(error)) < 400


# -- secrets in what the server sends back -----------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_error_body_echoing_the_request_headers_is_one_redacted_line(provider, make, llm_server):
    echo = Reply(status=400, body=lambda request: {"detail": "bad request", "request_headers": request.headers})
    llm_server.script(echo)
    error = fails(bounded(make, provider), LLMStatusError)
    text = str(error)
    assert "HTTP 400" in text and "***" in text
    header = "authorization" if provider == "openai" else "x-api-key"
    assert f'"{header}": "' in text


@pytest.mark.parametrize("provider", PROVIDERS)
def test_credential_headers_are_hidden_even_when_the_value_is_unknown(provider, make, llm_server):
    """A proxy echoing its own upstream credentials: the header rule hides them."""
    body = ("upstream rejected: Authorization: Bearer sk-upstream-0123456789abcdef\n"
            "X-Api-Key: upstream-key-0123456789 and {'proxy-authorization': 'Basic dXNlcjpwYXNz'}")
    llm_server.script(Reply(status=502, body=body))
    text = str(fails(bounded(make, provider, max_retries=0), LLMRetriesExhaustedError))
    for secret in ("sk-upstream-0123456789abcdef", "upstream-key-0123456789", "dXNlcjpwYXNz"):
        assert secret not in text
    assert "Authorization: Bearer ***" in text and "X-Api-Key: ***" in text


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_500_page_holding_the_key_is_one_redacted_line(provider, make, llm_server):
    page = f"<html>\n<body>\n<h1>Internal error</h1>\n<pre>\nkey={FAKE_KEY}\nescaped={json.dumps(FAKE_KEY)}\n</pre>"
    llm_server.script(*[Reply(status=500, body=page)] * 2)
    text = str(fails(bounded(make, provider, max_retries=1, base_delay=0.0), LLMRetriesExhaustedError))
    assert "HTTP 500: <html> <body> <h1>Internal error</h1> <pre> key=*** escaped=\"***\"" in text


USER, PASSWORD = "team", "pa55-w0rd-s3cret"


def userinfo_url(url: str) -> str:
    return url.replace("http://", f"http://{USER}:{PASSWORD}@")


def no_password(*texts: str) -> None:
    import base64

    basic = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    for text in texts:
        assert PASSWORD not in text and basic not in text and FAKE_KEY not in text, text


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_base_url_with_a_password_never_shows_it(provider, make, llm_server):
    base = userinfo_url(llm_server.base_url(provider))
    echo = Reply(status=404, body=lambda request: {"error": {"message": f"not here; you sent {request.headers}"}})
    llm_server.script(echo)
    client = bounded(make, provider, base_url=base)
    error = fails(client, LLMStatusError)
    assert llm_server.requests[0].headers["authorization"].startswith("Basic ")  # httpx sent the user info
    no_password(str(error), repr(error), repr(client), client.shown_url)
    assert f"http://***@127.0.0.1:{llm_server.server_address[1]}" in str(error)  # the hint names base_url
    assert client.shown_url.startswith("http://***@127.0.0.1:")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_connection_error_to_a_url_with_a_password_hides_it(provider, closed_port, sleeps):
    client = make_client(provider, model="m", base_url=userinfo_url(f"http://127.0.0.1:{closed_port}"),
                         env={KEY_ENV[provider]: FAKE_KEY}, max_retries=0, sleep=sleeps)
    with client, pytest.raises(LLMRetriesExhaustedError) as info:
        client.complete(REQUEST)
    assert isinstance(info.value.last, LLMConnectionError)
    no_password(str(info.value), repr(client))
    assert f"connection error to http://***@127.0.0.1:{closed_port}" in str(info.value)


def test_a_malformed_base_url_with_a_password_hides_it():
    from pipeline.llm.errors import LLMConfigError

    with pytest.raises(LLMConfigError) as info:
        make_client("openai", model="m", base_url=f"ftp://{USER}:{PASSWORD}@host/v1", env={})
    no_password(str(info.value))
    assert "'ftp://***@host/v1' is not an http:// or https:// URL" in str(info.value)


# -- which clients are bounded, and where the settings come from ---------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_client_that_builds_its_own_connection_pool_is_bounded_at_every_read(provider, make, llm_server,
                                                                               ticking):
    """The production path (no http_client given): trickled headers end at the deadline."""
    llm_server.script(Reply(fault="trickle", interval=TICK))
    clock = ticking(STEP)
    fails(bounded(make, provider, http_client=None, timeout=5.0), LLMDeadlineError)
    assert DEADLINE <= clock.elapsed <= DEADLINE + OVER


def test_a_callers_own_http_client_is_bounded_between_body_chunks(make, llm_server, ticking):
    import httpx

    llm_server.script(Reply(fault="trickle_body", interval=TICK))
    ticking(STEP)
    with httpx.Client() as own:
        error = fails(bounded(make, "openai", http_client=own, timeout=5.0), LLMDeadlineError)
    assert "the body was still arriving" in str(error)


def test_the_profile_settings_reach_the_client():
    from pipeline import compile_profile

    defaults = compile_profile("default").profile.summarizer
    assert (defaults.call_deadline_s, defaults.compaction_deadline_s) == (300.0, 900.0)
    assert (defaults.max_response_bytes, defaults.max_chars_per_token) == (8 * MiB, 16)
    pipeline = compile_profile("default", {
        "summarizer.provider": "anthropic", "summarizer.model": "m", "summarizer.call_deadline_s": 7.5,
        "summarizer.max_response_bytes": 4096, "summarizer.max_chars_per_token": 3,
    })
    with pipeline.summary_client() as client:
        assert client.limits == Limits(call_deadline=7.5, max_response_bytes=4096, max_chars_per_token=3)


@pytest.mark.parametrize("key, value", [
    ("call_deadline_s", 0), ("call_deadline_s", 86401), ("compaction_deadline_s", -1),
    ("max_response_bytes", 10), ("max_response_bytes", 2**31), ("max_chars_per_token", 0),
])
def test_the_limits_have_documented_bounds(key, value):
    from pipeline import compile_profile
    from pipeline.errors import PipelineError

    with pytest.raises(PipelineError) as info:
        compile_profile("default", {f"summarizer.{key}": value})
    assert f"summarizer.{key}" in str(info.value)


def test_the_compaction_deadline_of_the_profile_ends_a_compaction_and_writes_nothing(tmp_path, llm_server,
                                                                                   monkeypatch, ticking):
    from pathlib import Path

    from pipeline import compile_profile
    from pipeline.compaction.summarize import SummaryFailed

    source = Path(__file__).resolve().parents[2] / "tests" / "data" / "sessions" / "real" / "long-coding.jsonl"
    path = tmp_path / "chat.jsonl"
    path.write_bytes(source.read_bytes())
    before = path.read_bytes()
    pipeline = compile_profile("default", {
        "summarizer.provider": "openai", "summarizer.model": "m", "summarizer.base_url": llm_server.base_url("openai"),
        "summarizer.api_key_env": "CP_LIMIT_KEY", "summarizer.compaction_deadline_s": 1.0,
        "summarizer.call_deadline_s": 60.0, "summarizer.max_retries": 0,
    })
    llm_server.script(Reply(fault="trickle_body", interval=TICK))
    monkeypatch.setenv("CP_LIMIT_KEY", FAKE_KEY)
    clock = ticking(STEP)
    start = time.monotonic()
    with pytest.raises(SummaryFailed) as info:
        pipeline.compact(path)
    assert time.monotonic() - start < 1.0 + MARGIN
    assert "deadline of 1s (summarizer.compaction_deadline_s)" in str(info.value)
    assert clock.elapsed >= 1.0
    assert path.read_bytes() == before


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("status", [200, 400])
def test_json_nested_beyond_the_parser_is_one_line(provider, status, make, llm_server):
    llm_server.script(Reply(status=status, body=b"[" * 200_000))
    error = fails(bounded(make, provider), LLMResponseError if status == 200 else LLMStatusError)
    assert ("nests JSON too deeply" in str(error)) if status == 200 else ("HTTP 400: [[[[" in str(error))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_retry_lines_never_show_the_password_or_the_key(provider, make, llm_server, caplog):
    import logging

    def echo(request):
        sent = {name: request.headers.get(name) for name in ("authorization", "x-api-key")}
        return f"busy at {userinfo_url(llm_server.url)}; got {sent}"

    echo = Reply(status=503, body=echo)
    llm_server.script(echo, Reply(text="ok"))
    client = bounded(make, provider, base_url=userinfo_url(llm_server.base_url(provider)), base_delay=0.0)
    with caplog.at_level(logging.INFO, logger="pipeline.llm"):
        assert client.complete(REQUEST).text == "ok"
    assert "retry 1/3 in 0s after: " in caplog.text
    assert f"HTTP 503: busy at http://***@127.0.0.1:{llm_server.server_address[1]}; got {{'authorization': '" in caplog.text
    no_password(caplog.text)
