"""`pipeline export opencode` on the file system: opencode.json merged key by key, the prompt
file, the plugin and its data, commands, the loss report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.cli import main

from .profiles import TEAM, replacing

PROMPT = ".opencode/context-pipeline/prompt.md"
DATA = ".opencode/context-pipeline/plugin.json"
PLUGIN = ".opencode/plugin/context-pipeline.js"
INSTRUCTIONS = ".opencode/context-pipeline/instructions.md"


def export(project: Path, *args: str) -> int:
    return main(["export", "opencode", *args, "--project", str(project)])


def report(project: Path, capsys, *args: str) -> dict:
    capsys.readouterr()
    assert export(project, *args, "--format", "json", "--dry-run") == 0
    return {c["key"]: c for c in json.loads(capsys.readouterr().out)["report"]}


def test_the_default_keeps_opencodes_prompt_and_the_team_gets_an_instructions_file(tmp_path, capsys):
    assert export(tmp_path) == 0
    config = json.loads((tmp_path / "opencode.json").read_text())
    assert "build" not in config["agent"] and "instructions" not in config and not (tmp_path / PROMPT).exists()
    (tmp_path / "team.yaml").write_text(TEAM)
    assert export(tmp_path, str(tmp_path / "team.yaml")) == 0
    config = json.loads((tmp_path / "opencode.json").read_text())
    assert config["instructions"] == [INSTRUCTIONS]
    assert (tmp_path / INSTRUCTIONS).read_text() == "Prefer short functions.\n\nBuild in ${cwd}.\n"
    assert json.loads((tmp_path / DATA).read_text())["cwd_marker"] == "${cwd}"
    got = report(tmp_path, capsys, str(tmp_path / "team.yaml"))
    assert got["system_prompt.sections.identity"]["how"] == "own"
    assert got["system_prompt.sections.house"]["how"] == "native"
    assert got["system_prompt.sections.where"]["how"] == "extension"  # the plugin writes the directory


def test_writes_the_prompt_the_plugin_and_the_config_keys(tmp_path):
    assert export(tmp_path, replacing(tmp_path)) == 0
    config = json.loads((tmp_path / "opencode.json").read_text())
    assert config["agent"]["build"]["prompt"] == "{file:./" + PROMPT + "}"
    assert config["agent"]["compaction"]["prompt"].startswith("Your only job is to condense")
    assert config["compaction"] == {"auto": True, "reserved": 16384, "preserve_recent_tokens": 20000}
    text = (tmp_path / PROMPT).read_text()
    assert text.startswith("You are a careful software engineer") and text.endswith("Working directory: ${cwd}\n")
    data = json.loads((tmp_path / DATA).read_text())
    assert data["cwd_marker"] == "${cwd}" and "## Goal" in data["compaction_prompt"]
    assert "experimental.session.compacting" in (tmp_path / PLUGIN).read_text()
    manifest = json.loads((tmp_path / ".opencode/context-pipeline-export.json").read_text())
    assert set(manifest["files"]) == {PROMPT, DATA, PLUGIN}


def test_the_users_opencode_json_keeps_its_keys_and_a_key_of_theirs_is_a_conflict(tmp_path, capsys):
    users = {"$schema": "https://opencode.ai/config.json", "model": "loop/m",
             "agent": {"build": {"prompt": "mine", "temperature": 0.2}}}
    (tmp_path / "opencode.json").write_text(json.dumps(users))
    profile = replacing(tmp_path)
    assert export(tmp_path, profile) == 1
    assert "key agent.build.prompt is set in the file, not by this export" in capsys.readouterr().err
    assert export(tmp_path, profile, "--force") == 0
    config = json.loads((tmp_path / "opencode.json").read_text())
    assert config["$schema"] == users["$schema"] and config["model"] == "loop/m"
    assert config["agent"]["build"] == {"prompt": "{file:./" + PROMPT + "}", "temperature": 0.2}
    assert export(tmp_path, profile, "--check", "--allow-loss", "system_prompt", "compaction", "summary",
                  "retry") == 0


def test_templates_become_commands_or_are_reported_lost(tmp_path, capsys):
    prompts = tmp_path / "profile" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "inspect.md").write_text("---\ndescription: Inspect\n---\nLook over $1, then $@.\n")
    (prompts / "tail.md").write_text("---\ndescription: Tail\n---\nThe rest: ${@:2}\n")
    profile = tmp_path / "profile" / "team.yaml"
    profile.write_text("extends: builtin:default\nname: team\ntemplates:\n  sources: [project, global, prompts]\n")
    project = tmp_path / "project"
    project.mkdir()
    got = report(project, capsys, str(profile))
    assert got["templates.inspect"]["how"] == "native"
    assert got["templates.tail"]["how"] == "lost" and "slice" in got["templates.tail"]["why"]
    assert export(project, str(profile)) == 0
    assert (project / ".opencode/command/inspect.md").read_text().endswith("Look over $1, then $ARGUMENTS.\n")
    assert not (project / ".opencode/command/tail.md").exists()


def test_the_report_names_every_section(tmp_path, capsys):
    got = report(tmp_path, capsys, replacing(tmp_path))
    assert got["system_prompt.sections.identity"]["how"] == "mismatch"
    assert got["system_prompt.sections.cwd"]["how"] == "extension"
    assert got["system_prompt.sections.project_context"]["how"] == "lost"
    assert got["summary.instructions.initial"]["how"] == "extension"
    assert got["summary.system_prompt"]["how"] == "native"
    for key in ("summary.instructions.update", "summary.validity", "retry", "compaction.branch.reserve_tokens"):
        assert got[key]["how"] == "lost", key


@pytest.mark.parametrize("extra, key, how", [
    ("  trigger: {percent_of_window: 80}\n", "compaction.trigger", "lost"),
    ("  trigger: {reserve_tokens: 3000}\n", "compaction.trigger", "native"),
    ("  enabled: false\n", "compaction.enabled", "native"),
    ("  strategy: mask_tool_results\n", "compaction.strategy", "native"),
    ("  strategy: hybrid\n", "compaction.strategy", "lost"),
])
def test_compaction_settings(tmp_path, capsys, extra, key, how):
    (tmp_path / "p.yaml").write_text(f"extends: builtin:default\nname: p\ncompaction:\n{extra}")
    assert report(tmp_path, capsys, str(tmp_path / "p.yaml"))[key]["how"] == how
    assert export(tmp_path, str(tmp_path / "p.yaml")) == 0
    comp = json.loads((tmp_path / "opencode.json").read_text())["compaction"]
    if "reserve_tokens: 3000" in extra:
        assert comp["reserved"] == 3000
    if "percent" in extra:
        assert "reserved" not in comp
    assert comp["auto"] is ("enabled" not in extra)
    assert comp.get("prune") is (True if "mask" in extra else None)


def test_user_dir_is_laid_out_as_opencodes_config_folder(tmp_path):
    assert main(["export", "opencode", replacing(tmp_path), "--user-dir", str(tmp_path)]) == 0
    config = json.loads((tmp_path / "opencode.json").read_text())
    assert config["agent"]["build"]["prompt"] == "{file:./context-pipeline/prompt.md}"
    for path in ("context-pipeline/prompt.md", "context-pipeline/plugin.json", "plugin/context-pipeline.js",
                 "context-pipeline-export.json"):
        assert (tmp_path / path).is_file(), path
