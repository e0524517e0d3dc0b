"""Branch summaries (docs/pi-rules.md#branch-summaries): collection, budget, navigation, the appended entry — against pi."""

from __future__ import annotations

from functools import lru_cache

import pytest

from pipeline.compaction.branch import branch_entries, navigation_leaf, prepare_branch
from pipeline.compaction.engine import branch_session
from pipeline.model.compaction import Compaction
from pipeline.session import SessionFile

from .conftest import ROOT, ScriptedClient, completion, masked_profile, vectors
from .entryspec import entries


@lru_cache(maxsize=None)
def _session(rel: str) -> SessionFile:
    return SessionFile.open(ROOT / rel)


def _id(case: dict) -> str:
    return f"{case['session'].rsplit('/', 1)[-1]}:{case['oldLeafId']}->{case['targetId']}"


@pytest.mark.parametrize("case", vectors("branch")["entries"], ids=_id)
def test_collected_entries_equal_pi(case):
    collected = branch_entries(_session(case["session"]).tree, case["oldLeafId"], case["targetId"])
    assert [e.id for e in collected.entries] == case["entryIds"]
    assert collected.common_ancestor_id == case["commonAncestorId"]


@pytest.mark.parametrize("case", vectors("branch")["prepare"], ids=lambda c: _id(c) + f"/{c['budget']}")
def test_prepared_branch_equals_pi(case):
    collected = branch_entries(_session(case["session"]).tree, case["oldLeafId"], case["targetId"])
    prepared = prepare_branch(collected.entries, case["budget"], Compaction())
    assert [m.role for m in prepared.messages] == case["roles"]
    assert [m.raw.get("timestamp") for m in prepared.messages] == case["timestamps"]
    assert prepared.files.to_json() == case["fileOps"]
    assert prepared.total_tokens == case["totalTokens"]


def test_summaries_are_taken_past_the_budget_below_the_share_limit():
    """A compaction/branch summary that overflows the budget is still taken while the total is < 90 %."""
    path = entries("U5 BS20 A5")
    assert [m.role for m in prepare_branch(path, 12, Compaction()).messages] == ["branchSummary", "assistant"]
    assert [m.role for m in prepare_branch(entries("U5 U20 A5"), 12, Compaction()).messages] == ["assistant"]


def test_navigation_leaf():
    path = entries("U5 A5 CM5 MC")
    assert [navigation_leaf(e) for e in path] == [None, path[1].id, path[1].id, path[3].id]


@pytest.mark.parametrize("case", vectors("requests")["navigate"], ids=lambda c: c["targetId"])
def test_navigation_equals_pi(case, copy_session):
    """pi's ``/tree`` end to end: the branch_summary entry appended (shape, parent, text, details, usage), the leaf."""
    session = SessionFile.open(copy_session(case["session"]))
    usage = {"input": 100, "output": 20, "cacheRead": 3, "cacheWrite": 4, "totalTokens": 127}
    client = ScriptedClient([completion("SUM-n", usage)])
    moved = branch_session(session, masked_profile(), client, case["targetId"],
                           custom_instructions=case["customInstructions"])
    assert len(client.requests) == len(case["calls"])
    for request, call in zip(client.requests, case["calls"]):
        assert (request.system_prompt, request.user_text, request.max_tokens) == (
            call["systemPrompt"], call["userText"], call["maxTokens"])
    if not case["newEntries"]:
        assert moved.entry is None and moved.leaf_id == case["leafId"]
        return
    ours, pi = dict(moved.entry.raw), dict(case["newEntries"][0])
    assert list(ours) == list(pi)
    for key in ("id", "timestamp"):
        ours.pop(key), pi.pop(key)
    assert ours == pi
    assert len(moved.context.messages) == case["contextAfterCount"]
    reopened = SessionFile.open(session.path)
    assert reopened.leaf_id == moved.entry.id and not reopened.problems
