"""Compacted sessions with a recorded system prompt, between our runtime and pi 1.6.0
(``tests/data/pi16/compacted.json``, ``sessions/ours-compacted.jsonl``,
``sessions/pi-compacted.jsonl``; ``gen_compacted_sessions.py`` regenerates them).

Both come from ``loop/pi1-threshold-compaction-then-section``: a session written by 0.84.0
gets its prompt recorded, compacts after the first turn (the compaction entry carries the
``systemMessage`` snapshot) and a section is patched on the second turn.

* pi 1.6.0's ``SessionManager.open`` / ``buildSessionContext`` read the file our runtime
  wrote as we read it (ids, entry types; context roles, system sections, tool names): the
  snapshot leads the context, the system entries before the compaction are gone;
* we read pi's file as pi does;
* our runtime resumes pi's compacted file (masks turned into our words): the replay starts
  from the snapshot, so the next prompt records only the removal of the one-run section
  and the request's prompt is the snapshot's.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from pi1_agent import MASKS, PROFILE, model, tools_for

from pipeline.llm.chat import ChatClient
from pipeline.prompt.discover import discover
from pipeline.runtime.conversation import Conversation
from pipeline.runtime.loop import Agent
from pipeline.runtime.edits import context_messages
from pipeline.session.system import is_system_message
from pipeline.runtime.tools import SCHEMAS
from pipeline.session import SessionFile
from pipeline.session.projection import convert_to_llm
from pipeline.model.run_plan import ContextTexts
from pipeline.testing.loopback import LoopbackServer
from pipeline.model.run_plan import RunPlan

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "pi16"
DOC = json.loads((DATA / "compacted.json").read_text(encoding="utf-8"))
SCENARIO = json.loads((DATA / "loop" / f"{DOC['scenario']}.json").read_text(encoding="utf-8"))
PI_CWD = SCENARIO["steps"][0]["request"]["cwd"]
PI_ROOT = PI_CWD.removesuffix("/proj")
TEXTS = ContextTexts.from_profile(PROFILE)


def _shape(session: SessionFile) -> dict:
    return {"entryCount": len(session.entries), "ids": [e.id for e in session.entries],
            "types": [e.raw["type"] + (":" + e.raw["message"]["role"] if e.raw["type"] == "message" else "")
                      for e in session.entries]}


def _context(session: SessionFile, mask=lambda s: s) -> list[dict]:
    out = []
    messages, _ = context_messages(session, PROFILE.runtime)
    for message in messages:
        raw = message.raw
        if not is_system_message(message):  # pi's build_context answers with LLM messages
            out.extend({"role": m.raw["role"]} for m in convert_to_llm((message,), TEXTS))
            continue
        item: dict = {"role": raw["role"]}
        item["sections"] = mask(raw.get("sections"))
        for key in ("toolsAdded", "toolsRemoved"):
            if key in raw:
                item[key] = [t["name"] for t in raw[key]]
        out.append(item)
    return out


def test_pi_reads_our_compacted_file_as_we_do() -> None:
    session = SessionFile.open(DATA / "sessions" / "ours-compacted.jsonl")
    assert session.problems == []
    pi = DOC["ours"]
    assert _shape(session) == pi["session_open"]
    assert _context(session) == pi["build_context"]
    compaction = next(e for e in session.entries if e.raw["type"] == "compaction")
    assert compaction.raw["systemMessage"]["sections"] == pi["build_context"][0]["sections"]  # the snapshot leads


def test_we_read_pis_compacted_file_as_pi_does() -> None:
    session = SessionFile.open(DATA / "sessions" / "pi-compacted.jsonl")
    assert session.problems == []
    pi = DOC["pi"]
    assert _shape(session) == pi["session_open"]
    assert _context(session) == pi["build_context"]
    assert [m["role"] for m in pi["build_context"]][:2] == ["system", "user"]  # snapshot, then the summary


def _in_our_words(tmp: Path) -> Path:
    """pi's compacted session with its masks in our words, our tools' schemas, under ``tmp``."""
    def ours(message: dict) -> None:
        if message.get("sections"):
            message["sections"] = {k: None if v is None else MASKS.unmask(v) for k, v in message["sections"].items()}
        for tool in message.get("toolsAdded") or []:
            tool["parameters"] = SCHEMAS[tool["name"]]

    lines = []
    for line in (DATA / "sessions" / "pi-compacted.jsonl").read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if (entry.get("message") or {}).get("role") == "system":
            ours(entry["message"])
        if isinstance(entry.get("systemMessage"), dict):
            ours(entry["systemMessage"])
        lines.append(json.dumps(entry).replace(PI_ROOT, str(tmp)))
    path = tmp / "pi-compacted.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_we_resume_pis_compacted_file(tmp_path) -> None:
    cwd = tmp_path / "proj"
    for name, text in SCENARIO["steps"][0]["request"]["writeFiles"].items():
        (cwd / name).parent.mkdir(parents=True, exist_ok=True)
        (cwd / name).write_text(text, encoding="utf-8")
    session = SessionFile.open(_in_our_words(tmp_path))
    before = len(session.entries)
    snapshot = next(e for e in session.entries if e.raw["type"] == "compaction").raw["systemMessage"]
    found = discover(str(cwd), str(tmp_path / "agent"))
    with LoopbackServer(["done"]) as server:
        conv = Conversation(RunPlan.of(PROFILE), session, model=model(False), cwd=str(cwd), tools=tools_for(["read", "bash", "edit", "write"], cwd),
                            skills=found.skills, context_files=found.context_files, clock=lambda: 1787220000000.0)
        requests = []
        original = conv.next_request
        conv.next_request = lambda wire=None: requests.append(original(wire)) or requests[-1]  # type: ignore[method-assign]
        client = ChatClient("openai", model=conv.model.target(), aborted_text=PROFILE.runtime.aborted.render(),
                            base_url=server.openai_base_url, env={"OPENAI_API_KEY": "loopback"}, clock=lambda: 1787220000000.0)
        Agent(conv, client, wire="openai").run("three", cancel=threading.Event())
    new = [e.raw for e in session.entries[before:]]
    assert [e["type"] + ":" + e["message"]["role"] for e in new] == ["message:system", "message:user", "message:assistant"]
    assert new[0]["message"]["sections"] == {"reminder": None}  # the snapshot already holds everything else
    assert "toolsAdded" not in new[0]["message"] and "toolsRemoved" not in new[0]["message"]
    [request] = requests
    assert request.system_prompt == "\n\n".join(snapshot["sections"].values())
    assert [t.name for t in request.tools] == [t["name"] for t in snapshot["toolsAdded"]]
    roles = [m["role"] for m in request.messages]
    assert roles[0] == "user" and "summary" in json.dumps(request.messages[0])
    assert roles[-1] == "user" and request.messages[-1]["content"][0]["text"] == "three"
