"""The summary clients of the proxy's other two wire formats (OpenAI Responses, Gemini): exact bodies,
headers, and answers read from the real loopback servers of those formats."""

from __future__ import annotations

import pytest

from pipeline.llm.errors import LLMResponseError
from pipeline.llm.gemini import GeminiClient
from pipeline.llm.openai_responses import OpenAIResponsesClient
from pipeline.llm.types import SummaryRequest
from pipeline.loopback.gemini import GeminiLoopbackServer
from pipeline.loopback.responses import ResponsesLoopbackServer

REQUEST = SummaryRequest(system_prompt="SYSTEM", user_text="<conversation>hi</conversation>", max_tokens=500,
                         model="m")
ENV = {"K": "sk-test"}


def test_responses_body_exact_and_answer_read():
    with ResponsesLoopbackServer([{"text": "## Goal\n- x", "usage": {"input": 30, "output": 7, "cacheRead": 10}}]) as server:
        with OpenAIResponsesClient(model="m", base_url=server.base_url, api_key_env="K", env=ENV) as client:
            body = client.build_body(REQUEST)
            done = client.complete(REQUEST)
        seen = server.received[-1]
    assert body == {"model": "m", "instructions": "SYSTEM", "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": REQUEST.user_text}]}],
        "max_output_tokens": 500, "stream": False, "store": False}
    assert seen.path == "/v1/responses" and seen.headers["authorization"] == "Bearer sk-test" and seen.body == body
    assert done.text == "## Goal\n- x" and done.stop_reason == "stop"
    assert (done.usage.input, done.usage.cache_read, done.usage.output) == (30, 10, 7)


def test_responses_reasoning_is_the_effort_and_incomplete_is_length_or_an_error():
    client = OpenAIResponsesClient(model="m", env=ENV)
    assert client.build_body(SummaryRequest(system_prompt="s", user_text="u", max_tokens=9, reasoning="high"))[
        "reasoning"] == {"effort": "high"}
    output = [{"type": "message", "content": [{"type": "output_text", "text": "cut"}]}]
    cut = client._parse({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
                         "output": output}, REQUEST)
    assert cut.stop_reason == "length" and cut.text == "cut"
    with pytest.raises(LLMResponseError, match="content_filter"):
        client._parse({"status": "incomplete", "incomplete_details": {"reason": "content_filter"}, "output": []},
                      REQUEST)


def test_gemini_body_exact_model_in_the_path_and_answer_read():
    with GeminiLoopbackServer([{"text": "## Goal\n- y", "usage": {"input": 40, "output": 5, "cacheRead": 4}}]) as server:
        with GeminiClient(model="gemini-x", base_url=server.url, api_key_env="K", env=ENV) as client:
            body = client.build_body(REQUEST)
            done = client.complete(REQUEST)
        seen = server.received[-1]
    assert body == {"systemInstruction": {"parts": [{"text": "SYSTEM"}]},
                    "contents": [{"role": "user", "parts": [{"text": REQUEST.user_text}]}],
                    "generationConfig": {"maxOutputTokens": 500}}
    assert seen.path == "/v1beta/models/gemini-x:generateContent" and seen.headers["x-goog-api-key"] == "sk-test"
    assert "authorization" not in seen.headers and seen.body == body
    assert done.text == "## Goal\n- y" and done.stop_reason == "stop"
    assert (done.usage.input, done.usage.cache_read, done.usage.output) == (40, 4, 5)


def test_gemini_thoughts_apart_and_a_safety_stop_is_an_error():
    client = GeminiClient(model="g", env=ENV)
    parts = [{"text": "pondering", "thought": True}, {"text": "answer"}]
    done = client._parse({"candidates": [{"content": {"parts": parts}, "finishReason": "MAX_TOKENS"}]}, REQUEST)
    assert (done.text, done.thinking, done.stop_reason) == ("answer", "pondering", "length")
    with pytest.raises(LLMResponseError, match="SAFETY"):
        client._parse({"candidates": [{"content": {"parts": parts}, "finishReason": "SAFETY"}]}, REQUEST)


def _thinking(model: str, reasoning: str | None) -> object:
    body = GeminiClient(model=model, env=ENV).build_body(
        SummaryRequest(system_prompt="s", user_text="u", max_tokens=900, reasoning=reasoning))
    return body["generationConfig"].get("thinkingConfig")


def test_gemini_thinking_is_asked_for_as_pi_asks_and_off_when_the_profile_says_off():
    """pi 0.84's Gemini provider: a level is a budget on 2.5 (its budgets per family) or a named
    level on Gemini 3; no level turns thinking off (a thinking model's default is on), or down to
    the lowest level a Gemini 3 has; a model that does not think is sent nothing."""
    assert _thinking("gemini-2.5-flash", None) == {"thinkingBudget": 0}
    assert _thinking("gemini-2.5-flash", "off") == {"thinkingBudget": 0}
    assert _thinking("gemini-2.5-flash", "medium") == {"includeThoughts": True, "thinkingBudget": 8192}
    assert _thinking("gemini-2.5-pro", "high") == {"includeThoughts": True, "thinkingBudget": 32768}
    assert _thinking("gemini-2.5-flash-lite", "minimal") == {"includeThoughts": True, "thinkingBudget": 512}
    assert _thinking("gemini-2.5-pro-preview-06-05", "xhigh") == {"includeThoughts": True, "thinkingBudget": 32768}
    assert _thinking("gemini-3-pro-preview", None) == {"thinkingLevel": "LOW"}
    assert _thinking("gemini-3-pro-preview", "medium") == {"includeThoughts": True, "thinkingLevel": "HIGH"}
    assert _thinking("gemini-3-flash", None) == {"thinkingLevel": "MINIMAL"}
    assert _thinking("gemini-3-flash", "low") == {"includeThoughts": True, "thinkingLevel": "LOW"}
    assert _thinking("gemini-2.0-flash", "high") is None and _thinking("gemini-x", None) is None
