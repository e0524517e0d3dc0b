"""How fast system prompts render, and how long ``pipeline render`` takes to start.

    python benchmarks/bench_render.py [--runs 9] [--loops 2000]

Prints, for every built-in profile (``configs/*.yaml``, ``configs/examples/*.yaml``) and every
scenario in ``tests/scenarios/``: the compile time of the profile and the mean time of one
render (``render_system_prompt``, pipeline compiled once, context built once). Then the
cold start of ``pipeline render`` (a new process printing the default prompt) next to
``python -c pass``, as medians of ``--runs`` runs. Figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline import compile_profile  # noqa: E402
from pipeline.prompt import render_system_prompt  # noqa: E402
from pipeline.scenario import load_scenario, scenario_pipeline  # noqa: E402
from pipeline.testing import expand  # noqa: E402

PROFILES = [ROOT / "configs" / "*.yaml", ROOT / "configs" / "examples" / "*.yaml"]
SCENARIOS = ROOT / "tests" / "scenarios" / "*.yaml"


def per_call(fn, loops: int) -> float:
    """Mean seconds per call over ``loops`` calls (best of three batches)."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        best = min(best, (time.perf_counter() - start) / loops)
    return best


def bench_renders(loops: int) -> None:
    print(f"{'profile':<22} {'scenario':<22} {'compile ms':>10} {'render µs':>10} {'chars':>7}")
    for profile in expand(PROFILES):
        compile_ms = per_call(lambda: compile_profile(profile), 5) * 1e3
        for path in expand(SCENARIOS):
            scenario = load_scenario(path)
            pipeline = scenario_pipeline(profile, scenario, str(path))
            context = scenario.to_context(pipeline.profile)
            prompt = render_system_prompt(pipeline.profile, context)
            micros = per_call(lambda: render_system_prompt(pipeline.profile, context), loops) * 1e6
            print(f"{profile.stem:<22} {path.stem:<22} {compile_ms:>10.2f} {micros:>10.1f} {len(prompt):>7}")


def median_run(argv: list[str], runs: int, cwd: Path) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_cold_start(runs: int) -> None:
    python = median_run([sys.executable, "-c", "pass"], runs, ROOT)
    render = median_run([sys.executable, "-m", "pipeline", "render"], runs, ROOT)
    html = median_run([sys.executable, "-m", "pipeline", "render", "--format", "html"], runs, ROOT)
    print(f"\ncold start (median of {runs} runs)")
    print(f"  python -c pass                 {python * 1e3:8.1f} ms")
    print(f"  pipeline render                {render * 1e3:8.1f} ms   (+{(render - python) * 1e3:.1f} ms over python)")
    print(f"  pipeline render --format html  {html * 1e3:8.1f} ms   (+{(html - python) * 1e3:.1f} ms over python)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9, help="process starts per cold-start figure")
    parser.add_argument("--loops", type=int, default=2000, help="renders per timing batch")
    args = parser.parse_args()
    bench_renders(args.loops)
    bench_cold_start(args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
