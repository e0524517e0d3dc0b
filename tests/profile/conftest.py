"""Helpers for the profile-language tests: real files in tmp dirs, the real CLI."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from pipeline.cli import main

ROOT = Path(__file__).resolve().parents[2]
#: The first two lines of most test overlays.
HEAD = "extends: builtin:default\nname: t\n"


#: The formatter's source excerpt ("    6 | text", "      | ^") and closing count lines.
EXCERPT_LINE = re.compile(r"^ *\d* \| ")
COUNT_LINE = re.compile(r"^\d+ (error|warning|notice)s?(, \d+ (warning|notice)s?)*( in .+)?$")


def located(text: str) -> list[str]:
    """The located problem lines of a formatter's output (no excerpts, no count)."""
    return [line for line in text.splitlines() if not EXCERPT_LINE.match(line) and not COUNT_LINE.match(line)]


@dataclass
class Run:
    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        """stdout's located problem lines (source excerpts and the closing count left out;
        tests/test_error_surface.py pins those)."""
        return located(self.out)


def write_files(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


@pytest.fixture
def cli(capsys, monkeypatch, tmp_path):
    """Run ``pipeline ARGS`` in-process with ``tmp_path`` as the working directory."""
    monkeypatch.chdir(tmp_path)

    def run(*args: str) -> Run:
        code = main(list(args))
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


def run_process(*args: str, cwd: Path | None = None) -> Run:
    """Run the installed ``pipeline`` command in a fresh process."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline", *args],
        cwd=cwd or ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)
