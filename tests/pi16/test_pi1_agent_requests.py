"""Differential check: our runtime with ``builtin:pi-1`` against pi 1.6.0's own ``AgentSession``
on the runs where the system-prompt sections change (``tests/data/pi16/agent.json``).

Every scenario runs through our :class:`~pipeline.runtime.loop.Agent` and the loopback server
(:mod:`pi1_agent`), for a model without mid-conversation system messages (OpenAI wire) and
for one that reads them (OpenAI and Anthropic wires). Per captured request, in pi's masked
space:

* the replayed sections (``systemSections``, order included) and tool names;
* without mid-conversation system messages: the one system prompt is pi's replay
  (``systemPrompt``) and the messages are pi's without its system messages;
* with them: the messages are pi's transcript, later system messages in place with their
  sections, order, tool changes and framed update (``update``, in our words), their number
  is ``midSystemMessages``, and the leading system prompt is the same on every request;
* the entries appended are pi's (``newEntries``: the recorded system messages included).

The ``resume`` scenarios continue a session our runtime wrote for ``phase_one`` (whose
entries must be pi's too), and a session written by pi 0.84.0.
"""

from __future__ import annotations

import pytest
from pi1_agent import AGENT, ROOT, Run, check_run, check_wire, reduce_entry, run_scenario

MID_RUN = AGENT["mid_run"]
RESUME = AGENT["resume"]
PHASE_ONE = AGENT["phase_one"]
MODES = [("openai", False), ("openai", True), ("anthropic", True)]
MODE_IDS = ["replay-openai", "mid-openai", "mid-anthropic"]


@pytest.mark.parametrize(("wire", "mid"), MODES, ids=MODE_IDS)
@pytest.mark.parametrize("scenario", MID_RUN, ids=[s["name"] for s in MID_RUN])
def test_mid_run(scenario: dict, wire: str, mid: bool, tmp_path) -> None:
    run = run_scenario(scenario["request"], tmp_path, wire=wire, mid=mid)
    check_run(run, scenario, mid)
    check_wire(run, wire, mid)


def _phase_one(tmp) -> Run:
    return run_scenario(PHASE_ONE["request"], tmp, wire="openai", mid=False, name="phase-one.jsonl")


def test_phase_one_entries(tmp_path) -> None:
    run = _phase_one(tmp_path)
    assert [reduce_entry(run, e) for e in run.entries] == PHASE_ONE["entries"]


@pytest.mark.parametrize(("wire", "mid"), MODES, ids=MODE_IDS)
@pytest.mark.parametrize("scenario", RESUME, ids=[s["name"] for s in RESUME])
def test_resume(scenario: dict, wire: str, mid: bool, tmp_path) -> None:
    """pi resumed the session its first phase wrote, in the same project after a change;
    ours resumes the session our first phase wrote (or the 0.84.0 one)."""
    request = scenario["request"]
    if "sessionFile" in request:
        session = ROOT / request["sessionFile"]
    else:
        session = _phase_one(tmp_path).session_path
        request = {**PHASE_ONE["request"], **request}
    run = run_scenario(request, tmp_path, wire=wire, mid=mid, session=session)
    check_run(run, scenario, mid)
    check_wire(run, wire, mid)
