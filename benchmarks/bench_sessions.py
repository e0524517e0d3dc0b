#!/usr/bin/env python3
"""Session load + projection speed and memory, beside a bare ``json.loads`` of the same file.

    /tmp/venv/bin/python benchmarks/bench_sessions.py [--sizes 1000,10000,100000] [--dir /tmp/...]

Sessions are generated once into ``--dir`` (default ``/tmp/pipeline-bench-sessions``):
with pi's oracle (op ``synth_session``, seed 4242 — pi's own ``SessionManager`` writes
them) when ``$PI_ORACLE`` or ``/tmp/oracle`` has it, otherwise with our entry models.
Every measurement runs in a fresh interpreter, so peak RSS (``ru_maxrss``) belongs to
that step alone; the baseline row is an interpreter that only imported the package.
Each step runs ``--repeat`` times (default 3); the best time is printed.

Rows:
* ``json.loads (discard)`` — parse every line, keep nothing (pure parse cost);
* ``json.loads (keep)`` — parse every line into a list (the floor for holding the file);
* ``SessionFile.open`` — our streaming load: typed entries, problems, tree index;
* ``open + build_context`` — plus the projection to LLM messages (the last leaf).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

STEPS = {
    "baseline (import only)": "import pipeline.session",
    "json.loads (discard)": """
for line in open(PATH, "rb"):
    json.loads(line)
""",
    "json.loads (keep)": """
gc.disable()
data = [json.loads(line) for line in open(PATH, "rb")]
""",
    "SessionFile.open": """
session = SessionFile.open(PATH)
""",
    "open + build_context": """
session = SessionFile.open(PATH)
context = build_context(session, TEXTS)
""",
}

CHILD = """
import gc, json, resource, sys, time
sys.path.insert(0, {root!r})
from pipeline.session import ContextTexts, SessionFile, build_context
PATH = {path!r}
TEXTS = ContextTexts(compaction_open="<", compaction_close=">", branch_open="<", branch_close=">",
                     bash_ran="${{command}}", bash_output="${{output}}", bash_no_output="-", bash_cancelled="c",
                     bash_exit_code="${{code}}", bash_truncated="${{path}}")
start = time.perf_counter()
{step}
seconds = time.perf_counter() - start
print(json.dumps({{"seconds": seconds, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def measure(path: Path, step: str, repeat: int) -> dict:
    """Best time and largest peak RSS over ``repeat`` fresh interpreters."""
    code = CHILD.format(root=str(ROOT), path=str(path), step=step)
    runs = []
    for _ in range(repeat):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return {"seconds": min(r["seconds"] for r in runs), "rss_mb": max(r["rss_mb"] for r in runs)}


def oracle_dir() -> Path | None:
    candidate = Path(os.environ.get("PI_ORACLE", "/tmp/oracle"))
    return candidate if (candidate / "oracle").exists() else None


def generate(path: Path, entries: int) -> str:
    oracle = oracle_dir()
    if oracle is not None:
        request = {"op": "synth_session", "out": str(path), "entries": entries, "seed": 4242}
        subprocess.run([str(oracle / "oracle")], input=json.dumps(request), text=True, cwd=oracle,
                       check=True, capture_output=True)
        return "pi (oracle synth_session)"
    write_own(path, entries)
    return "our entry models"


def write_own(path: Path, entries: int) -> None:
    """A synthetic session of user/assistant/tool-result turns, serialised by our models."""
    sys.path.insert(0, str(ROOT))
    from pipeline.js import js_json
    from pipeline.session import MessageEntry, SessionHeader, new_entry_id

    rng = random.Random(4242)
    header = SessionHeader.create(id="01960000-0000-7000-8000-0000000000bb", timestamp="2026-07-01T08:00:00.000Z",
                                  cwd="/home/dev/project")
    taken: set[str] = set()
    parent = None
    with open(path, "w", encoding="utf-8") as out:
        out.write(js_json(header.raw) + "\n")
        for i in range(entries):
            entry_id = new_entry_id(taken)
            taken.add(entry_id)
            entry = MessageEntry.create(id=entry_id, parent_id=parent, timestamp="2026-07-01T08:00:00.000Z",
                                        message=_message(i, rng))
            out.write(js_json(entry.raw) + "\n")
            parent = entry_id


def _message(i: int, rng: random.Random) -> dict:
    text = " ".join(rng.choice(["alpha", "beta", "gamma", "delta", "const x = 1;"]) for _ in range(rng.randint(20, 400)))
    role = ("user", "assistant", "toolResult")[i % 3]
    if role == "assistant":
        return {"role": "assistant", "content": [{"type": "text", "text": text},
                {"type": "toolCall", "id": f"t{i}", "name": "read", "arguments": {"path": "a.py"}}],
                "api": "anthropic-messages", "provider": "anthropic", "model": "m", "stopReason": "toolUse",
                "usage": {"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4, "totalTokens": 10}, "timestamp": i}
    if role == "toolResult":
        return {"role": "toolResult", "toolCallId": f"t{i - 1}", "toolName": "read",
                "content": [{"type": "text", "text": text}], "isError": False, "timestamp": i}
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": i}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--dir", default="/tmp/pipeline-bench-sessions")
    parser.add_argument("--repeat", type=int, default=3, help="runs per step; the best time is shown")
    args = parser.parse_args()
    directory = Path(args.dir)
    directory.mkdir(parents=True, exist_ok=True)
    for size in (int(s) for s in args.sizes.split(",")):
        path = directory / f"synth-{size}.jsonl"
        source = "existing file" if path.exists() else generate(path, size)
        print(f"\n{size:,} entries, {path.stat().st_size / 1e6:.1f} MB ({source}): {path}")
        print(f"  {'step':<26}{'seconds':>10}{'peak RSS MB':>14}")
        for name, step in STEPS.items():
            result = measure(path, step, args.repeat)
            print(f"  {name:<26}{result['seconds']:>10.3f}{result['rss_mb']:>14.1f}")


if __name__ == "__main__":
    main()
