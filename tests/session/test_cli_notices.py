"""Commands that still use a damaged file label its problems as warnings; `check` fails on them."""

import subprocess
import sys
from pathlib import Path

REAL = Path(__file__).resolve().parents[1] / "data" / "sessions" / "real" / "short-chat.jsonl"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline", *args], capture_output=True, text=True)


def test_torn_last_line_is_a_warning_for_context_and_an_error_for_check(tmp_path):
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(REAL.read_bytes()[:-40])
    shown = _run("context", str(torn))
    assert shown.returncode == 0
    assert f"{torn}:12: warning: torn last line" in shown.stderr
    checked = _run("session", "check", str(torn))
    assert checked.returncode == 1
    assert f"{torn}:12: torn last line" in checked.stdout


def test_compact_labels_a_torn_last_line_as_a_warning(tmp_path):
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes(REAL.read_bytes()[:-40])
    planned = _run("compact", str(torn), "--plan")
    assert planned.returncode == 0
    assert f"{torn}:12: warning: torn last line" in planned.stderr


def test_context_on_a_file_whose_only_line_is_cut_names_the_line(tmp_path):
    """Issue 34, item 7: not a session, and why, at file:1 (not a bare "no JSON line")."""
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(REAL.read_bytes().split(b"\n", 1)[0][:-5])
    shown = _run("context", str(cut))
    assert (shown.returncode, shown.stdout) == (1, "")
    assert shown.stderr == f"{cut}:1: not a pi session file: no JSON line in it (line 1: torn last line (a write was cut short))\n"
