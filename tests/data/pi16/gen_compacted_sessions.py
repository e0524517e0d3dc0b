"""Generate the compacted-session checks between our runtime and pi 1.6.0
(``sessions/ours-compacted.jsonl``, ``sessions/pi-compacted.jsonl``, ``compacted.json``).

Needs a set-up pi 1.6.0 oracle (``$PI16_ORACLE``, see ``pi16_oracle.py``); tests do not.
Both sides run ``loop/pi1-threshold-compaction-then-section.json`` (a session written by
0.84.0 gets its prompt recorded, compacts after the first turn, so the compaction entry
carries the system snapshot, and a section is patched on the second):

* **ours, as pi reads it**: the session file our runtime wrote (``builtin:pi-1``, the
  loopback server, ``tests/runtime/agent_vectors.py``), the temporary directory replaced by
  ``/srv/ctxp-compacted``, and pi's ``session_open`` / ``build_context`` of it (entry ids and
  types; context roles, system sections and tool names);
* **pi's, as we read it**: the session file pi's ``AgentSession`` wrote, pi's sentences
  masked as in ``sessions/pi-phase-one.jsonl`` (prompt masks; each declared tool's
  description ``<DESC_name>`` and schema ``<SCHEMA_name>``), and pi's ``build_context`` of the
  unmasked file, reduced the same way.

Our runtime draws random entry ids, so a re-run writes ``ours-compacted.jsonl`` (and its
ids in ``compacted.json``) with other ids and the same shape; everything else is reproduced.

    python tests/data/pi16/gen_compacted_sessions.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path[:0] = [str(HERE), str(ROOT / "tests"), str(ROOT / "tests" / "pi16"), str(ROOT)]

from gen_agent_vectors import AgentMasks  # noqa: E402
from gen_session_vectors import ask, mask_entries  # noqa: E402
from pi16_oracle import PACKAGE_DIR, Oracle, write_json  # noqa: E402

NAME = "pi1-threshold-compaction-then-section"
SCENARIO = json.loads((HERE / "loop" / f"{NAME}.json").read_text(encoding="utf-8"))
ROOT_MARK = "/srv/ctxp-compacted"


def ours() -> str:
    from runtime.agent_vectors import replay_scenario
    from runtime.test_pi1_loop_vectors import masked_tools

    with tempfile.TemporaryDirectory() as tmp:
        replay_scenario(SCENARIO, Path(tmp), "openai", profile="builtin:pi-1", adapt_tools=masked_tools)
        return (Path(tmp) / "session.jsonl").read_text(encoding="utf-8").replace(tmp, ROOT_MARK)


def pi_entries(oracle: Oracle) -> list[dict]:
    [step] = SCENARIO["steps"]
    request = {k: v for k, v in step["request"].items() if k != "session"}
    request["writeFiles"] = {f"{request['cwd']}/{k}": v for k, v in request["writeFiles"].items()}
    request["jsonl"] = (ROOT / "tests" / "data" / "sessions" / "real" / SCENARIO["session"]["file"]).read_text(encoding="utf-8")
    result = oracle.one({"op": "agent_request", "packageDir": PACKAGE_DIR, **request})
    return header_of(request["jsonl"]), result["sessionEntries"]


def header_of(jsonl: str) -> dict:
    return json.loads(jsonl.splitlines()[0])


def mask_snapshot(entries: list[dict], masks: AgentMasks) -> list[dict]:
    """``mask_entries`` plus a compaction's ``systemMessage``."""
    out = mask_entries(entries, masks)
    for entry in out:
        if entry.get("type") == "compaction" and isinstance(entry.get("systemMessage"), dict):
            [masked] = mask_entries([{"message": entry["systemMessage"]}], masks)
            entry["systemMessage"] = masked["message"]
    return out


def main() -> int:
    oracle = Oracle()
    masks = AgentMasks(oracle)
    doc: dict[str, Any] = {"pi_version": "1.6.0", "generator": "tests/data/pi16/gen_compacted_sessions.py",
                           "scenario": NAME, "root": ROOT_MARK}
    (HERE / "sessions").mkdir(exist_ok=True)
    target = HERE / "sessions" / "ours-compacted.jsonl"
    target.write_text(ours(), encoding="utf-8")
    doc["ours"] = ask(oracle, target)
    header, entries = pi_entries(oracle)
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "pi-compacted.jsonl"
        raw.write_text("\n".join([json.dumps(header), *(json.dumps(e) for e in entries)]) + "\n", encoding="utf-8")
        answer = ask(oracle, raw)
    for item in answer["build_context"]:
        if item.get("sections"):
            item["sections"] = masks.mask(item["sections"])
    doc["pi"] = answer
    masked = [json.dumps(header), *(json.dumps(e) for e in mask_snapshot(entries, masks))]
    (HERE / "sessions" / "pi-compacted.jsonl").write_text("\n".join(masked) + "\n", encoding="utf-8")
    oracle.close()
    masks.check(doc)
    masks.check((HERE / "sessions" / "pi-compacted.jsonl").read_text(encoding="utf-8"))
    write_json(HERE / "compacted.json", doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
