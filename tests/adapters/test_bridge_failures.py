"""The bridge's overflow recovery and its failures (issue 19, item 7), and a constructor that appends nothing.

A provider's failure while compacting for the retry is the expected one: logged, no retry
(``recover`` returns ``None`` and the adapter re-raises the overflow), the session
unchanged. Anything else is a bug and propagates.
"""

from __future__ import annotations

import logging

import pytest

from pipeline import compile_profile
from pipeline.adapters._bridge import ContextBridge, usage_json
from pipeline.llm.errors import LLMConnectionError
from pipeline.session import SessionFile

PIPELINE = compile_profile("default", overrides={"compaction.keep_recent_tokens": 50})
OVERFLOW = RuntimeError("400: the input exceeds the context window of this model")


class Failing:
    def __init__(self, error: BaseException) -> None:
        self.error = error

    def build_body(self, request):
        return {}

    def complete(self, request):
        raise self.error


def _bridge(tmp_path, client):
    bridge = ContextBridge(PIPELINE, tmp_path / "s.jsonl", context_window=4000, model="m", cwd=str(tmp_path),
                           client=client)
    for i in range(3):
        bridge.sync([{"role": "user", "content": [{"type": "text", "text": f"question {i} " * 40}],
                      "timestamp": bridge.now()},
                     {"role": "assistant", "content": [{"type": "text", "text": f"answer {i} " * 40}],
                      **bridge.reply_fields(), "usage": usage_json(100, 10), "stopReason": "stop",
                      "timestamp": bridge.now()}])
    return bridge


def test_a_provider_failure_while_recovering_is_logged_and_not_retried(tmp_path, caplog):
    bridge = _bridge(tmp_path, Failing(LLMConnectionError("the summarizer is unreachable")))
    with caplog.at_level(logging.WARNING, logger="pipeline.adapters"):
        assert bridge.recover(OVERFLOW) is None
    assert "the summarizer is unreachable" in caplog.text
    entries = SessionFile.open(tmp_path / "s.jsonl").entries
    assert not any(e.type == "compaction" for e in entries)
    assert entries[-1].message.raw["stopReason"] == "error"  # the overflow is recorded as pi's failed reply


def test_a_bug_while_recovering_propagates(tmp_path):
    bridge = _bridge(tmp_path, Failing(TypeError("a bug")))
    with pytest.raises(TypeError, match="a bug"):
        bridge.recover(OVERFLOW)


def test_recovering_compacts_with_a_working_summarizer(tmp_path):
    bridge = _bridge(tmp_path, None)  # the profile's offline summarizer
    messages = bridge.recover(OVERFLOW)
    assert messages and bridge.compactions[-1].result.summarized
    assert messages[-1].get("stopReason") != "error"


def test_constructing_a_bridge_appends_nothing(tmp_path):
    path = tmp_path / "s.jsonl"
    bridge = ContextBridge("default", path, context_window=4000, model="m", cwd=str(tmp_path), thinking_level="low")
    assert list(SessionFile.open(path).entries) == []
    assert bridge.start() is bridge and bridge.start() is bridge
    assert [(e.type, e.raw.get("thinkingLevel") or e.raw.get("modelId")) for e in SessionFile.open(path).entries] == [
        ("model_change", "m"), ("thinking_level_change", "low")]
    opened = ContextBridge.open("default", tmp_path / "t.jsonl", context_window=4000, cwd=str(tmp_path))
    assert [e.type for e in opened.session.entries] == ["model_change", "thinking_level_change"]


# --------------------------------------------------------------------------- pi 1.x: context edits


def _pi1_bridge(tmp_path, name):
    pipeline = compile_profile("builtin:pi-1", {"compaction.reserve_tokens": 1000, "compaction.keep_recent_tokens": 50})
    bridge = ContextBridge(pipeline, tmp_path / name, context_window=20000, model="m", cwd=str(tmp_path))
    bridge.sync([{"role": "user", "content": [{"type": "text", "text": "a long question " * 400}],
                  "timestamp": bridge.now()},
                 {"role": "assistant", "content": [{"type": "text", "text": "an answer"}], **bridge.reply_fields(),
                  "usage": usage_json(19500, 10), "stopReason": "stop", "timestamp": bridge.now()}])
    return bridge


def test_the_bridges_check_follows_context_edits(tmp_path):
    """``estimate_on: projection``: once the branch has a context edit after the reply, the
    projection's estimate replaces the reply's usage (19510 > 20000 - 1000 would compact)."""
    plain = _pi1_bridge(tmp_path, "plain.jsonl")
    assert plain.decision().action == "compact"
    edited = _pi1_bridge(tmp_path, "edited.jsonl")
    question = next(e for e in edited.session.path_to() if getattr(e, "message", None) is not None)
    edited.session.append_context_edit(question.id, {"content": "a short question"})
    assert edited.decision().action != "compact"
    assert edited.after_run() is None and not edited.compactions
