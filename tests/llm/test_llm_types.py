"""Request/response types and error messages."""

from __future__ import annotations

import dataclasses

import pytest

from pipeline.errors import PipelineError
from pipeline.llm.errors import LLMAuthError, LLMConfigError, LLMError, LLMStatusError
from pipeline.llm.types import REASONING_LEVELS, SummaryRequest
from pipeline.session import Usage


def make_request(**overrides) -> SummaryRequest:
    fields = dict(system_prompt="S" * 50, user_text="U" * 5000, max_tokens=100, model="m")
    fields.update(overrides)
    return SummaryRequest(**fields)


def test_request_is_frozen_and_keyword_only():
    request = make_request()
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.max_tokens = 5
    with pytest.raises(TypeError):
        SummaryRequest("s", "u", 100, "m")


def test_request_repr_leaves_out_prompt_texts():
    text = repr(make_request(kind="turn_prefix"))
    assert "UUUU" not in text and "SSSS" not in text
    assert "max_tokens=100" in text and "kind='turn_prefix'" in text


@pytest.mark.parametrize("off", [None, "off"])
def test_reasoning_off(off):
    assert make_request(reasoning=off).reasoning_level is None


@pytest.mark.parametrize("level", REASONING_LEVELS)
def test_reasoning_levels(level):
    assert make_request(reasoning=level).reasoning_level == level


def test_unknown_reasoning_level_is_a_located_hint():
    with pytest.raises(LLMConfigError) as info:
        make_request(reasoning="hihg")
    assert "unknown reasoning level 'hihg'" in str(info.value) and "did you mean `high`?" in str(info.value)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "100"])
def test_max_tokens_must_be_a_positive_int(bad):
    with pytest.raises(LLMConfigError, match="max_tokens"):
        make_request(max_tokens=bad)


def test_usage_sum_and_total():
    a = Usage.of(10, 5, 100, 1)
    b = Usage.of(1, 2, 3, 4)
    assert a.total_tokens == 116
    assert a + b == Usage(11, 7, 103, 5, 126)
    assert sum([a, b], Usage()) == a + b


def test_usage_to_json_keys_match_the_spec():
    # docs/pi-rules.md#messages: usage{input,output,cacheRead,cacheWrite,totalTokens,cost{…}}
    assert list(Usage().to_json()) == ["input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"]
    assert set(Usage().to_json()["cost"].values()) == {0}


def test_errors_are_pipeline_errors_with_one_line():
    error = LLMStatusError("openai", 400, "bad\nrequest\n\n  body", hint="h")
    assert isinstance(error, PipelineError) and isinstance(error, LLMError)
    assert str(error) == "openai: HTTP 400: bad request body (h)"
    assert repr(error) == "LLMStatusError('openai: HTTP 400: bad request body (h)')"
    assert error.problems[0].code == "provider.http-status"


def test_auth_error_names_the_variable():
    error = LLMAuthError("anthropic", "MY_KEY")
    assert str(error).startswith("anthropic: no API key: environment variable MY_KEY is not set")
    assert error.env_name == "MY_KEY" and not error.retryable


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("url", ["ftp://x", "localhost:8080", "file:///tmp/x"])
def test_base_url_must_be_http(provider, url):
    from pipeline.llm.errors import LLMConfigError
    from pipeline.llm.factory import make_client

    with pytest.raises(LLMConfigError) as err:
        make_client(provider, model="m", base_url=url, env={})
    assert "is not an http:// or https:// URL" in str(err.value)
