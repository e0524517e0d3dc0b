"""Running the real ``pipeline`` command on hostile files, with a hang guard."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: A hang guard, not a timing assertion: every run here finishes in well under a second.
HANG_GUARD = 20


@dataclass
class Run:
    code: int
    out: bytes
    err: str

    @property
    def lines(self) -> list[str]:
        return self.err.splitlines()


def cli(*argv: str, cwd: Path | None = None, env: dict | None = None, stdin=None, input: bytes | None = None,
        stdout=subprocess.PIPE) -> Run:
    """``python -m pipeline ARGV`` in a fresh process; fails the test if it does not end in time."""
    full_env = {**os.environ, "PI_CODING_AGENT_DIR": str(cwd or ROOT) + "/.no-agent-dir", **(env or {})}
    done = subprocess.run(
        [sys.executable, "-m", "pipeline", *argv], cwd=cwd or ROOT, env=full_env, stdin=stdin, input=input,
        stdout=stdout, stderr=subprocess.PIPE, timeout=HANG_GUARD,
    )
    return Run(done.returncode, done.stdout or b"", done.stderr.decode("utf-8", "replace"))


def one_line_error(run: Run, *fragments: str) -> str:
    """The run failed with exactly one problem line holding every fragment, and no traceback
    (the formatter may show the source line and a caret under it: indented lines)."""
    assert "Traceback" not in run.err, run.err
    problems = [line for line in run.lines if line and not line[0].isspace()]
    assert len(problems) == 1, run.err
    for fragment in fragments:
        assert fragment in problems[0], run.err
    return problems[0]


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.md"
    os.mkfifo(path)
    return path
