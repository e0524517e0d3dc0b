"""`pipeline export qwen-code`: the files Qwen Code 0.24.4 reads (tests/agents/test_export_qwen_code.py
runs the real CLI on them)."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.cli import main
from pipeline.compiler import compile_profile
from pipeline.export.static_prompt import summary_instructions

from .profiles import TEAM, dry_report, replacing, run_export

BLOCK = "<!-- context-pipeline: begin -->\nPrefer short functions.\n<!-- context-pipeline: end -->\n"


def export(project: Path, *args: str) -> int:
    return run_export("qwen-code", project, *args)


def report(project: Path, capsys, *args: str) -> dict:
    return dry_report("qwen-code", project, capsys, *args)


def test_the_team_gets_a_block_of_qwen_md_and_qwens_prompt_stays(tmp_path, capsys):
    assert export(tmp_path) == 0
    assert not (tmp_path / "QWEN.md").exists() and not (tmp_path / ".qwen/system.md").exists()
    (tmp_path / "team.yaml").write_text(TEAM)
    (tmp_path / "QWEN.md").write_text("# Ours\nUse tabs.\n")
    assert export(tmp_path, str(tmp_path / "team.yaml")) == 0
    assert (tmp_path / "QWEN.md").read_text() == "# Ours\nUse tabs.\n\n" + BLOCK
    got = report(tmp_path, capsys, str(tmp_path / "team.yaml"))
    assert got["system_prompt"]["how"] == "own"
    assert got["system_prompt.sections.house"]["how"] == "native"
    assert got["system_prompt.sections.where"]["how"] == "lost"  # it holds ${cwd}
    text = (tmp_path / "QWEN.md").read_text()
    (tmp_path / "QWEN.md").write_text(text.replace("Prefer short", "Prefer long"))
    assert export(tmp_path, str(tmp_path / "team.yaml")) == 1  # the user edited the export's block
    assert "marked block was edited" in capsys.readouterr().err
    assert (tmp_path / "QWEN.md").read_text() == text.replace("Prefer short", "Prefer long")


def test_base_profile_writes_system_md_and_the_env_file(tmp_path):
    assert export(tmp_path, replacing(tmp_path)) == 0
    manifest = json.loads((tmp_path / ".qwen/context-pipeline-export.json").read_text())
    assert manifest["target"] == "qwen-code" and set(manifest["files"]) == {".qwen/system.md", ".qwen/.env",
                                                                             ".qwen/context-pipeline/precompact.json"}
    assert (tmp_path / ".qwen/.env").read_text() == "QWEN_SYSTEM_MD=true\n"
    system = (tmp_path / ".qwen/system.md").read_text()
    assert compile_profile("default").profile.system_prompt.sections[1].text.render() in system
    assert not (tmp_path / "QWEN.md").exists()
    assert list(json.loads((tmp_path / ".qwen/settings.json").read_text())) == ["hooks"]  # the PreCompact hook alone


def test_a_users_env_file_is_a_conflict(tmp_path, capsys):
    (tmp_path / ".qwen").mkdir()
    (tmp_path / ".qwen/.env").write_text("OPENAI_API_KEY=sk-mine\n")
    assert export(tmp_path, replacing(tmp_path)) == 1
    err = capsys.readouterr().err
    assert ".env" in err and "sk-mine" not in err
    assert (tmp_path / ".qwen/.env").read_text() == "OPENAI_API_KEY=sk-mine\n"


def test_user_dir_names_system_md_by_its_path(tmp_path):
    home = tmp_path / "dot-qwen"
    home.mkdir()
    assert main(["export", "qwen-code", replacing(tmp_path), "--user-dir", str(home)]) == 0
    assert (home / ".env").read_text() == f"QWEN_SYSTEM_MD={home}/system.md\n"
    assert (home / "context-pipeline-export.json").is_file()


def test_a_share_of_window_trigger_is_the_auto_compact_threshold_merged(tmp_path, capsys):
    profile = tmp_path / "p.yaml"
    profile.write_text("extends: builtin:default\nname: p\ncompaction:\n  trigger: {percent_of_window: 30}\n")
    project = tmp_path / "proj"
    (project / ".qwen").mkdir(parents=True)
    (project / ".qwen/settings.json").write_text(json.dumps({"ui": {"theme": "x"}, "context": {"fileName": "A.md"}}))
    carried = report(project, capsys, str(profile))
    assert carried["compaction.trigger"]["how"] == "native"
    assert "context.autoCompactThreshold" in carried["compaction.trigger"]["where"]
    assert export(project, str(profile)) == 0
    data = json.loads((project / ".qwen/settings.json").read_text())
    hooks = data.pop("hooks")  # the export's PreCompact hook (test_the_precompact_hook_...)
    assert list(hooks) == ["PreCompact"]
    assert data == {"ui": {"theme": "x"}, "context": {"fileName": "A.md", "autoCompactThreshold": 0.3}}
    profile.write_text("extends: builtin:default\nname: p\ncompaction:\n  trigger: {tokens: 9000}\n")
    assert report(project, capsys, str(profile))["compaction.trigger"]["how"] == "lost"
    assert export(project, str(profile)) == 0  # the key goes, the user's keys stay
    data = json.loads((project / ".qwen/settings.json").read_text())
    assert data.pop("hooks") == hooks and data == {"ui": {"theme": "x"}, "context": {"fileName": "A.md"}}


def test_templates_in_qwens_dialect_and_what_it_cannot_say(tmp_path, capsys):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts/recap.md").write_text("---\ndescription: Recap\n---\nRecap: $@ (end)\n")
    (tmp_path / "prompts/pos.md").write_text("First $1 then ${@:2}\n")
    (tmp_path / "prompts/shell.md").write_text("Run !{ls} on $@\n")
    profile = tmp_path / "t.yaml"
    profile.write_text("extends: builtin:default\nname: t\ntemplates:\n  sources: [project, ./prompts]\n")
    project = tmp_path / "proj"
    project.mkdir()
    got = report(project, capsys, str(profile))
    assert got["templates.recap"]["how"] == "native" and "{{args}}" in got["templates.recap"]["where"]
    assert got["templates.pos"]["how"] == "lost" and "Qwen Code has no positional" in got["templates.pos"]["why"]
    assert got["templates.shell"]["how"] == "lost" and "Qwen Code" in got["templates.shell"]["why"]
    assert "Gemini" not in json.dumps(got)
    assert export(project, str(profile)) == 0
    assert (project / ".qwen/commands/recap.toml").read_text() == (
        "description = \"Recap\"\nprompt = '''\nRecap: {{args}} (end)'''\n")
    assert not (project / ".qwen/commands/pos.toml").exists()


def test_the_report_names_the_losses_and_check_accepts_them(tmp_path, capsys):
    got = report(tmp_path, capsys)
    for key in ("summary.system_prompt", "summary.instructions.update", "compaction.keep_recent_tokens",
                "compaction.reserve_tokens", "retry", "system_prompt.sections.skills"):
        assert got[key]["how"] == "lost" and got[key]["why"], key
    assert export(tmp_path) == 0
    assert export(tmp_path, "--check") == 1
    assert export(tmp_path, "--check", "--allow-loss", "system_prompt.sections", "compaction", "retry",
                  "summary") == 0


def test_import_reads_the_export_back_and_without_one_is_a_located_error(tmp_path, capsys):
    assert main(["import", "qwen-code", "--project", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"{tmp_path}/.qwen/context-pipeline-export.json" in err and "pipeline export qwen-code" in err
    (tmp_path / "team.yaml").write_text(TEAM)
    assert export(tmp_path, str(tmp_path / "team.yaml")) == 0  # no template: no command folder
    assert main(["import", "qwen-code", "--project", str(tmp_path), "-o", str(tmp_path / "back.yaml")]) == 0
    back = (tmp_path / "back.yaml").read_text()
    assert "Prefer short functions." in back and ".qwen/commands" not in back
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts/recap.md").write_text("Recap: $@\n")
    (tmp_path / "team.yaml").write_text(TEAM + "templates:\n  sources: [project, ./prompts]\n")
    assert export(tmp_path, str(tmp_path / "team.yaml")) == 0
    assert main(["import", "qwen-code", "--project", str(tmp_path), "-o", str(tmp_path / "back.yaml")]) == 0
    assert "{dialect: gemini, path: \".qwen/commands\"}" in (tmp_path / "back.yaml").read_text()


def test_the_precompact_hook_prints_the_profiles_instructions_beside_the_users_hooks(tmp_path, capsys):
    """The hook's file holds Qwen Code's hook output; the user's own PreCompact hook stays; instructions
    longer than Qwen Code keeps are not exported and reported lost."""
    (tmp_path / ".qwen").mkdir()
    mine = {"matcher": "auto", "hooks": [{"type": "command", "command": "echo mine"}]}
    (tmp_path / ".qwen/settings.json").write_text(json.dumps({"hooks": {"PreCompact": [mine]}}))
    assert export(tmp_path) == 0
    hooks = json.loads((tmp_path / ".qwen/settings.json").read_text())["hooks"]["PreCompact"]
    assert hooks[0] == mine and hooks[1]["hooks"][0]["command"] == (
        'cat "$QWEN_PROJECT_DIR/.qwen/context-pipeline/precompact.json"')
    instructions = summary_instructions(compile_profile("builtin:default"))
    output = json.loads((tmp_path / ".qwen/context-pipeline/precompact.json").read_text())
    assert output == {"hookSpecificOutput": {"hookEventName": "PreCompact", "additionalContext": instructions}}
    got = report(tmp_path, capsys)
    assert got["summary.instructions.initial"]["how"] == got["summary.schema"]["how"] == "extension"
    short = tmp_path / "short.yaml"  # read back by import
    short.write_text("extends: builtin:default\nname: short\nsummary:\n  instructions:\n    initial: "
                     "Keep every file path the session touched.\n")
    assert export(tmp_path, str(short)) == 0
    assert main(["import", "qwen-code", "--project", str(tmp_path), "-o", str(tmp_path / "back.yaml")]) == 0
    assert "Keep every file path the session touched." in (tmp_path / "back.yaml").read_text()
    profile = tmp_path / "long.yaml"
    profile.write_text("extends: builtin:default\nname: long\nsummary:\n  instructions:\n    initial: "
                       + json.dumps("Keep every path. " * 300) + "\n")
    got = report(tmp_path, capsys, str(profile))
    assert got["summary.instructions.initial"]["how"] == "lost" and "keeps the first 4000" in got[
        "summary.instructions.initial"]["why"]


def test_the_hook_in_a_user_dir_names_its_file_by_path_and_a_masking_profile_gets_none(tmp_path, capsys):
    home = tmp_path / "dot-qwen"
    home.mkdir()
    assert main(["export", "qwen-code", "--user-dir", str(home)]) == 0
    command = json.loads((home / "settings.json").read_text())["hooks"]["PreCompact"][0]["hooks"][0]["command"]
    assert command == f"cat {home}/context-pipeline/precompact.json"
    assert json.loads((home / "context-pipeline/precompact.json").read_text())["hookSpecificOutput"]
    masking = tmp_path / "mask.yaml"
    masking.write_text("extends: builtin:default\nname: mask\ncompaction:\n  strategy: mask_tool_results\n")
    (tmp_path / "proj").mkdir()
    got = report(tmp_path / "proj", capsys, str(masking))
    assert got["summary.instructions.initial"]["how"] == "lost" and "asks for no summary" in got[
        "summary.instructions.initial"]["why"]
    assert export(tmp_path / "proj", str(masking)) == 0
    assert not (tmp_path / "proj/.qwen/context-pipeline/precompact.json").exists()
