"""Per-turn overhead of the conversation facade at 1k, 10k and 100k entries (run by hand; prints, asserts nothing).

    python benchmarks/bench_runtime.py [--sizes 1000 10000 100000] [--turns 200] [--dir /dev/shm]

For each size a session of that many entries (user prompts, assistant replies with
tool calls and usage, tool results; no compaction, so the whole history is the context)
is written in Python into ``--dir``, opened, and a :class:`~pipeline.runtime.conversation.Conversation`
made on it (that load is reported apart). Then ``--turns`` turns are timed, each: one
``next_request("openai")`` (system prompt, projected messages, tool definitions, the wire
body) and one ``record`` of a reply (every other reply calls a tool, whose result is then
recorded; after the others a new prompt starts the next run, outside the timing) (pi's assistant message appended to the file with its
fsync, the retry and compaction decisions). No HTTP: the reply is built in memory. Medians
and p95 in milliseconds, and the ratio to the smallest size (flat = about 1). Reported
apart: opening the session and building the conversation, the first request (which
converts the whole history to the wire format once), and materializing a request's body
list (``request.body``: the whole context, O(n) like the serialization every HTTP
request needs anyway; timed with its release, which would otherwise land in the next
turn).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline import compile_profile  # noqa: E402
from pipeline.runtime.conversation import Conversation
from pipeline.runtime.host import ModelInfo
from pipeline.runtime.tools import builtin_tools  # noqa: E402
from pipeline.session import SessionFile  # noqa: E402
from pipeline.model.run_plan import RunPlan

USAGE = {"input": 900, "output": 60, "cacheRead": 4000, "cacheWrite": 0, "totalTokens": 4960,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


def _reply(text: str, ts: int, calls: list | None = None) -> dict:
    content = [{"type": "text", "text": text}] + [
        {"type": "toolCall", "id": c, "name": "read", "arguments": {"path": "src/app.py"}} for c in calls or []]
    return {"role": "assistant", "content": content, "api": "openai-completions", "provider": "local",
            "model": "bench", "usage": USAGE, "stopReason": "toolUse" if calls else "stop", "timestamp": ts}


def write_session(path: Path, entries: int) -> None:
    lines = [json.dumps({"type": "session", "version": 3, "id": "01960000-0000-7000-8000-0000000000bb",
                         "timestamp": "2026-08-20T10:00:00.000Z", "cwd": str(path.parent)})]
    parent, n = None, 0

    def add(message: dict) -> None:
        nonlocal parent, n
        entry_id = f"{n:08x}"
        lines.append(json.dumps({"type": "message", "id": entry_id, "parentId": parent,
                                 "timestamp": "2026-08-20T10:00:00.000Z", "message": message}))
        parent, n = entry_id, n + 1

    while n < entries:
        ts = 1787220000000 + n
        add({"role": "user", "content": [{"type": "text", "text": f"question {n}: what does app.py do?"}],
             "timestamp": ts})
        add(_reply("Let me look.", ts, [f"call_{n}"]))
        add({"role": "toolResult", "toolCallId": f"call_{n - 1}", "toolName": "read",
             "content": [{"type": "text", "text": "def greet(name):\n    return 'hello ' + name\n" * 5}],
             "isError": False, "timestamp": ts})
        add(_reply(f"It greets people ({n}).", ts))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def bench(entries: int, turns: int, directory: Path) -> dict:
    path = directory / f"bench-runtime-{entries}.jsonl"
    write_session(path, entries)
    profile = compile_profile("default").profile
    start = time.perf_counter()
    session = SessionFile.open(path)
    conv = Conversation(RunPlan.of(profile), session, model=ModelInfo(id="bench", provider="local", context_window=10**9,
                                                          max_tokens=32000),
                        tools=builtin_tools(["read", "ls", "find", "grep"], directory, RunPlan.of(profile)), cwd=str(directory))
    load_ms = (time.perf_counter() - start) * 1000
    conv.prompt("one more question")
    start = time.perf_counter()
    conv.next_request("openai").body  # the first request converts the history once
    first_ms = (time.perf_counter() - start) * 1000
    times, bodies, count = [], [], 0
    for i in range(turns):
        start = time.perf_counter()
        request = conv.next_request("openai")
        conv.record(_reply(f"answer {i}", 1787230000000 + i, [f"t{i}"] if i % 2 == 0 else None))
        times.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        request.body
        count = request.message_count
        del request  # the body list is let go of here: its release is part of its cost, not of the next turn's
        bodies.append((time.perf_counter() - start) * 1000)
        if i % 2 == 0:
            call = conv.memory.agent[-1].tool_calls[0]
            conv.record_tool_result(call, [{"type": "text", "text": "ok"}])
        else:
            conv.prompt(f"next question {i}")
    path.unlink()
    times.sort()
    return {"entries": len(session.entries), "load_ms": load_ms, "first_ms": first_ms,
            "median_ms": statistics.median(times), "p95_ms": times[int(len(times) * 0.95) - 1],
            "body_ms": statistics.median(bodies), "messages": count}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--dir", default="/dev/shm" if Path("/dev/shm").is_dir() else tempfile.gettempdir())
    args = parser.parse_args()
    rows = [bench(n, args.turns, Path(args.dir)) for n in args.sizes]
    base = rows[0]["median_ms"]
    print(f"{'entries':>8} {'context msgs':>12} {'load ms':>8} {'1st req ms':>10} {'turn median ms':>15}"
          f" {'p95 ms':>7} {'ratio':>6} {'body list ms':>13}")
    for row in rows:
        print(f"{row['entries']:>8} {row['messages']:>12} {row['load_ms']:>8.0f} {row['first_ms']:>10.0f}"
              f" {row['median_ms']:>15.3f} {row['p95_ms']:>7.3f} {row['median_ms'] / base:>6.2f} {row['body_ms']:>13.3f}")


if __name__ == "__main__":
    main()
