"""Cut points and preparation: docs/pi-rules.md#cut-points-and-plans tables C1–C32 and P1–P7 (entries built directly)."""

from __future__ import annotations

import pytest

from pipeline.compaction.cut import find_cut_point, find_turn_start
from pipeline.compaction.plan import CompactionPlan, NothingToCompact, plan_compaction
from pipeline.model.compaction import Compaction
from pipeline.session import SessionFile, build_session_context, parse_entry

from .entryspec import entries, entry_id, raw_entries

CUT_TABLE = [
    ("C1", "U10 A10 U10 A10", 0, 15, (2, -1, False)),
    ("C2", "U10 A10 U10 A10", 0, 20, (2, -1, False)),
    ("C3", "U10 A10 U10 A10", 0, 21, (1, 0, True)),
    ("C4", "U10 A10 U10 A10", 0, 1000, (0, -1, False)),
    ("C5", "U5 A5 T100 A5", 0, 50, (3, 0, True)),
    ("C6", "U5 A5 T30 A5 T30 A5", 0, 40, (3, 0, True)),
    ("C7", "U5 A5 T200", 0, 100, (0, -1, False)),
    ("C8", "U5 A5 MC TL U50 A5", 0, 50, (2, 0, True)),
    ("C9", "U50 A5 MC U10 A50", 0, 50, (4, 3, True)),
    ("C10", "U5 A5 C2:0:3 U10 A10 U10 A10", 3, 15, (5, -1, False)),
    ("C11", "MC TL U10 A10", 0, 1000, (0, -1, False)),
    ("C12", "B30 A5 U5 A5", 0, 12, (1, 0, True)),
    ("C13", "U5 A5 CM40 U5 A5", 0, 12, (2, -1, False)),
    ("C14", "U5 A5 BS40 A5", 0, 8, (2, -1, False)),
    ("C15", "MC TL", 0, 10, (0, -1, False)),
    ("C16", "T10 T10", 0, 5, (0, -1, False)),
    ("C17", "U10 A10", 0, 0, (1, 0, True)),
    ("C18", "U5 A30 T5 A30", 0, 31, (3, 0, True)),
    ("C19", "U5 A5 U5 A5", 0, 10, (2, -1, False)),
    ("C20", "U5 MC A40", 0, 20, (1, 0, True)),
    ("C21", "U5 A5 CM10 LB U5 A20", 0, 25, (3, 2, True)),
    ("C22", "U3 A3 B3 A20", 0, 21, (2, -1, False)),
    ("C23", "U5 A5 CU40 A5", 0, 8, (2, -1, False)),
    ("C24", "U5 A0 A0 A0", 0, 1, (0, -1, False)),
    ("C25", "U5 A5 U0 A5", 0, 5, (3, 2, True)),
    ("C26", "U5 A5 CE SI LB U5 A5", 0, 10, (2, 0, True)),
    ("C27", "U5 A5 MC C3:0:0 U5 A5", 0, 1000, (0, -1, False)),
    ("C28", "U5 A5 C20:0:1 A5", 1, 20, (3, -1, False)),
    ("C29", "U5 A5 C20:0:1 A5", 1, 26, (1, -1, False)),
    ("C30", "U5 A5 BS0 A5", 0, 6, (1, 0, True)),
    ("C31", "U20 A5 T5 A5 T5 A5", 0, 10, (5, 0, True)),
    ("C32", "U5 A5 CM5 MC A20", 0, 20, (3, 2, True)),
]


@pytest.mark.parametrize("name,spec,start,keep,expected", CUT_TABLE, ids=[row[0] for row in CUT_TABLE])
def test_cut_point_table(name, spec, start, keep, expected):
    path = entries(spec)
    cut = find_cut_point(path, start, len(path), keep)
    assert (cut.first_kept_index, cut.turn_start_index, cut.is_split_turn) == expected


def test_turn_start_never_at_assistant_or_tool_result():
    path = entries("U5 A5 T5 A5 MC")
    assert find_turn_start(path, 4, 0) == 0
    assert find_turn_start(path, 4, 1) == -1


def _plan(spec: str, keep: int) -> CompactionPlan | NothingToCompact:
    return plan_compaction(entries(spec), Compaction(keep_recent_tokens=keep))


def _ids(*indices: int) -> list[str]:
    return [entry_id(i) for i in indices]


def test_p1_too_small():
    assert _plan("U5 A5", 20) == NothingToCompact("too_small")


def test_p2_keep_from_e4():
    plan = _plan("U10 A10 U10 A10 U10 A10", 20)
    assert (plan.first_kept_entry_id, plan.is_split_turn, plan.tokens_before) == (entry_id(4), False, 60)
    assert plan.summarize_ids == _ids(0, 1, 2, 3) and plan.previous_summary is None


def test_p3_already_compacted():
    assert _plan("U10 A10 C4:0:1", 20) == NothingToCompact("already_compacted")


def test_p4_update_of_previous_summary():
    plan = _plan("U10 A10 U10 A10 C4:0:2 U10 A10 U10 A10", 20)
    assert plan.summarize_ids == _ids(2, 3, 5, 6)  # the compaction entry itself is skipped
    assert plan.first_kept_entry_id == entry_id(7) and plan.tokens_before == 64
    assert plan.previous_summary == "c" * 16


def test_p5_keeps_from_before_the_old_compaction():
    plan = _plan("U10 A10 U10 A10 U10 A10 C4:0:2 U1 A1", 20)
    assert plan.first_kept_entry_id == entry_id(4) and plan.tokens_before == 46
    assert plan.summarize_ids == _ids(2, 3)


def test_p5_prime_context_after_storing(tmp_path):
    """P5′: the old compaction is rendered as a second summary inside the kept part, as pi does."""
    path = tmp_path / "p5.jsonl"
    session = SessionFile.create(path, cwd="/w")
    for raw in raw_entries("U10 A10 U10 A10 U10 A10 C4:0:2 U1 A1"):
        session.append(parse_entry(raw))
    plan = plan_compaction(session.path_to(), Compaction(keep_recent_tokens=20))
    session.append_compaction("new", plan.first_kept_entry_id, plan.tokens_before)
    roles = [m.role for m in build_session_context(SessionFile.open(path)).messages]
    assert roles == ["compactionSummary", "user", "assistant", "compactionSummary", "user", "assistant"]


def test_p6_split_turn_without_history():
    plan = _plan("U5 A10 T10 A10 T10 A10", 20)
    assert plan.first_kept_entry_id == entry_id(5) and plan.is_split_turn
    assert plan.summarize_ids == [] and plan.turn_prefix_ids == _ids(0, 1, 2, 3, 4)


def test_p7_prefix():
    plan = _plan("U5 A30 T5 A30", 31)
    assert plan.first_kept_entry_id == entry_id(3) and plan.turn_prefix_ids == _ids(0, 1, 2)


def test_c8_oddity_reports_the_previous_turn_as_prefix():
    """C8: the cut lands on MC; pi reports the complete previous turn as a split-turn prefix."""
    plan = _plan("U5 A5 MC TL U50 A5", 50)
    assert plan.first_kept_entry_id == entry_id(2) and plan.is_split_turn
    assert plan.summarize_ids == [] and plan.turn_prefix_ids == _ids(0, 1)


def test_empty_path():
    assert plan_compaction([], Compaction()) == NothingToCompact("empty")
