"""The suite's own pytest settings: an empty parameter set and an unexpected pass fail."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pytest(tmp_path: Path, body: str) -> subprocess.CompletedProcess:
    probe = tmp_path / "test_probe.py"
    probe.write_text("import pytest\n\n" + body, encoding="utf-8")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", str(ROOT / "pyproject.toml"),
               "--rootdir", str(tmp_path), str(probe)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_an_empty_parameter_set_fails_at_collection(tmp_path: Path) -> None:
    done = _pytest(tmp_path, '@pytest.mark.parametrize("case", [])\ndef test_cases(case):\n    assert case\n')
    assert done.returncode != 0 and "Empty parameter set" in done.stdout, done.stdout


def test_an_unexpected_pass_fails(tmp_path: Path) -> None:
    done = _pytest(tmp_path, "@pytest.mark.xfail(reason='known gap')\ndef test_gap():\n    assert True\n")
    assert done.returncode == 1 and "XPASS(strict)" in done.stdout, done.stdout
