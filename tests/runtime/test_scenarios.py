"""pi's own agent runs (oracle ``agent_request``) replayed through the runtime policy.

Each scenario is a real pi 0.84.0 run on a copy of a real session with scripted replies
(``tests/data/runtime/scenarios.json``). :class:`~tests.runtime.replay.Replay` walks the
entries pi appended and derives, from :mod:`pipeline.runtime` alone, the compaction and
auto-retry events pi must have emitted; they must be pi's, in order.
"""

from __future__ import annotations

import pytest

from .replay import Replay, load

SCENARIOS = load("scenarios.json")


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["name"] for s in SCENARIOS])
def test_replay_gives_pis_events(scenario):
    replay = Replay(scenario)
    assert replay.run() == scenario["events"]


def test_some_decisions_find_nothing_to_compact():
    """pi decides to compact, then finds nothing to summarise (checked with our planner)."""
    empty = {s["name"]: Replay(s) for s in SCENARIOS}
    for replay in empty.values():
        replay.run()
    assert {name for name, r in empty.items() if r.empty_compactions} >= {"window-0", "older-than-compaction"}


def test_scenarios_cover_every_decision():
    events = [e for s in SCENARIOS for e in s["events"]]
    starts = {(e["reason"]) for e in events if e["type"] == "compaction_start"}
    ends = {(e["reason"], e["willRetry"], e["failed"]) for e in events if e["type"] == "compaction_end"}
    retries = {(e["type"], e.get("success")) for e in events if e["type"].startswith("auto_retry")}
    assert starts == {"threshold", "overflow"}
    assert ends == {("threshold", False, False), ("overflow", True, False), ("overflow", False, False),
                    ("overflow", False, True)}
    assert retries == {("auto_retry_start", None), ("auto_retry_end", True), ("auto_retry_end", False)}
    assert any(not s["events"] for s in SCENARIOS)
