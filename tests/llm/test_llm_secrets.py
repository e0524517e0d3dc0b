"""The API key never shows: not in errors (str, repr, attributes, chains), reprs or logs.

Each scenario triggers one failure with a known fake key; where the server can, it
echoes the key it received back in its body (as some real APIs echo part of a bad key).
"""

from __future__ import annotations

import logging

import pytest
from llm_fakes import FAKE_KEY, KEY_ENV, PROVIDERS, Received, Reply

from pipeline.llm.errors import (
    LLMAuthError,
    LLMConfigError,
    LLMConnectionError,
    LLMEmptyCompletionError,
    LLMError,
    LLMResponseError,
    LLMRetriesExhaustedError,
    LLMRetryDelayError,
    LLMStatusError,
)
from pipeline.llm.factory import make_client
from pipeline.llm.types import SummaryRequest

REQUEST = SummaryRequest(system_prompt="S", user_text="U", max_tokens=500, model="test-model")


def received_key(request: Received) -> str:
    header = request.headers.get("x-api-key") or request.headers.get("authorization", "")
    return header.removeprefix("Bearer ")


def echo(status_message: str):
    """A body that quotes the key the server received."""
    return lambda request: {"error": {"message": f"{status_message}: {received_key(request)}"}}


SCENARIOS = {
    "401 echoing the key": ([Reply(status=401, body=echo("Incorrect API key provided"))], LLMStatusError),
    "500 echoing the key, exhausted": ([Reply(status=500, body=echo("bad key"))] * 2, LLMRetriesExhaustedError),
    "429 asking too long": (
        [Reply(status=429, body=echo("wait"), headers={"retry-after": "600"})],
        LLMRetryDelayError,
    ),
    "invalid JSON echoing the key": (
        [Reply(body=lambda request: f"<html>key={received_key(request)}</html>")],
        LLMResponseError,
    ),
    "error object in a 200": ([Reply(body=echo("rejected"))], LLMResponseError),
    "empty completion": ([Reply(text="")] * 2, LLMEmptyCompletionError),
    "timeout": ([Reply(delay=3.0)] * 2, LLMRetriesExhaustedError),
}


def rendered(error: BaseException, depth: int = 0) -> list[str]:
    """Every text an error exposes: str, repr, problems, attributes, chained errors."""
    texts = [str(error), repr(error), repr(error.args)]
    if isinstance(error, LLMError):
        texts += [str(p) for p in error.problems] + [repr(p) for p in error.problems]
    for value in vars(error).values():
        texts.append(repr(value))
        if isinstance(value, BaseException) and depth < 3:
            texts += rendered(value, depth + 1)
    for linked in (error.__cause__, error.__context__):
        if linked is not None and depth < 3:
            texts += rendered(linked, depth + 1)
    return texts


def assert_no_chain(error: BaseException) -> None:
    """No exception is chained to ours (an httpx one would hold the request headers)."""
    assert error.__cause__ is None and error.__context__ is None
    last = getattr(error, "last", None)
    if last is not None:
        assert_no_chain(last)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_key_absent_from_every_error(provider, scenario, make, llm_server, caplog):
    replies, expected = SCENARIOS[scenario]
    llm_server.script(*replies)
    client = make(provider, max_retries=1, timeout=0.3 if scenario == "timeout" else 5.0)
    with caplog.at_level(logging.DEBUG, logger="pipeline.llm"), pytest.raises(expected) as info:
        client.complete(REQUEST)
    assert received_key(llm_server.requests[0]) == FAKE_KEY  # the key really was sent
    for text in rendered(info.value) + [repr(client), caplog.text]:
        assert FAKE_KEY not in text
    assert_no_chain(info.value)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_echoed_key_is_replaced_by_stars(provider, make, llm_server):
    llm_server.script(Reply(status=401, body=echo("Incorrect API key provided")))
    with pytest.raises(LLMStatusError) as info:
        make(provider).complete(REQUEST)
    assert "Incorrect API key provided: ***" in str(info.value)
    assert f"check the API key in {KEY_ENV[provider]}" in str(info.value)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_retry_logs_are_written_without_the_key(provider, make, llm_server, caplog):
    llm_server.script(Reply(status=503, body=echo("busy")), Reply(text="ok"))
    with caplog.at_level(logging.INFO, logger="pipeline.llm"):
        make(provider).complete(REQUEST)
    assert "retry 1/3" in caplog.text and "HTTP 503" in caplog.text and "busy: ***" in caplog.text
    assert FAKE_KEY not in caplog.text


@pytest.mark.parametrize("provider", PROVIDERS)
def test_connection_errors_do_not_leak_the_key(provider, closed_port, sleeps):
    client = make_client(
        provider,
        model="m",
        base_url=f"http://127.0.0.1:{closed_port}",
        env={KEY_ENV[provider]: FAKE_KEY},
        max_retries=1,
        sleep=sleeps,
    )
    with client, pytest.raises(LLMRetriesExhaustedError) as info:
        client.complete(REQUEST)
    assert isinstance(info.value.last, LLMConnectionError)
    assert all(FAKE_KEY not in text for text in rendered(info.value) + [repr(client)])
    assert_no_chain(info.value)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("env", [{}, {"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": "  \n"}])
def test_missing_or_blank_key_names_the_variable(provider, env, llm_server):
    client = make_client(provider, model="m", base_url=llm_server.base_url(provider), env=env)
    with pytest.raises(LLMAuthError) as info:
        client.complete(REQUEST)
    text = str(info.value)
    assert text.startswith(f"{provider}: no API key") and KEY_ENV[provider] in text and "\n" not in text
    assert llm_server.requests == []


def test_custom_key_variable_is_read_and_named(make, llm_server):
    llm_server.script(Reply(text="ok"))
    make("openai", api_key_env="TEAM_SUMMARY_KEY", env={"TEAM_SUMMARY_KEY": "team-key"}).complete(REQUEST)
    assert llm_server.requests[0].headers["authorization"] == "Bearer team-key"
    with pytest.raises(LLMAuthError, match="TEAM_SUMMARY_KEY"):
        make("openai", api_key_env="TEAM_SUMMARY_KEY", env={"OPENAI_API_KEY": "k"}).complete(REQUEST)


def test_key_is_read_at_call_time_not_stored(make, llm_server):
    env = {"OPENAI_API_KEY": "first-key"}
    client = make("openai", env=env)
    llm_server.script(Reply(text="a"), Reply(text="b"))
    client.complete(REQUEST)
    env["OPENAI_API_KEY"] = "second-key"
    client.complete(REQUEST)
    assert [r.headers["authorization"] for r in llm_server.requests] == ["Bearer first-key", "Bearer second-key"]
    assert all(v is env or "second-key" not in repr(v) for v in vars(client).values())



@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("raw", [False, True])
def test_no_part_of_the_key_survives_shortening(provider, raw, make, llm_server):
    """The key sits across the point where excerpts are cut: redaction must come first."""
    for pad in (180, 190, 195, 110, 115):
        text = "p" * pad + FAKE_KEY + " tail"
        body = text if raw else {"error": {"message": text}}
        llm_server.script(Reply(status=400, body=body), Reply(body=text.encode()))
        with pytest.raises(LLMStatusError) as status_info:
            make(provider).complete(REQUEST)
        with pytest.raises(LLMResponseError) as json_info:
            make(provider).complete(REQUEST)
        for error in (status_info.value, json_info.value):
            assert FAKE_KEY[:10] not in str(error), (pad, str(error))


@pytest.mark.parametrize("bad", ["sk-ключ", "sk-a\nb", "sk-\x00"])
def test_unusable_key_values_are_config_errors_and_not_sent(bad, make, llm_server):
    with pytest.raises(LLMConfigError) as info:
        make("anthropic", env={"ANTHROPIC_API_KEY": bad}).complete(REQUEST)
    assert "ANTHROPIC_API_KEY" in str(info.value) and bad not in str(info.value)
    assert llm_server.requests == []
