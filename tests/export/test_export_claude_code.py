"""`pipeline export claude-code` on the file system: files, settings merge, report, --check, --user-dir."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.cli import main

from .profiles import TEAM, replacing

AGENT = ".claude/agents/context-pipeline.md"
SETTINGS = ".claude/settings.json"
INSTRUCTIONS = ".claude/context-pipeline/compact-instructions.md"
RULES = ".claude/rules/context-pipeline.md"
def export(project: Path, *args: str) -> int:
    return main(["export", "claude-code", *args, "--project", str(project)])


def report(project: Path, capsys, *args: str) -> dict:
    capsys.readouterr()
    assert export(project, *args, "--dry-run", "--format", "json") == 0
    return {c["key"]: c for c in json.loads(capsys.readouterr().out)["report"]}


def test_the_default_keeps_claude_codes_prompt_and_writes_the_teams_sections_to_a_rules_file(tmp_path, capsys):
    assert export(tmp_path) == 0  # builtin:default: every section is pi's own prompt, nothing to write of it
    assert not (tmp_path / AGENT).exists() and not (tmp_path / RULES).exists()
    assert "agent" not in json.loads((tmp_path / SETTINGS).read_text())
    carried = report(tmp_path, capsys)
    assert carried["system_prompt"]["how"] == "own"
    assert {carried[f"system_prompt.sections.{s}"]["how"] for s in ("identity", "tools", "rules", "cwd")} == {"own"}
    team = tmp_path / "team.yaml"
    team.write_text(TEAM)
    project = tmp_path / "proj"
    project.mkdir()
    (project / "CLAUDE.md").write_text("mine\n")
    assert export(project, str(team)) == 0
    assert (project / RULES).read_text() == "Prefer short functions.\n"
    assert (project / "CLAUDE.md").read_text() == "mine\n"
    carried = report(project, capsys, str(team))
    assert carried["system_prompt.sections.house"] == {"key": "system_prompt.sections.house", "how": "native",
                                                        "where": RULES}
    assert export(project, "default") == 0  # back to builtin:default (named): the rules file goes
    assert not (project / RULES).exists()


def test_writes_the_agent_the_settings_and_a_manifest(tmp_path):
    from pipeline import compile_profile

    assert export(tmp_path, replacing(tmp_path)) == 0
    manifest = json.loads((tmp_path / ".claude/context-pipeline-export.json").read_text())
    assert set(manifest["files"]) == {AGENT, INSTRUCTIONS}
    settings = json.loads((tmp_path / SETTINGS).read_text())
    assert settings["agent"] == "context-pipeline"
    hook = settings["hooks"]["PreCompact"][0]["hooks"][0]
    assert hook == {"type": "command", "command": f'cat "$CLAUDE_PROJECT_DIR/{INSTRUCTIONS}"'}
    profile = compile_profile("default").profile
    agent = (tmp_path / AGENT).read_text()
    assert agent.startswith(f"---\nname: context-pipeline\ndescription: {json.dumps(profile.description)}\n---\n")
    assert profile.system_prompt.sections[1].text.render() in agent  # identity
    assert "Working directory" not in agent  # the cwd section is lost
    assert not (tmp_path / "CLAUDE.md").exists()  # CLAUDE.md stays the user's


def test_the_report_names_every_section_and_the_compaction_settings(tmp_path, capsys):
    from pipeline import compile_profile

    carried = report(tmp_path, capsys, replacing(tmp_path))
    for section in compile_profile("default").profile.system_prompt.sections:
        assert f"system_prompt.sections.{section.id}" in carried
    assert carried["system_prompt.sections.cwd"]["how"] == "lost"
    assert carried["system_prompt.sections.project_context"]["how"] == "lost"
    # pi's own sections in place of Claude Code's prompt: written for pi's tools, not Claude Code's
    assert carried["system_prompt.sections.rules"]["how"] == "mismatch"
    assert "read, bash, edit, write" in carried["system_prompt.sections.rules"]["where"]
    assert carried["summary.instructions.initial"]["how"] == "extension"
    for key in ("compaction.reserve_tokens", "compaction.keep_recent_tokens", "summary.system_prompt", "retry"):
        assert carried[key]["how"] == "lost" and carried[key]["why"], key


def test_a_trigger_and_model_overrides_are_reported_lost(tmp_path, capsys):
    profile = tmp_path / "p.yaml"
    profile.write_text("extends: builtin:default\nname: p\ncompaction:\n  trigger: {percent_of_window: 60}\n"
                       "  model_overrides:\n    loop/m: {reserve_tokens: 1000}\n")
    carried = report(tmp_path, capsys, str(profile))
    assert carried["compaction.trigger"]["how"] == "lost"
    assert carried["compaction.model_overrides.loop/m"]["how"] == "lost"


def test_settings_keep_the_users_keys_and_refuse_to_overwrite_theirs(tmp_path, capsys):
    (tmp_path / ".claude").mkdir()
    (tmp_path / SETTINGS).write_text(json.dumps({"model": "sonnet", "agent": "mine"}))
    profile = replacing(tmp_path)
    assert export(tmp_path, profile) == 1
    assert "key agent is set in the file" in capsys.readouterr().err
    assert export(tmp_path, profile, "--force") == 0
    data = json.loads((tmp_path / SETTINGS).read_text())
    assert data["model"] == "sonnet" and data["agent"] == "context-pipeline"
    assert export(tmp_path, profile) == 0


def test_check_passes_after_an_export_with_the_losses_allowed(tmp_path, capsys):
    allowed = ["--allow-loss", "system_prompt.sections", "compaction", "retry", "summary"]
    profile = replacing(tmp_path)
    assert export(tmp_path, profile, "--check", *allowed) == 1  # drift: nothing exported yet
    assert export(tmp_path, profile) == 0
    assert export(tmp_path, profile, "--check", *allowed) == 0
    assert export(tmp_path, profile, "--check", "--allow-loss", "compaction", "retry", "summary",
                  "system_prompt.sections.custom", "system_prompt.sections.append",
                  "system_prompt.sections.project_context", "system_prompt.sections.skills",
                  "system_prompt.sections.cwd") == 1
    assert "system_prompt.sections.rules does not match the agent's tools" in capsys.readouterr().err
    (tmp_path / AGENT).write_text("edited\n")
    assert export(tmp_path, profile, "--check", *allowed) == 1


def test_templates_become_commands_or_are_reported_lost(tmp_path, capsys):
    prompts = tmp_path / "prof" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "fix.md").write_text("Fix $1 then $2, all: $@\n")
    (prompts / "slice.md").write_text("Rest: ${@:2}\n")
    profile = tmp_path / "prof" / "p.yaml"
    profile.write_text("extends: builtin:default\nname: p\ntemplates:\n  sources: [project, global, prompts]\n")
    project = tmp_path / "proj"
    project.mkdir()
    carried = report(project, capsys, str(profile))
    assert carried["templates.fix"]["how"] == "native" and "note" in carried["templates.fix"]["where"]
    assert carried["templates.slice"]["how"] == "lost" and "slice" in carried["templates.slice"]["why"]
    assert export(project, str(profile)) == 0
    assert "Fix $ARGUMENTS[0] then $ARGUMENTS[1], all: $ARGUMENTS" in (project / ".claude/commands/fix.md").read_text()
    assert not (project / ".claude/commands/slice.md").exists()
    (prompts / "fix.md").unlink()
    assert export(project, str(profile)) == 0
    assert not (project / ".claude/commands/fix.md").exists()  # the profile no longer produces it


def test_compaction_off_and_mask_tool_results(tmp_path, capsys):
    profile = tmp_path / "p.yaml"
    profile.write_text("extends: builtin:default\nname: p\ncompaction:\n  enabled: false\n"
                       "  strategy: mask_tool_results\n")
    project = tmp_path / "proj"
    project.mkdir()
    carried = report(project, capsys, str(profile))
    assert carried["compaction.strategy"]["how"] == "lost"
    assert "summary.instructions.initial" not in carried
    assert export(project, str(profile)) == 0
    data = json.loads((project / SETTINGS).read_text())
    assert data["env"] == {"DISABLE_AUTO_COMPACT": "1"} and "hooks" not in data


def test_user_dir_is_laid_out_as_the_claude_folder(tmp_path):
    home = tmp_path / "dot-claude"
    home.mkdir()
    assert main(["export", "claude-code", replacing(tmp_path), "--user-dir", str(home)]) == 0
    assert (home / "agents/context-pipeline.md").is_file()
    assert (home / "context-pipeline-export.json").is_file()
    command = json.loads((home / "settings.json").read_text())["hooks"]["PreCompact"][0]["hooks"][0]["command"]
    assert command == f"cat {home}/context-pipeline/compact-instructions.md"
