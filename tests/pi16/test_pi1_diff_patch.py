"""``pipeline diff OLD NEW --patch``: the section patch a change of profile would send."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

OVERLAY = """\
extends: builtin:pi-1
name: pi-1-changed
system_prompt:
  sections:
    - id: docs
      remove: true
    - id: cwd
      text: "Working in ${cwd}"
"""


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline", "diff", *args], cwd=cwd, capture_output=True, text=True)


def test_patch_names_changed_then_removed_sections(tmp_path: Path) -> None:
    (tmp_path / "new.yaml").write_text(OVERLAY, encoding="utf-8")
    done = run("builtin:pi-1", "new.yaml", "--patch", "--format", "json", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    [scenario] = json.loads(done.stdout)
    assert scenario["patch_order"] == ["cwd", "docs"]
    assert scenario["patch"] == {"cwd": f"<cwd>\nWorking in {tmp_path}\n</cwd>", "docs": None}
    assert scenario["update"].endswith('"docs".') and '"cwd":\n\n<cwd>\nWorking in' in scenario["update"]
    assert "<docs>" not in scenario["replayed_prompt"]
    text = run("builtin:pi-1", "new.yaml", "--patch", cwd=tmp_path)
    assert text.returncode == 1 and "patch of 2 section(s): cwd, docs (removed)" in text.stdout


def test_no_change_sends_nothing(tmp_path: Path) -> None:
    done = run("builtin:pi-1", "builtin:pi-1", "--patch", cwd=tmp_path)
    assert done.returncode == 0 and "nothing is sent" in done.stdout


def test_markdown_is_refused(tmp_path: Path) -> None:
    done = run("builtin:pi-1", "builtin:pi-1", "--patch", "--format", "markdown", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_scenarios_bring_caller_sections_and_hidden_tools(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text(
        "cwd: /w\ntools: [read, bash]\nhidden_tools: [read]\nsections: {todo: Ship it., cwd: elsewhere}\n", encoding="utf-8")
    (tmp_path / "new.yaml").write_text(OVERLAY, encoding="utf-8")
    done = run("builtin:pi-1", "new.yaml", "--patch", "--format", "json", "--scenario", "s.yaml", cwd=tmp_path)
    [scenario] = json.loads(done.stdout)
    assert scenario["patch"] == {"docs": None}  # the caller's cwd replaces both profiles' cwd section
    assert "<todo>\nShip it.\n</todo>" in scenario["replayed_prompt"] and "- read:" not in scenario["replayed_prompt"]
