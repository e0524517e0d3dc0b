"""The transcript rules a runtime applies between turns, on pi 1.6.0's recorded agent runs
(``tests/data/pi16/agent.json``): every patch pi recorded is exactly the difference between the
replay before it and the replay after it (``turn_patch``'s rule), replaying the leading record
and the patches gives each request's sections and prompt, and ``system_view`` gives both
provider forms (the replay alone, or the unchanged leading prompt plus each framed patch,
in pi-1's words, masked). The runtime loop sending them is checked in ``test_pi1_agent_requests.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pi1_masks import Masks

from pipeline.prompt import section_patch, system_view, turn_patch
from pipeline.session.system import SystemState

AGENT = json.loads((Path(__file__).resolve().parent.parent / "data" / "pi16" / "agent.json").read_text(encoding="utf-8"))
MASKS = Masks()
TEXTS = MASKS.pipeline.profile.system_prompt.patch
JOIN = MASKS.pipeline.profile.system_prompt.join
PHASE_ONE = next(e["sections"] for e in AGENT["phase_one"]["entries"] if e.get("role") == "system")
SCENARIOS = [("mid_run", s) for s in AGENT["mid_run"]] + [("resume", s) for s in AGENT["resume"]]


def leading_of(group: str, scenario: dict) -> dict:
    if group == "mid_run":
        return scenario["requests"][0]["systemSections"]
    return {} if scenario["name"].startswith("session_from_084") else PHASE_ONE


@pytest.mark.parametrize(("group", "scenario"), SCENARIOS, ids=lambda s: s if isinstance(s, str) else s["name"])
def test_recorded_transcript_follows_the_rules(group: str, scenario: dict) -> None:
    leading = leading_of(group, scenario)
    for request in scenario["requests"]:
        if request["systemSections"] is None:  # a forced prompt: nothing recorded, one leading message
            assert request["midSystemMessages"] == 0
            continue
        mids = [m for m in request["messages"] if m["role"] == "system"]
        patches = [m["sections"] for m in mids]
        before = leading
        for m in mids:
            after = dict(SystemState(sections=before).patched([m["sections"]]).sections)
            assert section_patch(before, after) == m["sections"]  # what was sent is exactly what changed
            assert turn_patch(leading, patches[: mids.index(m)], after) == m["sections"]
            before = after
        assert before == request["systemSections"] and list(before) == request["systemSectionOrder"]
        prompt, later = system_view(leading, patches, mid_conversation=False, texts=TEXTS, join=JOIN)
        assert prompt == request["systemPrompt"] and later == ()
        assert MASKS.pipeline.patches.system_view(leading, patches, mid_conversation=False) == (prompt, later)
        prompt, later = system_view(leading, patches, mid_conversation=True, texts=TEXTS, join=JOIN)
        assert MASKS.pipeline.patches.system_view(leading, patches, mid_conversation=True) == (prompt, later)
        assert MASKS.mask(prompt) == MASKS.mask("\n\n".join(t for t in leading.values() if t))
        assert [MASKS.mask(t) for t in later] == [m["update"] for m in mids]


def test_scenarios_with_changes_are_covered() -> None:
    changed = [s for _, s in SCENARIOS if any(m["role"] == "system" for r in s["requests"] for m in r["messages"])]
    assert len(changed) >= 12
