"""The workloads of ``benchmarks/run.py``, each run in a fresh interpreter (run by run.py).

    python benchmarks/workloads.py WORKLOAD [ARG] [--loops N]

Prints one JSON line: ``seconds`` (per call for the per-call workloads, else for the
whole step) and ``rss_mb`` (this interpreter's peak resident set). The template inputs
are defined here once and sent unchanged to pi by run.py.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import resource
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE)]

#: A body with five forms, and the arguments of the template workloads.
BODY = "Review $1 with a focus on ${@:2}. If nothing is given, look at ${2:-correctness}. All: $ARGUMENTS; first two: ${@:1:2}."
ARGS = ["src/app.py", "error handling", "speed", "memory use", "docs"]
#: Five arguments, two of them quoted.
ARGS_TEXT = "src/app.py \"error handling\" speed 'memory use' docs"
_PIECES = ["Review ", "$1", " and ", "${2:-the default text}", " then ", "$@", " with ", "${@:2:3}", " it costs $5 ",
           "$ARGUMENTS", " ${1} ", "\n", "${ARGUMENTS:-none}", " $$ ", "${3:-}", "plain prose without forms. "]


def big_body(size: int) -> str:
    """About ``size`` characters of prose and ``$`` forms (pi's forms only), deterministic."""
    rng = random.Random(13)
    parts, total = [], 0
    while total < size:
        piece = rng.choice(_PIECES)
        parts.append(piece)
        total += len(piece)
    return "".join(parts)


def fresh_bodies(count: int) -> list[str]:
    """``count`` distinct bodies like :data:`BODY` (no parse cache can help)."""
    return [f"{BODY} #{i}" for i in range(count)]


def per_call(fn, items: list) -> float:
    start = time.perf_counter()
    for item in items:
        fn(item)
    return (time.perf_counter() - start) / len(items)


def substitute(loops: int) -> float:
    from pipeline.templates.plan import parse_template
    template = parse_template(BODY)
    per_call(lambda _: template.substitute(ARGS), range(max(1, loops // 10)))
    return per_call(lambda _: template.substitute(ARGS), range(loops))


def fresh(loops: int) -> float:
    from pipeline.templates.plan import substitute_args
    per_call(lambda b: substitute_args(b, ARGS), [f"warm {i} $1" for i in range(max(1, loops // 10))])
    return per_call(lambda b: substitute_args(b, ARGS), fresh_bodies(loops))


def big(size: int) -> float:
    from pipeline.templates.plan import substitute_args
    body = big_body(size)
    substitute_args("warm up $1", ARGS)
    start = time.perf_counter()
    substitute_args(body, ARGS)
    return time.perf_counter() - start


#: pi's own matching rule as one Python regular expression (its source's alternatives).
_PI_FORMS = r"\$\{([0-9]+|ARGUMENTS|@):-([^}]*)\}|\$\{@:([0-9]+)(?::([0-9]+))?\}|\$(ARGUMENTS|@|[0-9]+)"


def pi_regex(body: str, args: list[str]) -> str:
    """pi's substituteArgs ported as directly as CPython allows: ``re.sub`` with a callback.

    The floor of the fresh-body workloads: the least a CPython implementation does per
    expansion (no plan, no positions, no cache).
    """
    import re
    joined = " ".join(args)

    def arg(n: str) -> str:
        i = int(n) - 1
        return args[i] if 0 <= i < len(args) else ""

    def replace(m: re.Match) -> str:
        target, default, start, length, simple = m.groups()
        if target is not None:
            return (joined if target in ("@", "ARGUMENTS") else arg(target)) or default
        if start is not None:
            first = max(int(start) - 1, 0)
            return " ".join(args[first: None if length is None else first + int(length)])
        return joined if simple in ("@", "ARGUMENTS") else arg(simple)

    return re.sub(_PI_FORMS, replace, body)


def regex_fresh(loops: int) -> float:
    per_call(lambda b: pi_regex(b, ARGS), fresh_bodies(max(1, loops // 10)))
    return per_call(lambda b: pi_regex(b, ARGS), fresh_bodies(loops))


def regex_big(size: int) -> float:
    body = big_body(size)
    pi_regex("warm up $1", ARGS)
    start = time.perf_counter()
    pi_regex(body, ARGS)
    return time.perf_counter() - start


def parse_args(loops: int) -> float:
    from pipeline.templates.invoke import parse_args as split
    per_call(split, [ARGS_TEXT] * max(1, loops // 10))
    return per_call(split, [ARGS_TEXT] * loops)


def _warm(step) -> None:
    """Run ``step`` once on a small session first: imports and first-use costs are not timed
    (pi's figures come from a process that has run the operation before, too)."""
    import tempfile

    from synth import write_session
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / "warm.jsonl"
        write_session(small, 40)
        step(str(small))


def _texts():
    from pipeline import compile_profile
    from pipeline.session import ContextTexts
    return ContextTexts.from_profile(compile_profile("default").profile)


def open_project(path: str) -> float:
    from pipeline.session import SessionFile, build_context
    texts = _texts()
    _warm(lambda p: build_context(SessionFile.open(p), texts))
    start = time.perf_counter()
    build_context(SessionFile.open(path), texts)
    return time.perf_counter() - start


def project(path: str) -> float:
    from pipeline.session import SessionFile, build_context
    texts = _texts()
    _warm(lambda p: build_context(SessionFile.open(p), texts))
    session = SessionFile.open(path)
    start = time.perf_counter()
    build_context(session, texts)
    return time.perf_counter() - start


def open_plan(path: str) -> float:
    from pipeline import compile_profile
    from pipeline.compaction.plan import plan_compaction
    from pipeline.session import SessionFile
    settings = compile_profile("default").profile.compaction
    _warm(lambda p: plan_compaction(SessionFile.open(p).path_to(), settings))
    start = time.perf_counter()
    plan_compaction(SessionFile.open(path).path_to(), settings)
    return time.perf_counter() - start


def read_bytes(path: str) -> float:
    start = time.perf_counter()
    with open(path, "rb") as f:
        f.read()
    return time.perf_counter() - start


def json_lines(path: str) -> float:
    """Parse every line (orjson when installed, else json), keeping nothing."""
    try:
        from orjson import loads
    except ImportError:
        from json import loads
    gc.disable()
    start = time.perf_counter()
    with open(path, "rb") as f:
        for line in f:
            loads(line)
    return time.perf_counter() - start


def context_json(path: str) -> float:
    """``pipeline context PATH --format json`` in this interpreter, its output to /dev/null
    (the whole command, imports included: a fresh process's figure)."""
    import os
    saved = os.dup(1)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 1)
    try:
        start = time.perf_counter()
        from pipeline.cli import main
        code = main(["context", path, "--format", "json"])
        sys.stdout.flush()
        if code:
            raise RuntimeError(f"pipeline context exited with {code}")
        return time.perf_counter() - start
    finally:
        os.dup2(saved, 1)


def peak_rss_mb() -> float:
    """This process's peak resident set: ``VmHWM`` where /proc has it. (``ru_maxrss`` is
    not used on Linux: it keeps the larger of this process's peak and that of the process
    it was forked from, so a child of a large benchmark runner would report the runner's.)"""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


WORKLOADS = {f.__name__: f for f in (substitute, fresh, big, regex_fresh, regex_big, parse_args, open_project,
                                     project, open_plan, read_bytes, json_lines, context_json)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workload", choices=sorted(WORKLOADS))
    parser.add_argument("arg", help="loops, a body size in characters, or a session file")
    args = parser.parse_args()
    fn = WORKLOADS[args.workload]
    value = args.arg if args.workload in ("open_project", "project", "open_plan", "read_bytes", "json_lines",
                                          "context_json") else int(args.arg)
    seconds = fn(value)
    print(json.dumps({"seconds": seconds, "rss_mb": peak_rss_mb()}))


if __name__ == "__main__":
    main()
