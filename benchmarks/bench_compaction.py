"""How long planning a compaction takes on large sessions (run by hand; prints, asserts nothing).

    /tmp/venv/bin/python benchmarks/bench_compaction.py [--sizes 10000 100000] [--runs 5] [--oracle /tmp/oracle]

For each size, a session is generated with the oracle's ``synth_session`` into /tmp
(pi's own SessionManager, seed 4242; reused when present). Figures: loading the file
(``SessionFile.open``), the root→leaf path, ``plan_compaction`` with the default profile's
settings and with keep_recent_tokens 0 (the whole branch is walked), building the
summary requests of the plan (conversion + serialization), the offline summary of them, and
— when the oracle is available — pi's own ``prepare_compaction`` on the same file
(``timing`` op, entries preloaded) for comparison. Medians of ``--runs`` runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline import compile_profile  # noqa: E402
from pipeline.compaction.engine import planned_requests  # noqa: E402
from pipeline.compaction.plan import CompactionPlan, plan_compaction  # noqa: E402
from pipeline.compaction.offline import OfflineClient  # noqa: E402
from pipeline.session import SessionFile  # noqa: E402


def _median_ms(fn: Callable[[], object], runs: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), result


def _oracle(oracle: Path, request: dict) -> dict | None:
    try:
        proc = subprocess.run([str(oracle / "oracle")], input=json.dumps(request), capture_output=True, text=True,
                              cwd=oracle, timeout=600)
    except (OSError, subprocess.TimeoutExpired):
        return None
    reply = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return reply.get("result") if reply.get("ok") else None


def session_file(size: int, oracle: Path) -> Path | None:
    path = Path(f"/tmp/bench-compaction-{size}.jsonl")
    if not path.exists():
        print(f"generating {path} with the oracle's synth_session…", flush=True)
        if _oracle(oracle, {"op": "synth_session", "out": str(path), "entries": size, "seed": 4242}) is None:
            return None
    return path


def bench(size: int, runs: int, oracle: Path) -> None:
    path = session_file(size, oracle)
    if path is None:
        print(f"{size} entries: no oracle at {oracle}, cannot generate the session; skipped")
        return
    profile = compile_profile("default").profile
    print(f"\n{size} entries ({path.stat().st_size / 1e6:.0f} MB), median of {runs}:")
    load_ms, session = _median_ms(lambda: SessionFile.open(path), max(1, runs // 2))
    path_ms, branch = _median_ms(lambda: session.path_to(), runs)
    print(f"  load (SessionFile.open)            {load_ms:8.1f} ms")
    print(f"  root→leaf path ({len(branch)} entries)  {path_ms:8.1f} ms")
    plan_ms, plan = _median_ms(lambda: plan_compaction(branch, profile.compaction), runs)
    print(f"  plan, keep_recent_tokens 20000     {plan_ms:8.1f} ms")
    zero = profile.compaction.model_copy(update={"keep_recent_tokens": 0})
    all_ms, _ = _median_ms(lambda: plan_compaction(branch, zero), runs)
    print(f"  plan, keep_recent_tokens 0         {all_ms:8.1f} ms")
    if isinstance(plan, CompactionPlan):
        req_ms, requests = _median_ms(lambda: planned_requests(plan, profile, profile.summarizer), runs)
        chars = sum(len(r.user_text) for r in requests)
        print(f"  build requests ({len(plan.summarize)} msgs, {chars / 1e6:.1f} M chars) {req_ms:8.1f} ms")
        client = OfflineClient(profile.summary)
        off_ms, _ = _median_ms(lambda: [client.complete(r) for r in requests], runs)
        print(f"  offline summaries                  {off_ms:8.1f} ms")
    timing = _oracle(oracle, {"op": "timing", "n": runs, "warmup": 1, "request": {
        "op": "prepare_compaction", "sessionFile": str(path), "settings": {"keepRecentTokens": 20000}}})
    if timing:
        print(f"  pi prepare_compaction (oracle)     {timing['medianMs']:8.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--oracle", type=Path, default=Path("/tmp/oracle"))
    args = parser.parse_args()
    for size in args.sizes:
        bench(size, args.runs, args.oracle)


if __name__ == "__main__":
    main()
