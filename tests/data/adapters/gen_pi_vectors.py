"""Regenerate the pi 0.84.0 check of the adapters' session files (needs the pi oracle and Node).

For each adapter, runs its three-run scenario test (tests/adapters/test_<name>.py), keeps
the session file it wrote as ``<name>.jsonl`` (the header's cwd replaced by a fixed path),
and stores what pi 0.84.0's own ``SessionManager.open`` and ``buildSessionContext`` make of
it (the oracle's ``session_open`` and ``build_context`` ops) as ``<name>.pi.json``.

    python tests/data/adapters/gen_pi_vectors.py /path/to/pi-oracle/oracle
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
NAMES = ("pydantic_ai", "openai_agents", "langchain")
CWD = "/work/project"


#: pi's sentence in front of a compaction summary is kept only as this mark (read from the oracle's constants).
PI_SUMMARY_MASK = "[pi: compaction summary prefix]"


def _session_of(name: str, base: Path) -> Path:
    test = f"tests/adapters/test_{name}.py::test_three_runs_compact_where_our_loop_does"
    # not check=True: the test compares the file with the vector being regenerated
    subprocess.run([sys.executable, "-m", "pytest", "-q", test, f"--basetemp={base}"], cwd=ROOT)
    [path] = base.rglob("chat.jsonl")  # (the test's replay and our own loop write other names)
    return path


def _oracle(oracle: str, request: dict) -> dict:
    out = subprocess.run([oracle], input=json.dumps(request), capture_output=True, text=True, check=True).stdout
    reply = json.loads(out)
    assert reply["ok"], reply
    return reply["result"]


def main(oracle: str) -> None:
    for name in NAMES:
        with tempfile.TemporaryDirectory() as tmp:
            lines = _session_of(name, Path(tmp) / "run").read_text(encoding="utf-8").splitlines()
        header = json.loads(lines[0])
        header["cwd"] = CWD
        target = HERE / f"{name}.jsonl"
        target.write_text("\n".join([json.dumps(header, separators=(",", ":"))] + lines[1:]) + "\n", encoding="utf-8")
        opened = _oracle(oracle, {"op": "session_open", "sessionFile": str(target), "idsOnly": True})
        context = _oracle(oracle, {"op": "build_context", "sessionFile": str(target)})
        result = {"session_open": opened, "build_context": {"messages": context["messages"]}}
        prefix = _oracle(oracle, {"op": "constants"})["COMPACTION_SUMMARY_PREFIX"]
        text = json.dumps(result, indent=1).replace(prefix, PI_SUMMARY_MASK)
        (HERE / f"{name}.pi.json").write_text(text + "\n", encoding="utf-8")
        print(name, opened["entryCount"], [m["role"] for m in context["messages"]])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "oracle")
