"""`pipeline import TARGET --project DIR` on damaged exports and hostile settings: located errors, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pipeline.cli import main

PLAN = ".pi/extensions/context-pipeline/profile.json"


def run_import(project, target="pi"):
    return subprocess.run([sys.executable, "-m", "pipeline", "import", target, "--project", str(project)],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("damage", [
    (PLAN, b'{"summary": 1}'),
    (PLAN, b'{"plan": {"sections": 7}}'),
    (".pi/settings.json", b"[" * 100_000 + b"]" * 100_000),
    (".pi/settings.json", b'{"compaction": {"reserveTokens": 1e400}}'),
    (".pi/context-pipeline-export.json", b'{"target": "pi", "files": {}, "x": "\\ud800"}'),
])
def test_a_damaged_pi_export_is_a_located_error(tmp_path, damage):
    assert main(["export", "pi", "--project", str(tmp_path)]) == 0
    path, data = damage
    (tmp_path / path).write_bytes(data)
    done = run_import(tmp_path)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and str(tmp_path) in done.stderr


def test_a_fifo_in_place_of_the_exported_settings_does_not_hang(tmp_path):
    assert main(["export", "claude-code", "--project", str(tmp_path)]) == 0
    os.unlink(tmp_path / ".claude/settings.json")
    os.mkfifo(tmp_path / ".claude/settings.json")
    done = run_import(tmp_path, "claude-code")
    assert done.returncode == 1 and "FIFO" in done.stderr and "Traceback" not in done.stderr


def test_a_deep_claude_settings_file_is_a_located_error(tmp_path):
    assert main(["export", "claude-code", "--project", str(tmp_path)]) == 0
    (tmp_path / ".claude/settings.json").write_text("{\"a\": " * 100_000 + "1" + "}" * 100_000)
    done = run_import(tmp_path, "claude-code")
    assert done.returncode == 1 and "nested too deeply" in done.stderr and "Traceback" not in done.stderr
    assert json.loads((tmp_path / ".claude/context-pipeline-export.json").read_text())["target"] == "claude-code"
