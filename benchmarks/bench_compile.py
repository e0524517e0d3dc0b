"""Compile-time figures for the profile language (run by hand; prints, asserts nothing).

    /tmp/venv/bin/python benchmarks/bench_compile.py [--cold-runs 5] [--warm-runs 50] [--generated 500]

* cold: `compile_profile(path)` in a fresh interpreter, per profile in configs/
  (median wall time of the whole process; the bare interpreter start is shown too);
* warm: the same call repeated in one process (median per compile), with the
  per-process parse cache of unchanged files, and with that cache cleared;
* validate: `pipeline validate DIR` over N generated profiles (overlays of the
  default with varied thresholds and sections, and standalone copies of minimal).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _process_seconds(code: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def cold(profiles: list[Path], runs: int) -> None:
    base = _process_seconds("pass", runs)
    imports = _process_seconds("import pipeline.compiler", runs)
    print(f"cold (median of {runs} fresh processes; interpreter alone {base * 1000:.0f} ms, "
          f"+ import pipeline.compiler {imports * 1000:.0f} ms):")
    for path in profiles:
        code = f"from pipeline import compile_profile; compile_profile({str(path)!r})"
        print(f"  {path.relative_to(ROOT)}: {_process_seconds(code, runs) * 1000:.0f} ms")


def warm(profiles: list[Path], runs: int) -> None:
    from pipeline import compile_profile
    from pipeline.source.chain import _load_unchanged

    print(f"warm (median of {runs} compiles in one process, after one untimed compile):")
    for path in profiles:
        compile_profile(path)
        cached = _median_ms(lambda: compile_profile(path), runs)
        fresh = _median_ms(lambda: (_load_unchanged.cache_clear(), compile_profile(path)), runs)
        print(f"  {path.relative_to(ROOT)}: {cached:.2f} ms (files parsed before), {fresh:.2f} ms (parse cache cleared)")


def _median_ms(call, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def _generated(i: int) -> str:
    if i % 2:
        text = (ROOT / "configs" / "minimal.yaml").read_text(encoding="utf-8")
        return text.replace("name: minimal", f"name: minimal-{i}").replace("Tools:", f"Tools ({i}):")
    return (
        "extends: builtin:default\n"
        f"name: generated-{i}\n"
        "system_prompt:\n  sections:\n"
        f"    - {{id: extra_{i}, before: cwd, text: 'Extra rule {i} for ${{cwd}}.'}}\n"
        + ("    - {id: other_tools, remove: true}\n" if i % 3 == 0 else "")
        + f"compaction:\n  reserve_tokens: {16000 + i}\n  keep_recent_tokens: {20000 + i}\n"
    )


def validate_many(count: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(count):
            Path(tmp, f"p{i:04d}.yaml").write_text(_generated(i), encoding="utf-8")
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "pipeline", "validate", tmp], capture_output=True, text=True)
        took = time.perf_counter() - start
    status = "all valid" if proc.returncode == 0 else f"exit {proc.returncode}: {proc.stdout[:200]}"
    print(f"validate {count} generated profiles (one process): {took:.2f} s, "
          f"{took / count * 1000:.1f} ms per profile ({status})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cold-runs", type=int, default=5)
    parser.add_argument("--warm-runs", type=int, default=50)
    parser.add_argument("--generated", type=int, default=500)
    args = parser.parse_args()
    profiles = sorted((ROOT / "configs").rglob("*.yaml"))
    cold(profiles, args.cold_runs)
    warm(profiles, args.warm_runs)
    validate_many(args.generated)


if __name__ == "__main__":
    main()
