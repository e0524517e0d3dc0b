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
