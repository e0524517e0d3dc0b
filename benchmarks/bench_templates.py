"""Throughput of argument splitting, template parsing and substitution (run by hand).

    /tmp/venv/bin/python benchmarks/bench_templates.py [--seconds 1.0]

Prints calls per second and characters per second on a fixed, seeded corpus:
``parse_args`` on argument strings, ``build`` (parsing a body with the Lark grammar,
uncached), ``Template.substitute`` (parse once, substitute many) and ``substitute_args``
(the cached entry point), and ``expand_input`` end to end.
"""

from __future__ import annotations

import argparse
import random
import time

from pipeline.templates import PromptTemplate, expand_input, parse_args, parse_template, substitute_args
from pipeline.templates.grammar import build

SEED = 84


def corpus() -> tuple[list[str], list[str], list[list[str]]]:
    rng = random.Random(SEED)
    words = ["src/app.py", "'two words'", '"quoted arg"', "--flag", "😀", "x", "$1", "日本語", "a\tb"]
    arg_strings = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 12))) for _ in range(500)]
    forms = ["$1", "$2", "$@", "$ARGUMENTS", "${1:-main}", "${@:2}", "${@:2:3}", "$<@:1>", "${1}", "$$"]
    prose = ["Review the change ", "and explain ", "focusing on ", "\n\n", "- item ", "costs $5 ", "`code` "]
    bodies = []
    for _ in range(200):
        parts = [rng.choice(prose) + (rng.choice(forms) if rng.random() < 0.4 else "") for _ in range(rng.randint(5, 60))]
        bodies.append("".join(parts))
    arg_lists = [parse_args(s) for s in arg_strings]
    return arg_strings, bodies, arg_lists


def measure(label: str, fn, items: list, chars: int, seconds: float) -> None:
    calls, start = 0, time.perf_counter()
    while True:
        for item in items:
            fn(item)
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    n = calls * len(items)
    print(f"{label:<34} {n / elapsed:>12,.0f} calls/s {calls * chars / elapsed / 1e6:>9.2f} M chars/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=1.0, help="time per measurement")
    seconds = ap.parse_args().seconds
    arg_strings, bodies, arg_lists = corpus()
    body_chars = sum(map(len, bodies))
    print(f"corpus: {len(arg_strings)} argument strings ({sum(map(len, arg_strings)):,} chars), "
          f"{len(bodies)} bodies ({body_chars:,} chars)")
    build("warm up $1")
    measure("parse_args", parse_args, arg_strings, sum(map(len, arg_strings)), seconds)
    measure("build (Lark parse, uncached)", build, bodies, body_chars, seconds)
    templates = [parse_template(b) for b in bodies]
    pairs = [(t, arg_lists[i % len(arg_lists)]) for i, t in enumerate(templates)]
    measure("Template.substitute (parsed once)", lambda p: p[0].substitute(p[1]), pairs, body_chars, seconds)
    measure("substitute_args (cached parse)", lambda p: substitute_args(p[0].body, p[1]), pairs, body_chars, seconds)
    named = [PromptTemplate(f"t{i}", "", b) for i, b in enumerate(bodies)]
    inputs = [f"/t{i} {arg_strings[i]}" for i in range(len(bodies))]
    measure("expand_input (200 templates)", lambda s: expand_input(s, named), inputs, sum(map(len, inputs)), seconds)
    for label, body in (("build, 1 MB of `x $1 `", "x $1 " * 200_000), ("build, 1 MB of `x ${1:-d} `", "x ${1:-d} " * 100_000)):
        start = time.perf_counter()
        build(body)
        elapsed = time.perf_counter() - start
        print(f"{label:<34} {elapsed:>9.3f} s  {body.count('$') / elapsed:>12,.0f} forms/s")


if __name__ == "__main__":
    main()
