"""Overflow, recoverable-length and transient-error classification (docs/pi-rules.md#overflow, docs/pi-rules.md#retries, docs/pi-rules.md#runtime-decisions)."""

from __future__ import annotations

import json

import pytest

from pipeline.runtime.classify import (
    OVERFLOW_PATTERNS,
    is_context_overflow,
    is_recoverable_length,
    is_retryable_error,
    is_turn_retryable,
)
from pipeline.session import AssistantMessage

from .replay import load

VECTORS = load("classify_vectors.json")


def error(text: str) -> dict:
    return {"role": "assistant", "content": [], "stopReason": "error", "errorMessage": text}


def reply(stop: str, inp: int = 0, out: int = 0, cache_read: int = 0) -> dict:
    usage = {"input": inp, "output": out, "cacheRead": cache_read, "cacheWrite": 0,
             "totalTokens": inp + out + cache_read}
    return {"role": "assistant", "content": [], "stopReason": stop, "usage": usage}


# --------------------------------------------------------------------------- docs/pi-rules.md#runtime-decisions table

TABLE = [  # error text, overflow, transient
    ("prompt is too long: 213462 tokens > 200000 maximum", True, False),
    ("Requested token count exceeds the model's maximum context length of 131072 tokens", True, False),
    ("exceeds maximum context length", False, False),
    ("400 status code (no body)", True, False),
    (" 400 status code (no body)", False, False),
    ("ThrottlingException: Too many tokens, please wait…", True, False),
    ("Throttling error: Too many tokens", False, False),
    ("Rate limit: too many tokens", False, True),
    ("Service unavailable: prompt is too long", False, True),
    ("500 Internal server error", False, True),
    ("Error 5000 tokens", False, True),
    ("insufficient_quota 429", False, False),
    ("billing hard limit 429", False, False),
    ("Server requested 120s retry delay (max: 60s)", False, True),
    ("exceeded request buffer limit while retrying upstream", False, False),
]


@pytest.mark.parametrize("text, overflow, transient", TABLE)
def test_spec_error_table(text, overflow, transient):
    message = error(text)
    assert is_context_overflow(message, 200000) is overflow
    assert is_retryable_error(message) is transient
    assert is_turn_retryable(message, 200000) is (transient and not overflow)


NON_ERROR = [  # docs/pi-rules.md#runtime-decisions "non-error replies"
    (reply("stop", 210000), 200000, True),
    (reply("stop", 200000), 200000, False),
    (reply("stop", 210000), 0, False),
    (reply("length", 198000), 200000, True),
    (reply("length", 197999), 200000, False),
]


@pytest.mark.parametrize("message, window, overflow", NON_ERROR)
def test_spec_non_error_replies(message, window, overflow):
    assert is_context_overflow(message, window) is overflow
    assert not is_retryable_error(message)


def test_overflow_is_never_a_turn_retry_but_is_a_summary_retry():
    """docs/pi-rules.md#retries: ``prompt is too long: 250000 tokens`` contains ``500``."""
    message = error("prompt is too long: 250000 tokens > 200000 maximum")
    assert is_retryable_error(message)
    assert not is_turn_retryable(message, 200000)


@pytest.mark.parametrize("stop, out, max_tokens, expected", [
    ("length", 100, 32000, True), ("length", 32000, 32000, False), ("length", 0, 0, False),
    ("length", 5, None, False), ("stop", 100, 32000, False), ("error", 100, 32000, False),
])
def test_recoverable_length(stop, out, max_tokens, expected):
    assert is_recoverable_length(reply(stop, 1000, out), max_tokens) is expected


def test_typed_messages_and_mappings_agree():
    raw = error("503 overloaded")
    typed = AssistantMessage.from_json(raw)
    assert is_retryable_error(typed) and is_retryable_error(raw)


# --------------------------------------------------------------------------- oracle vectors


def test_overflow_patterns_are_pis():
    assert list(OVERFLOW_PATTERNS) == [p["source"] for p in VECTORS["overflowPatterns"]]
    assert all(p["flags"] == "i" for p in VECTORS["overflowPatterns"])


def _case_id(case: dict) -> str:
    return json.dumps(case["message"], ensure_ascii=True)[:80]


def _complete(message: dict) -> dict:
    """What the oracle's ``classify_error`` fills in around a partial message."""
    usage = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
    return {"role": "assistant", "content": [], "usage": usage, "stopReason": "error", **message}


@pytest.mark.parametrize("case", VECTORS["classify"], ids=_case_id)
def test_classify_vectors(case):
    message = _complete(case["message"])
    got = {
        "isContextOverflow": is_context_overflow(message, case["contextWindow"]),
        "isRecoverableLength": is_recoverable_length(message, case.get("maxTokens")),
        "isRetryableAssistantError": is_retryable_error(message),
    }
    assert got == case["expect"]


def test_vectors_cover_every_outcome():
    outcomes = {tuple(c["expect"].values()) for c in VECTORS["classify"]}
    assert len(VECTORS["classify"]) >= 500
    assert {(True, False, False), (False, False, True), (True, False, True), (False, True, False),
            (False, False, False)} <= outcomes
