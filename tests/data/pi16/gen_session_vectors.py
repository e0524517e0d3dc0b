"""Generate the session-file checks between our runtime and pi 1.6.0 (``sessions/``, ``sessions.json``).

Needs a set-up pi 1.6.0 oracle (``$PI16_ORACLE``, see ``pi16_oracle.py``); tests do not.

* **Files we write, as pi opens them.** Our runtime (``builtin:pi-1``, the loopback server,
  ``tests/pi16/pi1_agent.py``) runs three of ``agent.json``'s scenarios; each session file it
  wrote is kept as ``sessions/ours-<name>.jsonl`` (the temporary fixture root replaced by
  the recorded one) and ``sessions.json`` ``ours`` holds what pi 1.6.0's ``SessionManager.open``
  (``session_open``) and ``buildSessionContext`` (``build_context``) made of it.
* **A file pi writes, as we read it.** pi's own ``AgentSession`` runs ``agent.json``'s
  ``phase_one`` (on a fresh fixture tree); its entries are kept
  as ``sessions/pi-phase-one.jsonl`` with pi's sentences masked (the prompt masks and the
  tool snippet/guideline tokens of ``agent.json``; each declared tool's description becomes
  ``<DESC_name>`` and its schema ``<SCHEMA_name>``), and ``sessions.json`` ``pi`` holds pi's
  ``session_open`` and ``build_context`` of the unmasked file, reduced the same way.

    python tests/data/pi16/gen_session_vectors.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path[:0] = [str(HERE), str(ROOT / "tests" / "pi16"), str(ROOT)]

from gen_agent_vectors import CWD, FIX, NOW, PHASE_ONE, AgentMasks, fresh, header  # noqa: E402
from pi16_oracle import PACKAGE_DIR, Oracle, write_json  # noqa: E402
from pi1_agent import AGENT, run_scenario  # noqa: E402

OURS = HERE / "sessions"


def _scenario(group: str, name: str) -> dict:
    return next(s for s in AGENT[group] if s["name"] == name)


def our_files(tmp: Path) -> dict[str, Path]:
    """Session files our runtime writes for three scenarios (a fresh one with a patch and a
    removal, a resumed one with tool changes, a 0.84.0 one resumed)."""
    out = {}
    fresh = _scenario("mid_run", "section_added_then_removed")
    out["section_added_then_removed"] = run_scenario(fresh["request"], tmp / "a", wire="openai", mid=False).session_path
    phase = AGENT["phase_one"]["request"]
    first = run_scenario(phase, tmp / "b", wire="openai", mid=False, name="phase-one.jsonl")
    removed = {**phase, **_scenario("resume", "tool_removed")["request"]}
    out["tool_removed"] = run_scenario(removed, tmp / "b", wire="openai", mid=False, session=first.session_path).session_path
    old = _scenario("resume", "session_from_084_with_section")
    out["session_from_084_with_section"] = run_scenario(
        old["request"], tmp / "c", wire="anthropic", mid=True, session=ROOT / old["request"]["sessionFile"]).session_path
    return out


def reduce_open(result: dict) -> dict:
    entries = result["entries"]
    return {"entryCount": len(entries), "ids": [e["id"] for e in entries],
            "types": [e["type"] + (":" + e["message"]["role"] if e["type"] == "message" else "") for e in entries]}


def reduce_context(result: dict) -> list[dict]:
    out = []
    for m in result["messages"]:
        item: dict[str, Any] = {"role": m["role"]}
        if m["role"] == "system":
            item["sections"] = m.get("sections")
            for key in ("toolsAdded", "toolsRemoved"):
                if key in m:
                    item[key] = [t["name"] for t in m[key]]
        out.append(item)
    return out


def ask(oracle: Oracle, path: Path) -> dict:
    opened, context = oracle.results([{"op": "session_open", "sessionFile": str(path)},
                                      {"op": "build_context", "sessionFile": str(path)}])
    return {"session_open": reduce_open(opened), "build_context": reduce_context(context)}


def mask_entries(entries: list[dict], masks: AgentMasks) -> list[dict]:
    out = []
    for entry in entries:
        entry = json.loads(json.dumps(entry))
        message = entry.get("message") or {}
        if message.get("role") == "system":
            message["sections"] = masks.mask(message.get("sections"))
            for tool in message.get("toolsAdded") or []:
                tool["description"] = f"<DESC_{tool['name']}>"
                tool["parameters"] = f"<SCHEMA_{tool['name']}>"
        out.append(entry)
    return out


def main() -> int:
    oracle = Oracle()
    doc: dict[str, Any] = {"pi_version": "1.6.0", "generator": "tests/data/pi16/gen_session_vectors.py",
                           "fixture_root": FIX, "ours": {}, "pi": {}}
    OURS.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in our_files(Path(tmp)).items():
            root = str(path.parent)
            text = path.read_text(encoding="utf-8").replace(root, FIX)
            target = OURS / f"ours-{name}.jsonl"
            target.write_text(text, encoding="utf-8")
            doc["ours"][name] = ask(oracle, target)
    masks = AgentMasks(oracle)
    [first] = fresh(oracle, [{**PHASE_ONE, "now": NOW, "packageDir": PACKAGE_DIR}])
    lines = [header(), *(json.dumps(e) for e in first["sessionEntries"])]
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "pi-phase-one.jsonl"
        raw.write_text("\n".join(lines) + "\n", encoding="utf-8")
        answer = ask(oracle, raw)
    for item in answer["build_context"]:
        if item.get("sections"):
            item["sections"] = masks.mask(item["sections"])
    doc["pi"]["phase_one"] = answer
    masked = [header(), *(json.dumps(e) for e in mask_entries(first["sessionEntries"], masks))]
    (OURS / "pi-phase-one.jsonl").write_text("\n".join(masked) + "\n", encoding="utf-8")
    oracle.close()
    masks.check(doc)
    masks.check((OURS / "pi-phase-one.jsonl").read_text(encoding="utf-8"))
    assert CWD.startswith(FIX)
    write_json(HERE / "sessions.json", doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
