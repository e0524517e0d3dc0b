"""The one session driver (issue 30, item 1): a conversation and the adapters' bridge open,
start, stamp and compact a session the same way, through :class:`SessionDriver`.

The clock a host passes stamps the entries its driver writes and the messages it makes; the
session handed in keeps its own clock outside those writes (nothing is patched onto it).
"""

from __future__ import annotations

from datetime import datetime, timezone

from pipeline import compile_profile
from pipeline.adapters._bridge import ContextBridge
from pipeline.runtime.conversation import Conversation
from pipeline.runtime.host import ModelInfo
from pipeline.runtime.driver import SessionDriver, open_session
from pipeline.session import SessionFile
from pipeline.model.run_plan import RunPlan

PROFILE = compile_profile("default").profile
MODEL = ModelInfo(id="m", provider="local", context_window=4000, max_tokens=1000)
PINNED = 1787220000000.0
PINNED_ISO = "2026-08-20T10:00:00.000Z"


def test_the_conversations_clock_stamps_its_entries_and_leaves_the_session_alone(tmp_path):
    session = SessionFile.create(tmp_path / "s.jsonl", cwd=str(tmp_path))
    conv = Conversation.open(RunPlan.of(PROFILE), session, model=MODEL, cwd=str(tmp_path), clock=lambda: PINNED)
    conv.prompt("hello")
    stamps = [e.raw["timestamp"] for e in session.entries]
    assert stamps == [PINNED_ISO] * 3  # model change, thinking level, the user's message
    assert session.entries[-1].raw["message"]["timestamp"] == int(PINNED)
    outside = session.append_custom("probe")  # a write outside the driver: the session's own clock
    assert outside.raw["timestamp"] != PINNED_ISO
    assert abs(datetime.fromisoformat(outside.raw["timestamp"].replace("Z", "+00:00"))
               - datetime.now(timezone.utc)).total_seconds() < 60


def test_a_session_file_takes_its_clock_when_opened(tmp_path):
    session = SessionFile.create(tmp_path / "s.jsonl", cwd=str(tmp_path), clock=lambda: PINNED_ISO)
    assert session.append_custom("x").raw["timestamp"] == PINNED_ISO
    with session.stamping(lambda: "2026-01-01T00:00:00.000Z"):
        assert session.append_custom("y").raw["timestamp"] == "2026-01-01T00:00:00.000Z"
    assert session.append_custom("z").raw["timestamp"] == PINNED_ISO


def test_an_empty_or_missing_file_starts_a_new_session_for_every_host(tmp_path):
    for name in ("conversation", "bridge"):
        (tmp_path / f"{name}.jsonl").write_text("")
    conv_session = open_session(tmp_path / "conversation.jsonl", str(tmp_path))
    Conversation.open(RunPlan.of(PROFILE), conv_session, model=MODEL, cwd=str(tmp_path), thinking_level="low")
    bridge = ContextBridge.open("default", tmp_path / "bridge.jsonl", context_window=4000, model="m",
                                provider="local", cwd=str(tmp_path), thinking_level="low")
    shape = lambda s: [(e.type, e.raw.get("provider"), e.raw.get("modelId"), e.raw.get("thinkingLevel"))  # noqa: E731
                       for e in s.entries]
    assert shape(conv_session) == shape(bridge.session) == [
        ("model_change", "local", "m", None), ("thinking_level_change", None, None, "low")]


def test_the_driver_counts_the_recovery_cycle_from_what_it_appends(tmp_path):
    session = SessionFile.create(tmp_path / "s.jsonl", cwd=str(tmp_path))
    driver = SessionDriver(RunPlan.of(PROFILE), session, model=MODEL, clock=lambda: PINNED)
    assert driver.start() and not driver.start()
    overflow = {"role": "assistant", "content": [], "api": "x", "provider": "local", "model": "m",
                "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
                "stopReason": "error", "errorMessage": "prompt is too long: context_length_exceeded",
                "timestamp": driver.now()}
    driver.append({"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": driver.now()})
    driver.append(overflow)
    decision = driver.check(overflow, "after_run", driver.read())
    assert (decision.action, decision.reason) == ("compact", "overflow")
    assert driver.cycle.attempts == 1
    driver.append({"role": "user", "content": [{"type": "text", "text": "again"}], "timestamp": driver.now()})
    assert driver.cycle.attempts == 0  # a user message starts a new cycle
