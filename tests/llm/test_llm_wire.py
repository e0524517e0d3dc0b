"""Wire formats: exact bodies, headers and parsing, against the real test server."""

from __future__ import annotations

import json

import httpx
import pytest
from llm_fakes import ANTHROPIC_PATH, FAKE_KEY, KEY_ENV, OPENAI_PATH, PROVIDERS, Reply

from pipeline.llm.anthropic_messages import AnthropicMessagesClient
from pipeline.llm.errors import LLMAuthError, LLMConfigError, LLMResponseError
from pipeline.llm.factory import make_client
from pipeline.llm.openai_chat import OpenAIChatClient
from pipeline.llm.types import Completion, SummaryClient, SummaryRequest
from pipeline.session import Usage

SYSTEM = "SYSTEM-FIXTURE: test instruction."
USER = "<conversation>\n[User]: hi\n</conversation>\n\nUSER-FIXTURE."


def request(**overrides) -> SummaryRequest:
    fields = dict(system_prompt=SYSTEM, user_text=USER, max_tokens=13107, model="test-model", kind="history")
    fields.update(overrides)
    return SummaryRequest(**fields)


# -- bodies ---------------------------------------------------------------------------


def test_openai_body_exact():
    client = OpenAIChatClient(model="m", env={})
    assert client.build_body(request()) == {
        "model": "test-model",
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}],
        "max_completion_tokens": 13107,
        "stream": False,
    }
    assert list(client.build_body(request())) == ["model", "messages", "max_completion_tokens", "stream"]


@pytest.mark.parametrize("level", ["minimal", "low", "medium", "high", "xhigh"])
def test_openai_body_reasoning_effort_is_the_level(level):
    body = OpenAIChatClient(env={}).build_body(request(reasoning=level))
    assert body["reasoning_effort"] == level
    assert list(body)[-1] == "reasoning_effort"


@pytest.mark.parametrize("off", [None, "off"])
def test_reasoning_off_sends_nothing(off):
    assert "reasoning_effort" not in OpenAIChatClient(env={}).build_body(request(reasoning=off))
    assert "thinking" not in AnthropicMessagesClient(env={}).build_body(request(reasoning=off))


def test_openai_max_tokens_field_option():
    body = OpenAIChatClient(max_tokens_field="max_tokens", env={}).build_body(request(max_tokens=77))
    assert body["max_tokens"] == 77 and "max_completion_tokens" not in body
    with pytest.raises(LLMConfigError):
        OpenAIChatClient(max_tokens_field="max_token")


def test_anthropic_body_exact():
    body = AnthropicMessagesClient(env={}).build_body(request())
    assert body == {
        "model": "test-model",
        "max_tokens": 13107,
        "system": SYSTEM,
        "messages": [{"role": "user", "content": [{"type": "text", "text": USER}]}],
    }
    assert list(body) == ["model", "max_tokens", "system", "messages"]


@pytest.mark.parametrize(
    "level,max_tokens,budget",
    [
        # pi's per-level budgets (pi-ai simple-options.js), cut to leave 1024 answer tokens.
        ("minimal", 13107, 1024),
        ("low", 13107, 2048),
        ("medium", 13107, 8192),
        ("high", 13107, 12083),
        ("high", 32000, 16384),
        ("xhigh", 32000, 16384),
        ("medium", 2048, 1024),
    ],
)
def test_anthropic_thinking_budget(level, max_tokens, budget):
    body = AnthropicMessagesClient(env={}).build_body(request(reasoning=level, max_tokens=max_tokens))
    assert body["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert body["thinking"]["budget_tokens"] < body["max_tokens"] == max_tokens
    assert list(body)[-1] == "thinking"


def test_anthropic_no_thinking_when_max_tokens_too_small():
    body = AnthropicMessagesClient(env={}).build_body(request(reasoning="high", max_tokens=2047))
    assert "thinking" not in body


def test_anthropic_empty_system_is_left_out():
    assert "system" not in AnthropicMessagesClient(env={}).build_body(request(system_prompt=""))


def test_request_model_overrides_client_model_and_one_is_needed():
    client = OpenAIChatClient(model="client-model", env={})
    assert client.build_body(request(model=""))["model"] == "client-model"
    assert client.build_body(request(model="req-model"))["model"] == "req-model"
    with pytest.raises(LLMConfigError, match="no model"):
        OpenAIChatClient(env={}).build_body(request(model=""))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_build_body_needs_no_key_and_complete_without_key_sends_nothing(provider, llm_server):
    client = make_client(provider, model="m", base_url=llm_server.base_url(provider), env={})
    assert client.build_body(request())["model"] == "test-model"
    with pytest.raises(LLMAuthError) as info:
        client.complete(request())
    assert llm_server.requests == []
    assert info.value.env_name in str(info.value)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_check_ready_reports_a_missing_key_or_model_without_sending(provider, llm_server):
    url = llm_server.base_url(provider)
    with pytest.raises(LLMAuthError):
        make_client(provider, model="m", base_url=url, env={}).check_ready()
    with pytest.raises(LLMConfigError, match="no model given"):
        make_client(provider, model="", base_url=url, env={KEY_ENV[provider]: "k"}).check_ready()
    make_client(provider, model="m", base_url=url, env={KEY_ENV[provider]: "k"}).check_ready()
    assert llm_server.requests == []


def test_clients_satisfy_the_protocol():
    assert isinstance(OpenAIChatClient(env={}), SummaryClient)
    assert isinstance(AnthropicMessagesClient(env={}), SummaryClient)


def test_default_urls_and_key_names():
    assert OpenAIChatClient(env={}).url == "https://api.openai.com/v1/chat/completions"
    assert AnthropicMessagesClient(env={}).url == "https://api.anthropic.com/v1/messages"
    assert OpenAIChatClient(env={}).api_key_env == "OPENAI_API_KEY"
    assert AnthropicMessagesClient(env={}).api_key_env == "ANTHROPIC_API_KEY"
    assert OpenAIChatClient(base_url="http://h/v1/", env={}).url == "http://h/v1/chat/completions"


def test_redacted_headers_show_the_variable_name():
    assert OpenAIChatClient(api_key_env="K1", env={}).redacted_headers()["authorization"] == "Bearer $K1"
    headers = AnthropicMessagesClient(env={}).redacted_headers()
    assert headers["x-api-key"] == "$ANTHROPIC_API_KEY"
    assert headers["anthropic-version"] == "2023-06-01"


def test_make_client_unknown_provider():
    with pytest.raises(LLMConfigError) as info:
        make_client("anthropik", model="m")
    assert "anthropic" in str(info.value) and "did you mean" in str(info.value)


# -- round trips ----------------------------------------------------------------------


def test_openai_round_trip(make, llm_server):
    llm_server.script(Reply(text="## Goal\nx", usage=(70, 20, 30, 0)))
    completion = make("openai", http_client=None).complete(request())  # builds its own httpx.Client
    [seen] = llm_server.requests
    assert (seen.method, seen.path) == ("POST", OPENAI_PATH)
    assert seen.headers["authorization"] == f"Bearer {FAKE_KEY}"
    assert seen.headers["content-type"] == "application/json"
    assert seen.json == make("openai").build_body(request())
    assert completion == Completion(
        text="## Goal\nx",
        usage=Usage(input=70, output=20, cache_read=30, cache_write=0, total_tokens=120),
        stop_reason="stop",
        model="test-model",
        provider="openai",
    )


def test_anthropic_round_trip(make, llm_server):
    llm_server.script(Reply(text="## Goal\nx", thinking="hmm", usage=(70, 20, 30, 5)))
    transport = httpx.HTTPTransport()  # the caller's own transport
    completion = make("anthropic", http_client=None, transport=transport).complete(request(reasoning="medium"))
    [seen] = llm_server.requests
    assert (seen.method, seen.path) == ("POST", ANTHROPIC_PATH)
    assert seen.headers["x-api-key"] == FAKE_KEY
    assert seen.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in seen.headers
    assert seen.json == make("anthropic").build_body(request(reasoning="medium"))
    assert seen.json["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert completion == Completion(
        text="## Goal\nx",
        thinking="hmm",
        usage=Usage(input=70, output=20, cache_read=30, cache_write=5, total_tokens=125),
        stop_reason="stop",
        model="test-model",
        provider="anthropic",
    )


@pytest.mark.parametrize("provider", PROVIDERS)
def test_no_caching_and_no_state_between_calls(provider, make, llm_server):
    llm_server.script(Reply(text="one"), Reply(text="two"))
    client = make(provider)
    assert client.complete(request()).text == "one"
    assert client.complete(request()).text == "two"
    first, second = llm_server.requests
    assert first.raw == second.raw
    assert "cache_control" not in first.raw.decode() and "prompt_cache_key" not in first.raw.decode()
    assert not any(name.startswith("anthropic-beta") for name in first.headers)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_length_stop_is_reported(provider, make, llm_server):
    llm_server.script(Reply(text="cut sho", stop="length"))
    completion = make(provider).complete(request())
    assert (completion.text, completion.stop_reason) == ("cut sho", "length")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_unicode_and_lone_surrogates_are_transported(provider, make, llm_server):
    text = "naïve 😀 \u2028 lone \ud83d end"
    llm_server.script(Reply(text="ok"))
    make(provider).complete(request(user_text=text))
    body = llm_server.requests[0].json
    sent = body["messages"][1]["content"] if provider == "openai" else body["messages"][0]["content"][0]["text"]
    assert sent == text
    assert "😀".encode() in llm_server.requests[0].raw  # non-ASCII raw, as JSON.stringify sends it


# -- parsing details ------------------------------------------------------------------


def test_openai_content_parts_reasoning_and_cache_write(make, llm_server):
    body = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
                    "reasoning_content": "thought",
                },
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 60, "cache_write_tokens": 10}},
    }
    llm_server.script(Reply(body=body))
    completion = make("openai").complete(request())
    assert completion.text == "a\nb"
    assert completion.thinking == "thought"
    assert completion.usage == Usage(input=30, output=7, cache_read=60, cache_write=10, total_tokens=107)


def test_openai_missing_usage_and_null_finish_reason(make, llm_server):
    llm_server.script(Reply(body={"choices": [{"message": {"content": "x"}, "finish_reason": None}]}))
    completion = make("openai").complete(request())
    assert (completion.stop_reason, completion.usage) == ("stop", Usage())


def test_anthropic_text_blocks_joined_with_newline(make, llm_server):
    body = {
        "content": [
            {"type": "thinking", "thinking": "t1", "signature": "s"},
            {"type": "redacted_thinking", "data": "zz"},
            {"type": "text", "text": "first"},
            {"type": "thinking", "thinking": "t2", "signature": "s"},
            {"type": "text", "text": "second"},
        ],
        "stop_reason": "max_tokens",
        "usage": {"input_tokens": 5, "output_tokens": 6},
    }
    llm_server.script(Reply(body=body))
    completion = make("anthropic").complete(request())
    assert (completion.text, completion.thinking) == ("first\nsecond", "t1\nt2")
    assert completion.stop_reason == "length"
    assert completion.usage.to_json()["totalTokens"] == 11


@pytest.mark.parametrize(
    "provider,body,needle",
    [
        ("openai", {"choices": [{"message": {"content": "x"}, "finish_reason": "content_filter"}]}, "content_filter"),
        ("openai", {"choices": []}, "choices[0]"),
        ("openai", [1, 2], "JSON object"),
        ("anthropic", {"content": [{"type": "text", "text": "x"}], "stop_reason": "refusal"}, "refusal"),
        ("anthropic", {"content": "x", "stop_reason": "end_turn"}, "content"),
        ("anthropic", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, "Overloaded"),
        ("openai", {"error": {"message": "proxy says no"}}, "proxy says no"),
    ],
)
def test_unusable_2xx_answers_are_clear_errors(provider, body, needle, make, llm_server, sleeps):
    llm_server.script(Reply(body=body))
    with pytest.raises(LLMResponseError) as info:
        make(provider).complete(request())
    message = str(info.value)
    assert needle in message and message.startswith(f"{provider}: ") and "\n" not in message
    assert len(llm_server.requests) == 1 and sleeps == []


def test_completion_usage_to_pi_shape():
    usage = Usage.of(1, 2, 3, 4)
    assert json.dumps(usage.to_json()) == json.dumps(
        {
            "input": 1,
            "output": 2,
            "cacheRead": 3,
            "cacheWrite": 4,
            "totalTokens": 10,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        }
    )
