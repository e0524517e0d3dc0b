"""The adapters' session files as pi 0.84.0 reads them (committed vectors, no Node needed).

``tests/data/adapters/<name>.jsonl`` is the session each adapter's three-run scenario
wrote; ``<name>.pi.json`` is what pi 0.84.0's ``SessionManager.open`` and
``buildSessionContext`` made of it (``gen_pi_vectors.py`` beside them regenerates both).
Our reader must see the same entries, branch and context; each scenario test checks that
the file it writes today has the same shape as its vector.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.facade import compile_profile
from pipeline.session import SessionFile

DATA = Path(__file__).resolve().parents[1] / "data" / "adapters"
NAMES = ("pydantic_ai", "openai_agents", "langchain")


def shape(path: Path) -> list[tuple]:
    """Entry types, message roles and the parent chain of a session file (ids left out)."""
    session = SessionFile.open(path)
    ids = {e.id: i for i, e in enumerate(session.entries)}
    return [(e.raw["type"], getattr(getattr(e, "message", None), "role", None), ids.get(e.raw.get("parentId")))
            for e in session.entries]


@pytest.mark.parametrize("name", NAMES)
def test_our_reader_sees_what_pi_sees(name):
    pi = json.loads((DATA / f"{name}.pi.json").read_text(encoding="utf-8"))
    session = SessionFile.open(DATA / f"{name}.jsonl")
    assert session.problems == []
    opened = pi["session_open"]
    assert len(session.entries) == opened["entryCount"] == 11
    assert [e.id for e in session.path_to()] == opened["branch"]
    assert session.leaf_id == opened["leafId"]
    ours = compile_profile("default").project(session).messages
    theirs = pi["build_context"]["messages"]
    assert [m.raw["role"] for m in ours] == [m["role"] for m in theirs] == ["user", "user", "assistant", "user",
                                                                            "assistant"]
    # the summary message is worded by each side's own texts around the same summary; the rest is equal
    summary = session.path_to()[8].raw["summary"]
    assert summary in ours[0].raw["content"][0]["text"] and summary in theirs[0]["content"][0]["text"]
    assert [m.raw for m in ours[1:]] == theirs[1:]


@pytest.mark.parametrize("name", NAMES)
def test_the_vectors_have_the_scenarios_shape(name):
    types = [t for t, _, _ in shape(DATA / f"{name}.jsonl")]
    assert types == ["model_change", "thinking_level_change"] + ["message"] * 6 + ["compaction"] + ["message"] * 2
    assert [p for _, _, p in shape(DATA / f"{name}.jsonl")] == [None, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
