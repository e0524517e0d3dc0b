"""How compiling, explaining and rendering scale with the number of sections (run by hand;
prints, asserts nothing).

    python benchmarks/bench_profile_sections.py [--sizes 1000 2000 4000 8000]

For each size an overlay of the built-in default adds that many sections (each placed
before the previous one, so every placement is a lookup). Printed per size: the time of
reading the YAML alone (ruamel.yaml composing the file), of ``compile_profile`` (read,
merge, validate, checks), of ``effective_values`` (what ``pipeline explain`` prints) and
of rendering the system prompt, with the ratio to the previous size. Linear work shows
ratios near the size ratio (2.0 for doubling); the quadratic merge this replaced showed
about 4.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline import compile_profile, load_profile  # noqa: E402
from pipeline.prompt import RenderContext  # noqa: E402
from pipeline.source.explain import effective_values  # noqa: E402
from pipeline.source.reader import _compose  # noqa: E402


def overlay(n: int) -> str:
    lines = ["extends: builtin:default\nname: many\nsystem_prompt:\n  sections:\n"]
    lines += [f"    - {{id: s{i}, text: Section {i}.{', before: s' + str(i - 1) if i else ''}}}\n" for i in range(n)]
    return "".join(lines)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 4000, 8000])
    args = parser.parse_args()
    previous = None
    print(f"{'sections':>8} {'yaml':>8} {'compile':>8} {'explain':>8} {'render':>8}   ratios to the previous size")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            path = Path(tmp) / f"p{n}.yaml"
            text = overlay(n)
            path.write_text(text, encoding="utf-8")
            compiled = []
            figures = [
                timed(lambda: _compose(text, "p")),
                timed(lambda: compiled.append(compile_profile(path))),
            ]
            loaded = load_profile(path)
            data = loaded.profile.model_dump(mode="json", by_alias=True)
            figures.append(timed(lambda: effective_values(data, loaded.source_map)))
            figures.append(timed(lambda: compiled[0].render_system_prompt(RenderContext(cwd="/w"))))
            ratios = "" if previous is None else "  ".join(f"{a / b:4.1f}" for a, b in zip(figures, previous))
            print(f"{n:>8} " + " ".join(f"{f:8.3f}" for f in figures) + "   " + ratios)
            previous = figures


if __name__ == "__main__":
    main()
