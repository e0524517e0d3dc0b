#!/usr/bin/env python3
"""``js_json`` speed beside ``json.dumps``, on a realistic payload.

    /tmp/venv/bin/python benchmarks/bench_js.py [--copies 300] [--repeat 3]

The payload is the ``message`` of every message entry of
``tests/data/sessions/real/long-coding.jsonl``, repeated ``--copies`` times and then
re-parsed (so no object is shared, as in a real long session). pi's usage costs hold
numbers like ``9e-06`` (JavaScript writes ``0.000009``), so this is the case where
``js_json`` must swap numbers in. Rows (best of ``--repeat``):

* ``json.dumps`` — compact, ``ensure_ascii=False``: the floor, not JavaScript's output;
* ``js_json`` — the whole payload;
* ``js_json, no numbers to fix`` — the same payload with usage removed (plain ``json.dumps`` path);
* ``js_json per message`` — one call per message (the session store's pattern);
* ``js_json, 3,000 levels deep`` — a small value nested past the C encoder's recursion limit.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from pipeline.js import js_json

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "tests" / "data" / "sessions" / "real" / "long-coding.jsonl"


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def payload(copies: int) -> list:
    rows = [json.loads(line) for line in SOURCE.read_text(encoding="utf-8").splitlines()]
    messages = [row["message"] for row in rows if row.get("type") == "message"]
    return json.loads(json.dumps(messages * copies))


def without_usage(messages: list) -> list:
    return [{k: v for k, v in m.items() if k != "usage"} for m in messages]


def deep(levels: int) -> list:
    value: object = {"cost": 9e-06, "text": "x"}
    for _ in range(levels):
        value = [value]
    return value  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    messages = payload(args.copies)
    plain = without_usage(messages)
    nested = deep(3000)
    text = js_json(messages)
    print(f"payload: {len(messages)} messages, {len(text) / 1e6:.1f} M characters of JSON")
    rows = {
        "json.dumps": lambda: json.dumps(messages, ensure_ascii=False, separators=(",", ":")),
        "js_json": lambda: js_json(messages),
        "js_json, no numbers to fix": lambda: js_json(plain),
        "js_json per message": lambda: [js_json(m) for m in messages],
        "js_json, 3,000 levels deep (x1000)": lambda: [js_json(nested) for _ in range(1000)],
    }
    for name, fn in rows.items():
        print(f"{name:<38} {best(fn, args.repeat):7.3f} s")


if __name__ == "__main__":
    main()
