"""Every benchmark workload in one table, optionally side by side with pi 0.84.0.

    python benchmarks/run.py [--sizes 1k,10k,100k | --sizes tiny] [--repeat 5]
                             [--vs-pi] [--oracle DIR] [--only templates,sessions,start,agents]

Each of our runs is a fresh interpreter (benchmarks/workloads.py) so that its peak RSS
belongs to that workload alone. Every workload is run ``--repeat`` times; the table shows
the median with (min-max). With ``--vs-pi`` the same inputs go through the pi oracle
(``../shared/oracle`` set up with its ``setup.sh``; its ``timing`` op) in the same run,
alternating with ours, and the table adds ours / pi. ``ours / floor`` compares with the
least any implementation must do: for fresh template bodies pi's own regular expression
run by CPython's ``re.sub`` with a callback (no plan, no positions), for sessions reading
the bytes and parsing every line (orjson when installed), the file size for memory,
``import pydantic`` for a cold start. The ``agents`` group (benchmarks/agents.py) times
whole commands: ``pipeline run`` and ``pipeline chat`` against the real ``pi -p`` 1.6.0 on
one loopback server (always, with or without ``--vs-pi``), ``validate`` over 200 profiles
and ``replay`` throughput.
Figures only; nothing is asserted. See docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import synth  # noqa: E402
from workloads import ARGS, ARGS_TEXT, BODY, big_body  # noqa: E402

SIZES = {"1k": 1_000, "10k": 10_000, "100k": 100_000}
TINY = {"sessions": [50], "bodies": [10_000, 100_000], "loops": 200}
FULL = {"bodies": [1_000_000, 10_000_000], "loops": 20_000}


@dataclass
class Row:
    """One workload at one size: how to run ours, pi and the floor, and what was measured."""

    name: str
    size: str
    ours: list[str]
    pi: dict | None = None
    floor: list[list[str]] = field(default_factory=list)
    kind: str = "time"  # "time" or "rss" (the figure compared is the peak RSS)
    floor_value: float | None = None
    warmup: int = 0  # runs of ours before the measured ones (not counted)
    ours_fn: Callable[[], tuple[float, float]] | None = None  # in-process runners (agents.py)
    pi_fn: Callable[[], tuple[float, float]] | None = None
    floor_fn: Callable[[], float] | None = None
    times: dict[str, list[float]] = field(default_factory=lambda: {"ours": [], "pi": [], "floor": []})
    rss: dict[str, list[float]] = field(default_factory=lambda: {"ours": [], "pi": []})


# --- running -------------------------------------------------------------------------------


def run_child(argv: list[str]) -> tuple[float, float]:
    """(seconds, peak RSS MB) of ``argv``: a workload's own figure, or the process's wall time."""
    if argv[0] == "workload":
        out = subprocess.run([sys.executable, str(HERE / "workloads.py"), *argv[1:]], capture_output=True, text=True,
                             check=True, cwd=ROOT).stdout
        result = json.loads(out.strip().splitlines()[-1])
        return result["seconds"], result["rss_mb"]
    return run_process([sys.executable, *argv[1:]] if argv[0] == "python" else argv, ROOT)


def run_process(argv: list[str], cwd: Path, stdin: str | None = None) -> tuple[float, float]:
    """Wall time and peak RSS (of the process and its descendants) of one command."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    if stdin is not None:
        proc.stdin.write(stdin)
        proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise RuntimeError(f"{' '.join(argv)} exited with {proc.returncode}")
    return time.perf_counter() - start, usage.ru_maxrss / 1024


class Pi:
    """The pi oracle, long-running (``--jsonl``): one request a line, one reply a line."""

    def __init__(self, directory: Path):
        self.dir = directory
        self.proc = subprocess.Popen([str(directory / "oracle"), "--jsonl"], cwd=directory, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def request(self, request: dict):
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        if not reply.get("ok"):
            raise RuntimeError(f"oracle: {reply}")
        return reply["result"]

    def measure(self, row: Row) -> tuple[float, float | None]:
        if row.kind == "rss":
            return run_process([str(self.dir / "oracle")], self.dir, json.dumps(row.pi))
        return self.request(row.pi)["meanMs"] / 1000, None

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def measure(row: Row, repeat: int, pi: Pi | None) -> None:
    ours = row.ours_fn or (lambda: run_child(row.ours))
    for _ in range(row.warmup):
        ours()
        if row.pi_fn is not None:
            row.pi_fn()
    for _ in range(repeat):
        seconds, rss = ours()
        row.times["ours"].append(seconds)
        row.rss["ours"].append(rss)
        if row.pi_fn is not None:
            seconds, rss = row.pi_fn()
            row.times["pi"].append(seconds)
            row.rss["pi"].append(rss)
        elif pi is not None and row.pi is not None:
            seconds, rss = pi.measure(row)
            row.times["pi"].append(seconds)
            if rss is not None:
                row.rss["pi"].append(rss)
    for argv in row.floor:
        row.times["floor"].append(min(run_child(argv)[0] for _ in range(repeat)))
    if row.floor_fn is not None:
        row.times["floor"].append(min(row.floor_fn() for _ in range(repeat)))


# --- the workloads -------------------------------------------------------------------------


def timing(request: dict, n: int, warmup: int, preload: bool = True) -> dict:
    """pi's ``timing`` op; ``preload=False`` makes each run read and parse the session file."""
    return {"op": "timing", "n": n, "warmup": warmup, "preload": preload, "request": request}


def template_rows(loops: int, bodies: list[int]) -> list[Row]:
    expand = {"op": "expand", "content": BODY, "args": ARGS}
    rows = [
        Row("substitute, parsed body (5 forms)", "-", ["workload", "substitute", str(loops)], timing(expand, loops, loops // 10)),
        Row("parse + substitute, fresh body", "-", ["workload", "fresh", str(loops)], timing(expand, loops, loops // 10),
            [["workload", "regex_fresh", str(loops)]]),
    ]
    for size in bodies:
        request = timing({"op": "expand", "content": big_body(size), "args": ARGS}, 2, 1)
        rows.append(Row("body with many `$` forms", _bytes(size), ["workload", "big", str(size)], request,
                        [["workload", "regex_big", str(size)]]))
    rows.append(Row("parse_args, 5 arguments with quotes", "-", ["workload", "parse_args", str(loops)],
                    timing({"op": "parse_args", "args": ARGS_TEXT}, loops, loops // 10)))
    return rows


def session_rows(label: str, path: Path) -> list[Row]:
    p = str(path)
    floors = [["workload", "read_bytes", p], ["workload", "json_lines", p]]
    context = {"op": "build_context", "sessionFile": p}
    size_mb = path.stat().st_size / 1e6
    return [
        Row("open + project", label, ["workload", "open_project", p], timing(context, 1, 0, preload=False), floors),
        Row("projection alone, after open", label, ["workload", "project", p], timing(context, 1, 0)),
        Row("open + plan", label, ["workload", "open_plan", p],
            timing({"op": "prepare_compaction", "sessionFile": p}, 1, 0, preload=False), floors),
        Row("`pipeline context --format json`, peak RSS", label, ["workload", "context_json", p],
            timing(context, 1, 0, preload=False), kind="rss", floor_value=size_mb),
    ]


def start_rows(directory: Path) -> list[Row]:
    """A cold start as an installed copy sees it: bytecode kept (pip compiles it on
    install, so PYTHONDONTWRITEBYTECODE is dropped for our runs) and the compiled-profile
    cache filled, in a directory of the benchmark's own (the warm-up run fills it)."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["XDG_CACHE_HOME"] = str(directory / "xdg-cache")
    return [Row("`pipeline render`, cold", "-", ["python", "-m", "pipeline", "render"], None,
                [["python", "-c", "import pydantic"]], warmup=1)]


def agent_rows(directory: Path) -> list[Row]:
    """Whole commands as a user waits for them (benchmarks/agents.py); pi is ``pi -p`` 1.6.0."""
    import agents

    env = agents.Agents(directory / "agents")
    profiles, archive = agents.profile_folder(directory), agents.replay_archive(directory)
    command = lambda *argv: lambda: agents._wait([sys.executable, "-m", "pipeline", *argv], ROOT,  # noqa: E731
                                                 {**env.ours_env, "OPENAI_API_KEY": "none"}, answer=False)
    return [
        Row("`pipeline run` start to answer / `pi -p` 1.6.0", "-", [], ours_fn=env.ours_run, pi_fn=env.pi_run,
            warmup=1),
        Row("`pipeline run` / `pi -p` 1.6.0, peak RSS", "-", [], ours_fn=env.ours_run, pi_fn=env.pi_run, kind="rss"),
        Row("`pipeline chat` start to first prompt / `pi -p` 1.6.0", "-", [], ours_fn=env.ours_chat,
            pi_fn=env.pi_run, warmup=1),
        Row("`pi -p` with the exported extension / without", "-", [], ours_fn=env.pi_run_exported,
            pi_fn=env.pi_run, warmup=1),
        Row("`pipeline validate`, a folder of profiles", f"{agents.PROFILES} files", [],
            ours_fn=command("validate", str(profiles)), warmup=1),
        Row("`pipeline replay --workers 1`", f"{agents.ARCHIVE_SESSIONS} sessions", [],
            ours_fn=command("replay", str(archive), "--profile", "default", "--workers", "1"),
            floor_fn=lambda: agents.read_archive_floor(archive), warmup=1),
        Row("`pipeline replay` (all cores)", f"{agents.ARCHIVE_SESSIONS} sessions", [],
            ours_fn=command("replay", str(archive), "--profile", "default"),
            floor_fn=lambda: agents.read_archive_floor(archive), warmup=1),
    ]


def session_file(directory: Path, entries: int, pi: Pi | None) -> Path:
    source = "pi" if pi is not None else "py"
    path = directory / f"synth-{source}-{entries}.jsonl"
    if not path.exists():
        print(f"(writing a {entries:,}-entry session: {path})", flush=True)
        if pi is not None:
            pi.request({"op": "synth_session", "out": str(path), "entries": entries, "seed": 4242})
        else:
            synth.write_session(path, entries)
    return path


# --- the table -----------------------------------------------------------------------------


def _bytes(size: int) -> str:
    return f"{size / 1e6:g} MB" if size >= 1e6 else f"{size / 1e3:g} KB"


def fmt_seconds(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.2f} µs"
    return f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def spread(values: list[float], unit) -> str:
    if not values:
        return "-"
    if len(values) == 1:
        return unit(values[0])
    return f"{unit(statistics.median(values))} ({unit(min(values))}–{unit(max(values))})"


def cells(row: Row) -> list[str]:
    mb = lambda v: f"{v:.0f} MB"  # noqa: E731
    if row.kind == "rss":
        ours, pi = row.rss["ours"], row.rss["pi"]
        floor = f"{row.floor_value:.3g} MB (file)" if row.floor_value else "-"
        return [spread(ours, mb), spread(pi, mb), _ratio(ours, pi), floor,
                _ratio(ours, [row.floor_value] if row.floor_value else []), f"{max(ours):.0f}"]
    ours, pi, floor = row.times["ours"], row.times["pi"], row.times["floor"]
    floor_text = " + ".join(fmt_seconds(f) for f in floor) if floor else "-"
    return [spread(ours, fmt_seconds), spread(pi, fmt_seconds), _ratio(ours, pi), floor_text,
            _ratio(ours, [max(floor)] if floor else []), f"{max(row.rss['ours']):.0f}" if max(row.rss["ours"]) else "-"]


def _ratio(ours: list[float], other: list[float]) -> str:
    if not ours or not other:
        return "-"
    return f"{statistics.median(ours) / statistics.median(other):.2f}"


HEADER = ["workload", "size", "ours median (min–max)", "pi (0.84.0 oracle, or the CLI named)", "ours / pi", "floor", "ours / floor", "peak MB"]


def print_row(values: list[str]) -> None:
    print("| " + " | ".join(values) + " |", flush=True)


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else "?"
    return f"{os.cpu_count()} CPUs, {cpu}, Python {platform.python_version()}, load {os.getloadavg()[0]:.1f}"


# --- main ----------------------------------------------------------------------------------


def oracle_dir(given: Path | None) -> Path:
    candidate = given or Path(os.environ.get("PI_ORACLE", Path(tempfile.gettempdir()) / "oracle"))
    if not (candidate / "oracle").exists() or not (candidate / "node_modules").exists():
        sys.exit(f"no pi oracle set up at {candidate}: copy ../shared/oracle to a directory, run its setup.sh, "
                 "and pass that directory with --oracle DIR")
    return candidate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1k,10k,100k", help="session sizes (1k,10k,100k), or `tiny` for a smoke run")
    parser.add_argument("--repeat", type=int, default=5, help="runs per workload (median, min, max)")
    parser.add_argument("--vs-pi", action="store_true", help="run the same workloads through the pi oracle")
    parser.add_argument("--oracle", type=Path, help="the set-up copy of ../shared/oracle (default: $PI_ORACLE, "
                        "else `oracle` in the temporary directory)")
    parser.add_argument("--only", default="templates,sessions,start,agents", help="which groups of workloads "
                        "(agents installs the pinned pi 1.6.0 CLI on first use)")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "pipeline-bench",
                        help="where generated sessions are kept")
    args = parser.parse_args(argv)
    tiny = args.sizes == "tiny"
    plan = TINY if tiny else {**FULL, "sessions": [SIZES[s] for s in args.sizes.split(",")]}
    pi = Pi(oracle_dir(args.oracle)) if args.vs_pi else None
    args.dir.mkdir(parents=True, exist_ok=True)
    groups = set(args.only.split(","))
    print(f"machine: {machine()}; {args.repeat} run(s) per workload" + ("; pi through the oracle" if pi else ""))
    print_row(HEADER)
    print_row(["---"] * len(HEADER))
    try:
        rows = template_rows(plan["loops"], plan["bodies"]) if "templates" in groups else []
        for entries in plan["sessions"] if "sessions" in groups else []:
            label = f"{entries // 1000}k" if entries >= 1000 else str(entries)
            rows += session_rows(label, session_file(args.dir, entries, pi))
        rows += start_rows(args.dir) if "start" in groups else []
        rows += agent_rows(args.dir) if "agents" in groups else []
        for row in rows:
            measure(row, args.repeat, pi)
            print_row([row.name, row.size, *cells(row)])
            if row.size.endswith(" sessions"):
                count, median = int(row.size.split()[0]), statistics.median(row.times["ours"])
                floor = f", floor {count / min(row.times['floor']):.0f}/s" if row.times["floor"] else ""
                print(f"  ({count / median:.0f} sessions/s{floor})", flush=True)
    finally:
        if pi is not None:
            pi.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
