"""benchmarks/run.py on tiny sizes: every workload row is printed (no timing is asserted).

Sessions come from the Python generator (benchmarks/synth.py): no oracle. The ``agents``
group runs the real ``pi -p`` 1.6.0 (tests/agents/npm_install.py installs it, cached).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

ROWS = [
    ("substitute, parsed body (5 forms)", "-"),
    ("parse + substitute, fresh body", "-"),
    ("body with many `$` forms", "10 KB"),
    ("body with many `$` forms", "100 KB"),
    ("parse_args, 5 arguments with quotes", "-"),
    ("open + project", "50"),
    ("projection alone, after open", "50"),
    ("open + plan", "50"),
    ("`pipeline context --format json`, peak RSS", "50"),
    ("`pipeline render`, cold", "-"),
]
FIGURE = re.compile(r"^\d+(\.\d+)? (µs|ms|s|MB)$")


def test_tiny_run_prints_every_workload(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--sizes", "tiny", "--repeat", "1",
                           "--dir", str(tmp_path), "--only", "templates,sessions,start"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr
    table = [line.strip("|").split(" | ") for line in done.stdout.splitlines() if line.startswith("| ")]
    header, _rule, *rows = [[cell.strip() for cell in row] for row in table]
    assert header[:5] == ["workload", "size", "ours median (min–max)", "pi (0.84.0 oracle, or the CLI named)",
                          "ours / pi"]
    assert [(r[0], r[1]) for r in rows] == ROWS
    for row in rows:
        assert FIGURE.match(row[2]), row  # one run: a single figure with its unit
        assert row[3] == "-" and row[4] == "-"  # no pi without --vs-pi
        assert float(row[-1]) > 0  # peak RSS in MB
    assert (tmp_path / "synth-py-50.jsonl").stat().st_size > 10_000


AGENT_ROWS = [
    ("`pipeline run` start to answer / `pi -p` 1.6.0", "-"),
    ("`pipeline run` / `pi -p` 1.6.0, peak RSS", "-"),
    ("`pipeline chat` start to first prompt / `pi -p` 1.6.0", "-"),
    ("`pi -p` with the exported extension / without", "-"),
    ("`pipeline validate`, a folder of profiles", "200 files"),
    ("`pipeline replay --workers 1`", "400 sessions"),
    ("`pipeline replay` (all cores)", "400 sessions"),
]


def test_agent_rows_run_ours_and_the_real_pi(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--repeat", "1", "--dir",
                           str(tmp_path), "--only", "agents"], capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert done.returncode == 0, done.stderr
    rows = [[c.strip() for c in line.strip("|").split(" | ")] for line in done.stdout.splitlines()
            if line.startswith("| ")][2:]
    assert [(r[0], r[1]) for r in rows] == AGENT_ROWS
    for row in rows[:4]:
        assert FIGURE.match(row[3]) and re.match(r"^\d+\.\d\d$", row[4]), row  # pi ran: a figure and a ratio
    assert re.search(r"^  \(\d+ sessions/s, floor \d+/s\)$", done.stdout, re.M), done.stdout
