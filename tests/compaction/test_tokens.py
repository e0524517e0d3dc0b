"""Token accounting (docs/pi-rules.md#token-accounting, docs/pi-rules.md#token-estimates) against the recorded table and pi's own estimates."""

from __future__ import annotations

import pytest

from pipeline.compaction.tokens import context_tokens, estimate_context, estimate_tokens, should_compact
from pipeline.model.compaction import Compaction
from pipeline.session import SessionFile, Usage, parse_message

from .conftest import ROOT, vectors

IMG = {"type": "image", "data": "x", "mimeType": "image/png"}


def _user(content):
    return parse_message({"role": "user", "content": content, "timestamp": 1})


def _assistant(*blocks):
    return parse_message({"role": "assistant", "content": list(blocks), "stopReason": "stop", "timestamp": 1})


def _call(name, args):
    return {"type": "toolCall", "id": "1", "name": name, "arguments": args}


def _text(role, content, **extra):
    return parse_message({"role": role, "content": content, "timestamp": 1, **extra})


SPEC_TABLE = [  # docs/pi-rules.md#token-estimates
    (_user("hello"), 2),
    (_user(""), 0),
    (_user("abcd"), 1),
    (_user([{"type": "text", "text": "ab"}, {"type": "text", "text": "cde"}]), 2),
    (_user([{"type": "text", "text": "hi"}, IMG]), 1201),
    (_user([IMG]), 1200),
    (_user("😀😀😀"), 2),
    (_assistant({"type": "text", "text": "Done."}, {"type": "thinking", "thinking": "hmm"},
                _call("read", {"path": "a.ts"})), 7),
    (_assistant(_call("read", {"path": "a.ts"})), 5),
    (_assistant(_call("ls", {})), 1),
    (_assistant(_call("w", {"p": "é\n"})), 3),
    (_assistant(), 0),
    (_text("toolResult", [IMG], toolCallId="c", toolName="read"), 1200),
    (_text("toolResult", [{"type": "text", "text": "x" * 2001}], toolCallId="c", toolName="read"), 501),
    (_text("custom", "abcdefgh", customType="x"), 2),
    (_text("custom", [{"type": "text", "text": "a"}, IMG], customType="x"), 1201),
    (parse_message({"role": "bashExecution", "command": "ls", "output": "a\nb", "timestamp": 1}), 2),
    (parse_message({"role": "branchSummary", "summary": "123456789", "fromId": "root", "timestamp": 1}), 3),
    (parse_message({"role": "compactionSummary", "summary": "12345678", "tokensBefore": 1, "timestamp": 1}), 2),
    (_text("developer", "whatever"), 0),
]


@pytest.mark.parametrize("message,tokens", SPEC_TABLE, ids=[f"row{i}" for i in range(len(SPEC_TABLE))])
def test_spec_token_table(message, tokens):
    assert estimate_tokens(message) == tokens


def test_odd_messages_match_pi():
    odd = vectors("tokens")["odd"]
    assert [estimate_tokens(parse_message(m)) for m in odd["messages"]] == odd["tokens"]


@pytest.mark.parametrize("case", vectors("tokens")["sessions"], ids=lambda c: c["session"].rsplit("/", 1)[-1])
def test_every_message_of_the_sessions_matches_pi(case):
    session = SessionFile.open(ROOT / case["session"])
    messages = [e.message for e in session.entries if e.type == "message"]
    assert [estimate_tokens(m) for m in messages] == case["tokens"]


@pytest.mark.parametrize("case", vectors("tokens")["contexts"], ids=lambda c: str(len(c["messages"])))
def test_context_estimates_match_pi(case):
    estimate = estimate_context([parse_message(m) for m in case["messages"]])
    assert estimate.to_json() == case["expected"]


@pytest.mark.parametrize("case", vectors("tokens")["thresholds"], ids=lambda c: f"{c['tokens']}/{c['window']}")
def test_threshold_matches_pi(case):
    overrides = {"reserveTokens": "reserve_tokens", "enabled": "enabled"}
    settings = Compaction(**{overrides[k]: v for k, v in case["settings"].items() if k in overrides})
    assert should_compact(case["tokens"], case["window"], settings) is case["expected"]


def test_spec_context_examples():
    """The context estimates and threshold figures of docs/pi-rules.md#token-estimates."""
    usage = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1000}
    anchor = parse_message({"role": "assistant", "content": [], "stopReason": "stop", "usage": usage, "timestamp": 1})
    assert estimate_context([_user("12345678"), _user("1234")]).tokens == 3
    assert estimate_context([anchor, _user("12345678")]).tokens == 1002
    parts = Usage.from_json({"input": 100, "output": 20, "cacheRead": 5, "cacheWrite": 1, "totalTokens": 0})
    assert context_tokens(parts) == 126
    assert should_compact(183616, 200000) is False
    assert should_compact(183617, 200000) is True
    assert should_compact(0, 0) is True


def test_profile_settings_change_the_estimate():
    """chars_per_token and image_chars come from the profile."""
    settings = Compaction(chars_per_token=2, image_chars=10)
    assert estimate_tokens(_user([{"type": "text", "text": "abc"}, IMG]), settings) == 7  # ceil(13 / 2)
