"""`pipeline export copilot`: the file GitHub Copilot CLI 1.0.102 reads (tests/agents/test_export_copilot.py
runs the real CLI on it)."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.cli import main

from .profiles import TEAM, dry_report, replacing, run_export

FILE = ".github/instructions/context-pipeline.instructions.md"


def export(project: Path, *args: str) -> int:
    return run_export("copilot", project, *args)


def report(project: Path, capsys, *args: str) -> dict:
    return dry_report("copilot", project, capsys, *args)


def test_the_team_sections_are_an_owned_instructions_file(tmp_path, capsys):
    (tmp_path / "team.yaml").write_text(TEAM)
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github/copilot-instructions.md").write_text("ours\n")
    assert export(tmp_path, str(tmp_path / "team.yaml")) == 0
    assert (tmp_path / FILE).read_text() == "Prefer short functions.\n"
    assert (tmp_path / ".github/copilot-instructions.md").read_text() == "ours\n"  # the user's file stays
    manifest = json.loads((tmp_path / ".github/context-pipeline-export.json").read_text())
    assert manifest["target"] == "copilot" and list(manifest["files"]) == [FILE]
    got = report(tmp_path, capsys, str(tmp_path / "team.yaml"))
    assert got["system_prompt"]["how"] == "own" and got["system_prompt.sections.house"]["how"] == "native"
    assert got["system_prompt.sections.where"]["how"] == "lost"  # ${cwd}
    assert "system_prompt.base" not in got
    assert export(tmp_path, "default") == 0 and not (tmp_path / FILE).exists()  # no team section: the file goes


def test_an_edited_file_is_a_conflict(tmp_path, capsys):
    (tmp_path / "team.yaml").write_text(TEAM)
    assert export(tmp_path, str(tmp_path / "team.yaml")) == 0
    (tmp_path / FILE).write_text("mine\n")
    capsys.readouterr()
    assert export(tmp_path, str(tmp_path / "team.yaml")) == 1
    err = capsys.readouterr().err
    assert FILE in err and "mine" not in err
    assert (tmp_path / FILE).read_text() == "mine\n"


def test_what_copilot_cannot_receive(tmp_path, capsys):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts/recap.md").write_text("Recap $@\n")
    profile = tmp_path / "t.yaml"
    profile.write_text(TEAM + "templates:\n  sources: [project, ./prompts]\n")
    project = tmp_path / "proj"
    project.mkdir()
    got = report(project, capsys, str(profile))
    assert got["templates.recap"]["how"] == "lost" and "as typed" in got["templates.recap"]["why"]
    for key in ("compaction", "summary", "summarizer", "retry"):
        assert got[key]["how"] == "lost" and got[key]["why"], key
    got = report(project, capsys, replacing(tmp_path))
    assert got["system_prompt.base"]["how"] == "lost"
    assert got["system_prompt.sections.identity"]["how"] == "own"  # pi's prompt is not written for Copilot
    assert export(project, str(profile)) == 0
    assert not (project / ".github/skills").exists() and not list(project.glob(".github/**/recap*"))


def test_user_dir_is_copilot_home(tmp_path):
    home = tmp_path / "dot-copilot"
    home.mkdir()
    (tmp_path / "team.yaml").write_text(TEAM)
    assert main(["export", "copilot", str(tmp_path / "team.yaml"), "--user-dir", str(home)]) == 0
    assert (home / "instructions/context-pipeline.instructions.md").read_text() == "Prefer short functions.\n"
    assert (home / "context-pipeline-export.json").is_file()
