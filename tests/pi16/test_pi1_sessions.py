"""Session files with recorded system prompts, between our runtime and pi 1.6.0
(``tests/data/pi16/sessions/``, ``sessions.json``; ``gen_session_vectors.py`` regenerates them).

* ``ours-*.jsonl`` are session files our runtime wrote (``builtin:pi-1``); pi 1.6.0's
  ``SessionManager.open`` and ``buildSessionContext`` read them as ``sessions.json`` says, and
  so must our reader. The runtime writes the same shape today.
* ``pi-phase-one.jsonl`` is a session pi 1.6.0 wrote (its sentences masked): our reader sees
  what pi sees, and our runtime resumes it as pi resumed it (every ``resume`` scenario of
  ``agent.json``), after the masks are turned into our own words.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pi1_agent import AGENT, MASKS, ROOT, check_run, check_wire, run_scenario

from pipeline.session.system import is_system_message
from pipeline.runtime.tools import SCHEMAS
from pipeline.session import SessionFile, build_session_context

DATA = ROOT / "tests" / "data" / "pi16"
DOC = json.loads((DATA / "sessions.json").read_text(encoding="utf-8"))
FIX = DOC["fixture_root"]
OURS = sorted(DOC["ours"])
MODES = [("openai", False), ("openai", True), ("anthropic", True)]


def _shape(session: SessionFile) -> dict:
    return {"entryCount": len(session.entries), "ids": [e.id for e in session.entries],
            "types": [e.raw["type"] + (":" + e.raw["message"]["role"] if e.raw["type"] == "message" else "")
                      for e in session.entries]}


def _context(session: SessionFile, mask=lambda s: s) -> list[dict]:
    out = []
    for message in build_session_context(session).messages:
        raw = message.raw
        item: dict = {"role": raw["role"]}
        if is_system_message(message):
            item["sections"] = mask(raw.get("sections"))
            for key in ("toolsAdded", "toolsRemoved"):
                if key in raw:
                    item[key] = [t["name"] for t in raw[key]]
        out.append(item)
    return out


@pytest.mark.parametrize("name", OURS)
def test_pi_reads_our_files_as_we_do(name: str) -> None:
    session = SessionFile.open(DATA / "sessions" / f"ours-{name}.jsonl")
    assert session.problems == []
    pi = DOC["ours"][name]
    assert _shape(session) == pi["session_open"]
    assert _context(session) == pi["build_context"]
    assert any(item["role"] == "system" for item in pi["build_context"])


def _reduced_file(path: Path, root: str) -> list:
    """A session file's entries without ids, times and the fixture root: what the runtime decided to write."""
    out = []
    for line in path.read_text(encoding="utf-8").replace(root, FIX).splitlines()[1:]:
        entry = json.loads(line)
        for key in ("id", "parentId", "timestamp"):
            entry.pop(key, None)
        out.append(entry)
    return out


@pytest.mark.parametrize("name", OURS)
def test_our_runtime_still_writes_those_files(name: str, tmp_path) -> None:
    scenario = next(s for group in ("mid_run", "resume") for s in AGENT[group] if s["name"] == name)
    request, session = scenario["request"], None
    if "sessionFile" in request:
        session = ROOT / request["sessionFile"]
    elif name in {s["name"] for s in AGENT["resume"]}:
        session = run_scenario(AGENT["phase_one"]["request"], tmp_path, wire="openai", mid=False,
                               name="phase-one.jsonl").session_path
        request = {**AGENT["phase_one"]["request"], **request}
    mid = name.startswith("session_from_084")  # as the generator ran them
    run = run_scenario(request, tmp_path, wire="anthropic" if mid else "openai", mid=mid, session=session)
    assert _reduced_file(run.session_path, str(tmp_path)) == _reduced_file(DATA / "sessions" / f"ours-{name}.jsonl", FIX)


def test_we_read_pis_file_as_pi_does() -> None:
    session = SessionFile.open(DATA / "sessions" / "pi-phase-one.jsonl")
    assert session.problems == []
    pi = DOC["pi"]["phase_one"]
    assert _shape(session) == pi["session_open"]
    assert _context(session) == pi["build_context"]


def _pi_file_in_our_words(tmp: Path) -> Path:
    """pi's phase-one session with its masks turned into our words (and our tools' schemas),
    under the fixture root ``tmp``: the session our profile would have written there."""
    text = (DATA / "sessions" / "pi-phase-one.jsonl").read_text(encoding="utf-8")
    lines = []
    for line in text.splitlines():
        entry = json.loads(line)
        message = entry.get("message") or {}
        if message.get("role") == "system":
            message["sections"] = {k: MASKS.unmask(v) for k, v in message["sections"].items()}
            for tool in message.get("toolsAdded") or []:
                assert tool["parameters"] == f"<SCHEMA_{tool['name']}>"
                tool["parameters"] = SCHEMAS[tool["name"]]
        lines.append(json.dumps(entry).replace(FIX, str(tmp)))
    path = tmp / "pi-phase-one.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("wire", "mid"), MODES, ids=["replay-openai", "mid-openai", "mid-anthropic"])
@pytest.mark.parametrize("scenario", [s for s in AGENT["resume"] if "sessionFile" not in s["request"]],
                         ids=lambda s: s["name"])
def test_we_resume_pis_file_as_pi_does(scenario: dict, wire: str, mid: bool, tmp_path) -> None:
    session = _pi_file_in_our_words(tmp_path)
    request = {**AGENT["phase_one"]["request"], **scenario["request"]}
    run = run_scenario(request, tmp_path, wire=wire, mid=mid, session=session)
    check_run(run, scenario, mid)
    check_wire(run, wire, mid)
