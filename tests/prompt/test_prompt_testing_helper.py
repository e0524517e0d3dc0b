"""``pipeline.testing`` in a team's own repository: a real pytest run on a temporary project."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from prompt_fstree import build_tree

TEAM_TEST = '''
import pytest

from pipeline.testing import render_scenario, snapshot_cases
from pipeline.testing.plugin import text_snapshot  # noqa: F401


@pytest.mark.parametrize(("profile", "scenario"), snapshot_cases(["profiles/*.yaml"], "scenarios/*.yaml"))
def test_prompt(profile, scenario, text_snapshot):
    assert render_scenario(profile, scenario) == text_snapshot
'''


def run_pytest(project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", *args, "tests"],
        cwd=project, capture_output=True, text=True,
    )


def test_team_snapshots_written_checked_and_broken(tmp_path: Path) -> None:
    build_tree(tmp_path, {"files": {
        "profiles/team.yaml": "extends: builtin:default\nname: team\nsystem_prompt:\n  default_tools: [read]\n",
        "scenarios/a.yaml": "cwd: /srv/a\n",
        "scenarios/b.yaml": "cwd: C:\\b\ncustom_prompt: Team prompt.\r\n",
        "tests/test_prompts.py": TEAM_TEST,
    }})
    first = run_pytest(tmp_path, "--snapshot-update")
    assert first.returncode == 0, first.stdout + first.stderr
    snaps = sorted((tmp_path / "tests" / "__snapshots__" / "test_prompts").iterdir())
    assert [p.name for p in snaps] == ["test_prompt[team-a].txt", "test_prompt[team-b].txt"]
    assert snaps[1].read_bytes() == b"Team prompt.\nWorking directory: C:/b"

    profile = tmp_path / "profiles" / "team.yaml"
    profile.write_text(profile.read_text() + "  tools:\n    read: {snippet: Changed}\n", encoding="utf-8")
    broken = run_pytest(tmp_path)
    assert broken.returncode == 1
    assert "1 failed, 1 passed" in broken.stdout and "Changed" in broken.stdout  # b (custom prompt) still matches


def test_patterns_matching_nothing_fail_loudly(tmp_path: Path) -> None:
    """A wrong glob (or pytest started elsewhere) is a collection error, not an empty, skipped test."""
    build_tree(tmp_path, {"files": {"scenarios/a.yaml": "cwd: /srv/a\n", "tests/test_prompts.py": TEAM_TEST}})
    done = run_pytest(tmp_path)
    assert done.returncode != 0 and "skipped" not in done.stdout
    assert "no profile file matches profiles/*.yaml" in done.stdout
