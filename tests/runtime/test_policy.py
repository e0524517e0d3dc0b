"""The compaction check, overflow recovery and turn retries (docs/pi-rules.md#after-a-run-the-compaction-check, docs/pi-rules.md#retries, table docs/pi-rules.md#runtime-decisions)."""

from __future__ import annotations

import math

import pytest

from pipeline.compaction.tokens import should_compact
from pipeline.model.compaction import Compaction
from pipeline.runtime.policy import (
    NOTHING,
    CompactionDecision,
    CurrentModel,
    RecoveryCycle,
    RetrySettings,
    TurnRetry,
    check_compaction,
    latest_compaction_time,
    summary_retry_delay,
)
from pipeline.session import CompactionEntry, parse_entry
from pipeline.model.run_plan import CompactionCheck

from .replay import compaction_settings, load

MODEL = CurrentModel("prov", "m1", context_window=200000, max_tokens=32000)
NOW = 1_000_000
THRESHOLD = CompactionDecision("compact", "threshold")
RECOVER = CompactionDecision("compact", "overflow", drop_reply=True, retry=True)


def msg(stop="stop", *, total=0, inp=0, out=0, error=None, model="m1", ts=NOW) -> dict:
    usage = {"input": inp, "output": out, "cacheRead": 0, "cacheWrite": 0, "totalTokens": total}
    m = {"role": "assistant", "content": [], "provider": "prov", "model": model, "usage": usage,
         "stopReason": stop, "timestamp": ts}
    if error is not None:
        m["errorMessage"] = error
    return m


def user(text="hi", ts=NOW) -> dict:
    return {"role": "user", "content": text, "timestamp": ts}


def decide(reply, *, phase="after_run", model=MODEL, compaction=None, attempts=0, messages=(), settings=Compaction()):
    decision = check_compaction(reply, phase=phase, model=model, latest_compaction_ms=compaction,
                                recovery_attempts=attempts, messages=messages, settings=CompactionCheck.of(settings))
    return CompactionDecision(decision.action, decision.reason, decision.drop_reply, decision.retry)


# --------------------------------------------------------------------------- docs/pi-rules.md#runtime-decisions compaction table

TOO_LONG = "prompt is too long: 213462 tokens > 200000 maximum"

TABLE = [  # (row, reply, keyword arguments, decision)
    ("stop, total 183617", msg(total=183617), {}, THRESHOLD),
    ("aborted, before a new prompt, 190000", msg("aborted", total=190000), {"phase": "before_prompt"}, THRESHOLD),
    ("aborted, after a run", msg("aborted", total=190000), {}, NOTHING),
    ("older than the latest compaction", msg(total=190000), {"compaction": NOW}, NOTHING),
    ("error prompt is too long, same model", msg("error", error=TOO_LONG), {}, RECOVER),
    ("same, other model", msg("error", error=TOO_LONG, model="m0"), {}, NOTHING),
    ("same, recovery already tried", msg("error", error=TOO_LONG), {"attempts": 1},
     CompactionDecision("fail", "overflow")),
    ("stop, input 210000", msg(inp=210000, total=210000), {}, CompactionDecision("compact", "overflow")),
    ("length, output 100", msg("length", out=100, total=5000), {}, RECOVER),
    ("length, output 32000, total 50000", msg("length", inp=18000, out=32000, total=50000), {}, NOTHING),
    ("error overloaded, memory holds a 190000 anchor", msg("error", error="overloaded"),
     {"messages": [user(), msg(total=190000, ts=NOW - 5), user()]}, THRESHOLD),
    ("window 0, total 1", msg(total=1), {"model": CurrentModel("prov", "m1", 0, 32000)}, THRESHOLD),
]


@pytest.mark.parametrize("row, reply, kwargs, expected", TABLE, ids=[r[0] for r in TABLE])
def test_spec_compaction_table(row, reply, kwargs, expected):
    assert decide(reply, **kwargs) == expected


# --------------------------------------------------------------------------- the rules one by one


def test_disabled_stops_everything_even_overflow():
    off = Compaction(enabled=False)
    assert decide(msg("error", error=TOO_LONG), settings=off) == NOTHING
    assert decide(msg(total=199999), settings=off) == NOTHING


def test_threshold_is_strict_and_uses_reserve_tokens():
    assert decide(msg(total=183616)) == NOTHING
    assert decide(msg(total=183617)) == THRESHOLD
    assert decide(msg(total=190001), settings=Compaction(reserve_tokens=10000)) == THRESHOLD
    assert decide(msg(total=190000), settings=Compaction(reserve_tokens=10000)) == NOTHING


def test_threshold_reports_the_tokens_it_used():
    assert check_compaction(msg(total=1234), phase="after_run", model=MODEL).tokens == 1234


def test_zero_usage_falls_back_to_the_memory_estimate():
    memory = [user(), msg(total=190000, ts=NOW - 5), user("x" * 40)]  # 190000 + ceil(40/4)
    decision = check_compaction(msg(total=0), phase="after_run", model=MODEL, messages=memory)
    assert (decision.action, decision.tokens) == ("compact", 190010)


def test_an_error_reply_s_own_usage_is_ignored():
    reply = msg("error", error="overloaded", total=190000)
    assert decide(reply) == NOTHING
    assert decide(reply, messages=[user(), msg(total=1000, ts=NOW - 5)]) == NOTHING
    assert decide(reply, messages=[user(), msg(total=190000, ts=NOW - 5)]) == THRESHOLD


def test_estimate_without_anchor_or_with_a_stale_anchor_stops():
    stale = [user(), msg(total=190000, ts=NOW - 5)]
    assert decide(msg("error", error="overloaded"), messages=[user("x" * 4000)]) == NOTHING
    assert decide(msg("error", error="overloaded", ts=NOW + 9), messages=stale, compaction=NOW - 5) == NOTHING
    assert decide(msg("error", error="overloaded", ts=NOW + 9), messages=stale, compaction=NOW - 6) == THRESHOLD


def test_overflow_from_another_model_is_treated_as_an_ordinary_error():
    """Another model's overflow goes to the threshold rule, which estimates from memory."""
    memory = [user(), msg(total=190000, ts=NOW - 5)]
    assert decide(msg("error", error=TOO_LONG, model="m0"), messages=memory) == THRESHOLD
    # no current model: never "same model", and the window counts as 0 (every check is over it)
    assert decide(msg("error", error=TOO_LONG), model=None, messages=memory) == THRESHOLD


def test_silent_overflow_compacts_without_retry_even_after_recovery():
    assert decide(msg(inp=210000, total=210000), attempts=5) == CompactionDecision("compact", "overflow")


def test_overflow_retries_setting_is_the_budget_per_cycle():
    reply = msg("error", error=TOO_LONG)
    assert decide(reply, attempts=1, settings=Compaction(overflow_retries=2)) == RECOVER
    assert decide(reply, attempts=2, settings=Compaction(overflow_retries=2)).action == "fail"
    assert decide(reply, settings=Compaction(overflow_retries=0)).action == "fail"


def test_compaction_time_comparison_follows_js():
    reply = msg(total=190000)
    assert decide(reply, compaction=NOW - 1) == THRESHOLD
    assert decide(reply, compaction=math.nan) == THRESHOLD  # Invalid Date: never "older"
    no_ts = {k: v for k, v in reply.items() if k != "timestamp"}
    assert decide(no_ts, compaction=NOW) == THRESHOLD  # undefined <= n is false
    assert decide({**reply, "timestamp": None}, compaction=NOW) == NOTHING  # null <= n is 0 <= n


def _compaction(ts) -> dict:
    return {"type": "compaction", "id": "c1", "parentId": None, "timestamp": ts, "summary": "s",
            "firstKeptEntryId": "a", "tokensBefore": 1}


def test_latest_compaction_time():
    first = parse_entry(_compaction("2026-01-01T00:00:00.000Z"))
    second = parse_entry({**_compaction("2026-01-01T00:00:01.500Z"), "id": "c2"})
    assert isinstance(first, CompactionEntry)
    assert latest_compaction_time([]) is None
    assert latest_compaction_time([first, second]) == 1767225601500
    assert math.isnan(latest_compaction_time([first, parse_entry({**_compaction("soon"), "id": "c3"})]))


def test_recovery_cycle():
    cycle = RecoveryCycle()
    cycle = cycle.after(RECOVER)
    assert cycle.attempts == 1
    assert cycle.after(THRESHOLD).attempts == 1
    assert cycle.on_reply(msg("error", error=TOO_LONG)).attempts == 1
    assert cycle.on_reply(msg("length", out=5)).attempts == 1
    assert cycle.on_reply(msg("toolUse")).attempts == 0
    assert cycle.on_reply(msg("aborted")).attempts == 0
    assert cycle.on_user_message().attempts == 0


# --------------------------------------------------------------------------- turn retries (docs/pi-rules.md#retries, docs/pi-rules.md#runtime-decisions)


def test_four_503_overloaded_replies_retry_three_times_then_give_up():
    settings, state, delays = RetrySettings(), TurnRetry(), []
    for _ in range(4):
        reply = msg("error", error="503 overloaded")
        state, succeeded = state.on_reply(reply)
        assert succeeded is None
        decision = state.after_run(reply, settings, 200000)
        state = decision.state
        delays.append((decision.action, decision.attempt, decision.delay_ms))
    assert delays == [("retry", 1, 2000), ("retry", 2, 4000), ("retry", 3, 8000), ("give_up", 3, 0)]
    assert state == TurnRetry()


def test_two_failures_then_success_resets_the_counter():
    settings, state = RetrySettings(), TurnRetry()
    for _ in range(2):
        decision = state.after_run(msg("error", error="503 overloaded"), settings, 200000)
        assert decision.action == "retry" and decision.drop_reply
        state = decision.state
    state, succeeded = state.on_reply(msg(total=10))
    assert (state, succeeded) == (TurnRetry(), 2)
    assert state.after_run(msg(total=10), settings, 200000).action == "none"


def test_overflow_is_never_retried_and_ends_a_retry_series():
    overflow = msg("error", error="prompt is too long: 250000 tokens")
    assert TurnRetry().after_run(overflow, RetrySettings(), 200000).action == "none"
    decision = TurnRetry(2).after_run(overflow, RetrySettings(), 200000)
    assert (decision.action, decision.attempt, decision.state) == ("give_up", 2, TurnRetry())


@pytest.mark.parametrize("settings, action", [
    (RetrySettings(enabled=False), "none"), (RetrySettings(max_retries=0), "none"),
    (RetrySettings(max_retries=1, base_delay_ms=3), "retry"),
])
def test_retry_settings(settings, action):
    decision = TurnRetry().after_run(msg("error", error="timeout"), settings, 200000)
    assert decision.action == action
    if action == "retry":
        assert decision.delay_ms == 3 and decision.max_attempts == 1


def test_permanent_error_gets_no_retry():
    decision = TurnRetry().after_run(msg("error", error="invalid api key"), RetrySettings(), 200000)
    assert decision.action == "none" and decision.state == TurnRetry()


@pytest.mark.parametrize("stop", ["aborted", "length", "toolUse", "stop"])
def test_any_reply_but_an_error_ends_a_retry_series(stop):
    assert TurnRetry(2).on_reply(msg(stop)) == (TurnRetry(), 2)
    assert TurnRetry(2).on_reply(msg("error", error="503")) == (TurnRetry(2), None)


def test_cancel_during_the_wait_resets():
    assert TurnRetry(2).cancelled() == (TurnRetry(), 2)


def test_summary_retry_delay():
    s = RetrySettings()
    overflow = msg("error", error="prompt is too long: 250000 tokens")
    assert summary_retry_delay(overflow, 0, s) == 2000  # contains "500": retried pointlessly (docs/pi-rules.md#retries)
    assert summary_retry_delay(msg("error", error="overloaded"), 2, s) == 8000
    assert summary_retry_delay(msg("error", error="overloaded"), 3, s) is None
    assert summary_retry_delay(msg("aborted", error="overloaded"), 0, s) is None
    assert summary_retry_delay(msg(total=5), 0, s) is None
    assert summary_retry_delay(msg("error", error="overloaded"), 0, RetrySettings(enabled=False)) is None


def test_retry_defaults_are_pis():
    d = load("classify_vectors.json")["retryDefaults"]
    assert RetrySettings() == RetrySettings(d["enabled"], d["maxRetries"], d["baseDelayMs"])


# --------------------------------------------------------------------------- should_compact vectors


@pytest.mark.parametrize("case", load("classify_vectors.json")["should_compact"],
                         ids=lambda c: f"{c['contextTokens']}/{c['contextWindow']}/{c['settings']}")
def test_should_compact_vectors(case):
    settings = compaction_settings(case["settings"])
    assert should_compact(case["contextTokens"], case["contextWindow"], settings) is case["expect"]
    if case["contextTokens"] != 0:  # zero usage is not a reading: the check estimates instead
        model = CurrentModel("prov", "m1", case["contextWindow"], 32000)
        decision = decide(msg(total=case["contextTokens"]), model=model, settings=settings)
        assert (decision == THRESHOLD) is case["expect"]
