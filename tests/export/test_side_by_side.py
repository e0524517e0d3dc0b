"""Exports live side by side (issue 29, point 5), end to end through `python -m pipeline` in tmp projects.

The pi export copies the profile's templates into `.pi/prompts/`, which is also the profile's own
`project` source. The copies (listed with their digest in `.pi/context-pipeline-export.json`) must not be
read back as sources: `validate --strict` stays quiet, a second export is no change whatever the order of
`templates.sources`, another target's export neither loses the template nor deletes its own commands,
and every template the profile sees is a line of every target's report.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TARGETS = ("pi", "claude-code", "codex", "opencode", "gemini")
REVIEW = "---\ndescription: Review a change\n---\nReview $1 carefully.\n"


def run(project: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(project.parent / "home"), "PI_CODING_AGENT_DIR": str(project.parent / "agent"),
           "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=project, env=env, capture_output=True,
                          text=True, timeout=120)


def export(project: Path, target: str, *flags: str) -> dict:
    done = run(project, "export", target, "profiles/team.yaml", "--format", "json", *flags)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout)


def changed(result: dict) -> list[tuple[str, str]]:
    return [(c["path"], c["action"]) for c in result["changes"] if c["action"] != "unchanged"]


def templates(result: dict) -> dict[str, dict]:
    return {r["key"]: r for r in result["report"] if r["key"].startswith("templates.")}


def make_project(tmp_path: Path, sources: str) -> Path:
    project = tmp_path / "project"
    (project / "profiles" / "templates").mkdir(parents=True)
    (project / "profiles" / "templates" / "review.md").write_text(REVIEW)
    (project / "profiles" / "team.yaml").write_text(
        f"extends: builtin:default\nname: team\ntemplates:\n  sources: {sources}\n")
    return project


def validate(project: Path) -> subprocess.CompletedProcess:
    return run(project, "validate", "--strict", "--project", ".", "profiles/team.yaml")


ORDERS = {"project first": "[project, ./templates]", "project last": "[./templates, project]"}


@pytest.mark.parametrize("sources", list(ORDERS.values()), ids=list(ORDERS))
def test_validate_strict_is_quiet_about_the_pi_exports_copies(tmp_path, sources):
    project = make_project(tmp_path, sources)
    assert (".pi/prompts/review.md", "create") in changed(export(project, "pi"))
    done = validate(project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "collision" not in done.stdout + done.stderr


@pytest.mark.parametrize("sources", list(ORDERS.values()), ids=list(ORDERS))
def test_a_second_export_is_no_change_whatever_the_order_of_the_sources(tmp_path, sources):
    project = make_project(tmp_path, sources)
    export(project, "pi")
    for _ in range(2):
        again = export(project, "pi")
        assert changed(again) == []
        assert templates(again)["templates.review"]["how"] == "native"
    assert (project / ".pi/prompts/review.md").read_text() == REVIEW
    done = run(project, "export", "pi", "profiles/team.yaml", "--check", "--allow-loss", "summary")
    assert done.returncode == 0, done.stderr


def test_an_edited_copy_is_the_users_again(tmp_path):
    project = make_project(tmp_path, ORDERS["project first"])
    export(project, "pi")
    (project / ".pi/prompts/review.md").write_text("Review $1 in depth.\n")
    done = validate(project)
    assert done.returncode == 1  # the edited copy is read again: it shadows the profile's template
    assert 'name "/review" collision' in done.stdout + done.stderr
    redo = run(project, "export", "pi", "profiles/team.yaml")
    assert redo.returncode == 1 and "edited since" in redo.stderr
    assert (project / ".pi/prompts/review.md").read_text() == "Review $1 in depth.\n"


def test_a_damaged_manifest_recognises_nothing_and_is_no_traceback(tmp_path):
    project = make_project(tmp_path, ORDERS["project first"])
    export(project, "pi")
    (project / ".pi/context-pipeline-export.json").write_text("[" * 100_000)
    done = validate(project)
    assert "Traceback" not in done.stderr
    assert 'name "/review" collision' in done.stdout + done.stderr  # without a manifest the copy is a file like any


def test_the_issues_case_pi_then_claude_code_keeps_the_commands(tmp_path):
    project = make_project(tmp_path, ORDERS["project first"])
    assert (".claude/commands/review.md", "create") in changed(export(project, "claude-code"))
    export(project, "pi")
    after = export(project, "claude-code")
    assert changed(after) == []
    review = templates(after)["templates.review"]
    assert review["how"] == "native" and review["where"].startswith(".claude/commands/review.md")
    assert (project / ".claude/commands/review.md").is_file()


def test_exports_of_every_target_live_side_by_side(tmp_path):
    """All nine targets (the newer ones too: Qwen Code, Kilo, Copilot, AGENTS.md) exported into one
    project: none changes or deletes another's files, and the user's own files stay."""
    from pipeline.export import TARGETS as ALL

    project = make_project(tmp_path, ORDERS["project last"])
    with (project / "profiles" / "team.yaml").open("a") as profile:  # a team section: the block targets write it
        profile.write("system_prompt:\n  sections:\n    - {id: team, after: rules, text: Every change is reviewed.}\n")
    (project / ".pi/prompts").mkdir(parents=True)
    (project / ".pi/prompts/fix.md").write_text("Fix these: $@\n")
    (project / ".github/workflows").mkdir(parents=True)
    (project / ".github/workflows/ci.yml").write_text("on: push\n")
    (project / "AGENTS.md").write_text("# ours\n")
    for target in ALL:
        export(project, target)
    for target in ALL:
        assert changed(export(project, target)) == [], target
    assert (project / ".github/workflows/ci.yml").read_text() == "on: push\n"
    assert (project / "AGENTS.md").read_text().startswith("# ours\n")
    assert "Every change is reviewed." in (project / "AGENTS.md").read_text()
    assert "Every change is reviewed." in (project / "GEMINI.md").read_text()
    manifests = list(project.glob(".*/context-pipeline-export.json"))
    assert len(manifests) == len(ALL) == 9
    for manifest in manifests:
        for rel, recorded in json.loads(manifest.read_text())["files"].items():
            assert hashlib.sha256((project / rel).read_bytes()).hexdigest() == recorded, rel


def test_every_template_the_profile_sees_is_in_every_report(tmp_path):
    project = make_project(tmp_path, "[project, ./templates, global]")
    (project / ".pi/prompts").mkdir(parents=True)
    (project / ".pi/prompts/fix.md").write_text("Fix these: $@\n")  # the project's own pi template
    (tmp_path / "agent" / "prompts").mkdir(parents=True)
    (tmp_path / "agent" / "prompts" / "mine.md").write_text("My own $1.\n")  # a user-level template
    reports = {t: templates(export(project, t, "--dry-run")) for t in TARGETS}
    for target, rows in reports.items():
        assert set(rows) == {"templates.fix", "templates.review", "templates.mine"}, target
        assert all(r.get("why") if r["how"] == "lost" else r.get("where") for r in rows.values()), target
    pi = reports["pi"]
    assert pi["templates.fix"]["how"] == "native" and pi["templates.fix"]["where"].startswith(".pi/prompts/fix.md ")
    assert pi["templates.mine"]["how"] == "native"  # pi reads its user folder itself
    assert pi["templates.review"] == {"key": "templates.review", "how": "native", "where": ".pi/prompts/review.md"}
    for target, folder in (("claude-code", ".claude/commands"), ("opencode", ".opencode/command")):
        assert reports[target]["templates.fix"]["where"].startswith(f"{folder}/fix.md"), target
        assert reports[target]["templates.mine"]["how"] == "lost"
        assert "user's own folder" in reports[target]["templates.mine"]["why"]
    assert reports["gemini"]["templates.fix"]["where"].startswith(".gemini/commands/fix.toml")
    assert {r["how"] for r in reports["codex"].values()} == {"lost"}
    export(project, "claude-code")
    assert (project / ".claude/commands/fix.md").is_file() and not (project / ".claude/commands/mine.md").exists()


def test_a_copy_whose_template_is_gone_is_reported_lost_and_removed(tmp_path):
    project = make_project(tmp_path, ORDERS["project first"])
    export(project, "pi")
    export(project, "claude-code")
    (project / "profiles/templates/review.md").unlink()
    claude = export(project, "claude-code")
    assert templates(claude)["templates.review"]["how"] == "lost"
    assert "no longer has" in templates(claude)["templates.review"]["why"]
    assert (".claude/commands/review.md", "delete") in changed(claude)
    pi = export(project, "pi")
    assert (".pi/prompts/review.md", "delete") in changed(pi)
    assert templates(pi)["templates.review"]["how"] == "lost"
    assert templates(export(project, "pi")) == {}


def test_a_dialect_source_does_not_read_back_its_targets_commands(tmp_path):
    """`claude-code` as a source reads .claude/commands, the folder the Claude Code export writes."""
    project = make_project(tmp_path, "[claude-code, ./templates]")
    export(project, "claude-code")
    again = export(project, "claude-code")
    assert changed(again) == []
    assert templates(again)["templates.review"]["where"].startswith(".claude/commands/review.md")
    done = validate(project)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("target", TARGETS)
def test_no_export_writes_what_the_profiles_discovery_reads(tmp_path, target):
    """Context files, skills and prompt files an export wrote would be read back as the profile's inputs;
    none of the five targets writes one (for a profile with a template)."""
    from pipeline.prompt.discover import discover

    project = make_project(tmp_path, "[project, ./templates]")
    (project / "profiles/templates/recap.md").write_text("Recap this: $ARGUMENTS\n")  # a form every target has
    (project / ".git").mkdir()
    export(project, target)
    manifest = next(project.glob(".*/context-pipeline-export.json"))
    data = json.loads(manifest.read_text())
    written = {os.path.realpath(project / rel) for part in ("files", "shared", "blocks") for rel in data.get(part, {})}
    found = discover(str(project), str(tmp_path / "agent"))
    read = {os.path.realpath(f.path) for f in found.context_files}
    read |= {os.path.realpath(s.file_path) for s in found.skills}
    assert written  # something to compare (gemini writes its command file for recap)
    assert not read & written
    assert not {os.path.realpath(project / ".pi" / n) for n in ("SYSTEM.md", "APPEND_SYSTEM.md")} & written
