"""Plans equal pi's ``prepareCompaction`` on the real sessions and on sessions pi generated.

``plans.json`` holds the oracle's preparation for 11 sessions (the four real agent
sessions and seven written by pi's SessionManager from seeded random steps) at three
leaves each and six keep-recent settings.
"""

from __future__ import annotations

from functools import lru_cache

import pytest

from pipeline.compaction.plan import CompactionPlan, plan_compaction
from pipeline.model.compaction import Compaction
from pipeline.session import SessionFile

from .conftest import ROOT, vectors


@lru_cache(maxsize=None)
def _session(rel: str) -> SessionFile:
    return SessionFile.open(ROOT / rel)


def _case_id(case: dict) -> str:
    return f"{case['session'].rsplit('/', 1)[-1]}@{case['leaf'] or 'last'}/keep{case['keep']}"


def _view(plan: CompactionPlan) -> dict:
    """Our plan in the oracle's terms."""
    timestamps = lambda ms: [m.message.raw.get("timestamp") for m in ms]  # noqa: E731
    return {
        "firstKeptEntryId": plan.first_kept_entry_id,
        "firstKeptEntryIndex": plan.first_kept_index,
        "isSplitTurn": plan.is_split_turn,
        "tokensBefore": plan.tokens_before,
        "messagesToSummarizeCount": len(plan.summarize),
        "messagesToSummarizeRoles": [m.message.role for m in plan.summarize],
        "messagesToSummarizeTimestamps": timestamps(plan.summarize),
        "turnPrefixMessagesCount": len(plan.turn_prefix),
        "turnPrefixMessagesRoles": [m.message.role for m in plan.turn_prefix],
        "turnPrefixMessagesTimestamps": timestamps(plan.turn_prefix),
        "fileOps": plan.files.to_json(),
        "previousSummary": plan.previous_summary,
    }


@pytest.mark.parametrize("case", vectors("plans"), ids=_case_id)
def test_plan_equals_pi(case):
    session = _session(case["session"])
    path = session.path_to(case["leaf"] or session.leaf_id)
    plan = plan_compaction(path, Compaction(keep_recent_tokens=case["keep"], reserve_tokens=16384))
    if case["expected"] is None:
        assert not isinstance(plan, CompactionPlan), plan
    else:
        assert isinstance(plan, CompactionPlan)
        assert _view(plan) == case["expected"]


def test_vectors_cover_the_interesting_shapes():
    """The generated sessions exercise what the real ones lack (guards against a weak regeneration)."""
    plans = [c["expected"] for c in vectors("plans") if c["expected"]]
    assert any(p["isSplitTurn"] for p in plans) and any(not p["isSplitTurn"] for p in plans)
    assert any(p["previousSummary"] for p in plans)
    assert any(c["expected"] is None for c in vectors("plans"))
    assert any("custom" in p["messagesToSummarizeRoles"] for p in plans)
    assert any("branchSummary" in p["messagesToSummarizeRoles"] for p in plans)
    assert any("bashExecution" in p["messagesToSummarizeRoles"] for p in plans)
