"""`pipeline export kilo`: the files Kilo CLI 7.7.7 reads (tests/agents/test_export_kilo.py runs the
real CLI on them)."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.cli import main
from pipeline.compiler import compile_profile
from pipeline.export.static_prompt import summary_instructions

from .profiles import TEAM, dry_report, replacing, run_export


def export(project: Path, *args: str) -> int:
    return run_export("kilo", project, *args)


def report(project: Path, capsys, *args: str) -> dict:
    return dry_report("kilo", project, capsys, *args)


def test_the_team_sections_are_an_instructions_file_kilo_json_names(tmp_path, capsys):
    (tmp_path / "team.yaml").write_text(TEAM)
    (tmp_path / "kilo.json").write_text('{\n  "theme": "dark"\n}\n')
    assert export(tmp_path, str(tmp_path / "team.yaml")) == 0
    assert (tmp_path / ".kilo/context-pipeline/instructions.md").read_text() == "Prefer short functions.\n"
    config = json.loads((tmp_path / "kilo.json").read_text())
    assert config["theme"] == "dark" and config["instructions"] == [".kilo/context-pipeline/instructions.md"]
    assert (tmp_path / "kilo.json").read_text().startswith('{\n  "theme": "dark",')  # the user's bytes stay
    got = report(tmp_path, capsys, str(tmp_path / "team.yaml"))
    assert got["system_prompt"]["how"] == "own"
    assert got["system_prompt.sections.house"]["how"] == "native"
    where = got["system_prompt.sections.where"]  # ${cwd}: Kilo states it in each user message
    assert where["how"] == "lost" and "<environment_details>" in where["why"]
    manifest = json.loads((tmp_path / ".kilo/context-pipeline-export.json").read_text())
    assert manifest["target"] == "kilo"


def test_base_profile_is_the_code_agents_prompt_after_kilos_opening(tmp_path, capsys):
    assert export(tmp_path, replacing(tmp_path)) == 0
    config = json.loads((tmp_path / "kilo.json").read_text())
    assert config["agent"]["code"] == {"prompt": "{file:./.kilo/context-pipeline/prompt.md}"}
    assert "instructions" not in config
    got = report(tmp_path, capsys, replacing(tmp_path))
    assert got["system_prompt"]["how"] == "native" and "opening paragraph stays" in got["system_prompt"]["where"]
    assert got["system_prompt.sections.identity"]["how"] == "mismatch"


def test_compaction_keys_and_the_reserve_note(tmp_path, capsys):
    profile = tmp_path / "p.yaml"
    profile.write_text("extends: builtin:default\nname: p\ncompaction:\n  reserve_tokens: 20000\n"
                       "  keep_recent_tokens: 12345\n  strategy: mask_tool_results\n")
    assert export(tmp_path, str(profile)) == 0
    config = json.loads((tmp_path / "kilo.json").read_text())
    assert config["compaction"] == {"auto": True, "reserved": 20000, "preserve_recent_tokens": 12345, "prune": True}
    got = report(tmp_path, capsys, str(profile))
    assert got["compaction.reserve_tokens"]["how"] == "native" and "limit.input" in got["compaction.reserve_tokens"][
        "where"]
    for key in ("summary.instructions.update", "summary.validity", "retry", "compaction.branch.reserve_tokens"):
        assert got[key]["how"] == "lost" and got[key]["why"], key
    # the summary's system prompt is the compaction agent's; its instructions the plugin's
    compiled = compile_profile(str(profile))
    system, prompt = compiled.profile.summary.system_prompt.render(), summary_instructions(compiled)
    assert config["agent"]["compaction"]["prompt"] == system
    assert got["summary.system_prompt"]["how"] == "native" and "agent.compaction.prompt" in got[
        "summary.system_prompt"]["where"]
    assert json.loads((tmp_path / ".kilo/context-pipeline/plugin.json").read_text()) == {
        "cwd_marker": None, "compaction_prompt": prompt}
    assert (tmp_path / ".kilo/plugin/context-pipeline.js").read_text() == (
        Path(__file__).resolve().parents[2] / "pipeline/export/opencode_plugin.js").read_text()
    for key in ("summary.instructions.initial", "summary.schema"):
        assert got[key]["how"] == "extension" and ".kilo/plugin/context-pipeline.js" in got[key]["where"], key
    profile.write_text("extends: builtin:default\nname: p\ncompaction:\n  trigger: {percent_of_window: 50}\n")
    got = report(tmp_path, capsys, str(profile))
    assert got["compaction.trigger"]["how"] == "lost" and "Kilo CLI" in got["compaction.trigger"]["why"]


def test_commands_in_opencodes_dialect_named_for_kilo(tmp_path, capsys):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts/recap.md").write_text("---\ndescription: Recap\n---\nRecap: $@ (end)\n")
    (tmp_path / "prompts/first.md").write_text("First $1 then $2\n")
    (tmp_path / "prompts/slice.md").write_text("Rest ${@:2}\n")
    profile = tmp_path / "t.yaml"
    profile.write_text("extends: builtin:default\nname: t\ntemplates:\n  sources: [project, ./prompts]\n")
    project = tmp_path / "proj"
    project.mkdir()
    got = report(project, capsys, str(profile))
    assert got["templates.recap"]["how"] == "native"
    assert "Kilo CLI the highest `$N` also takes every argument after it" in got["templates.first"]["where"]
    assert got["templates.slice"]["how"] == "lost"
    assert "opencode" not in json.dumps({k: v for k, v in got.items() if k.startswith("templates.")})
    assert export(project, str(profile)) == 0
    assert (project / ".kilo/command/recap.md").read_text() == "---\ndescription: \"Recap\"\n---\nRecap: $ARGUMENTS (end)\n"
    assert not (project / ".kilo/command/slice.md").exists()


def test_an_edited_instructions_file_is_a_conflict_and_import_reads_the_export_back(tmp_path, capsys):
    (tmp_path / "team.yaml").write_text(TEAM)
    assert main(["import", "kilo", "--project", str(tmp_path)]) == 1
    assert f"{tmp_path}/.kilo/context-pipeline-export.json" in capsys.readouterr().err
    assert export(tmp_path, str(tmp_path / "team.yaml")) == 0
    assert main(["import", "kilo", "--project", str(tmp_path), "-o", str(tmp_path / "back.yaml")]) == 0
    assert "Prefer short functions." in (tmp_path / "back.yaml").read_text()
    (tmp_path / ".kilo/context-pipeline/instructions.md").write_text("mine\n")
    capsys.readouterr()
    assert export(tmp_path, str(tmp_path / "team.yaml")) == 1
    assert "instructions.md" in capsys.readouterr().err
    assert (tmp_path / ".kilo/context-pipeline/instructions.md").read_text() == "mine\n"


def test_the_summarizer_model_is_the_compaction_agents_model_and_is_read_back(tmp_path, capsys):
    """openai: the OpenAI-compatible package at the base URL (default api.openai.com/v1); anthropic: the
    Anthropic package at base URL + /v1; the key from the profile's variable (the wire's default one
    without it); import reads the summarizer back and a re-export changes nothing."""
    cases = {"openai": ("{provider: openai, model: small-one}", "@ai-sdk/openai-compatible",
                        "https://api.openai.com/v1", "OPENAI_API_KEY"),
             "anthropic": ("{provider: anthropic, model: claude-x, base_url: 'http://127.0.0.1:9', "
                           "api_key_env: MY_KEY}", "@ai-sdk/anthropic", "http://127.0.0.1:9/v1", "MY_KEY")}
    for name, (summarizer, npm, url, key) in cases.items():
        project = tmp_path / name
        project.mkdir()
        (tmp_path / f"{name}.yaml").write_text(TEAM + f"summarizer: {summarizer}\n")
        assert export(project, str(tmp_path / f"{name}.yaml")) == 0
        config = json.loads((project / "kilo.json").read_text())
        entry = config["provider"]["context-pipeline-summarizer"]
        model = config["agent"]["compaction"]["model"].removeprefix("context-pipeline-summarizer/")
        assert (entry["npm"], entry["options"]["baseURL"], entry["env"], list(entry["models"])) == (
            npm, url, [key], [model])
        got = report(project, capsys, str(tmp_path / f"{name}.yaml"))
        assert got["summarizer.model"]["how"] == "native" and "agent.compaction.model" in got["summarizer.model"]["where"]
        assert got["summarizer"]["how"] == "lost"
        back = tmp_path / f"{name}-back.yaml"
        assert main(["import", "kilo", "--project", str(project), "-o", str(back)]) == 0
        assert f'model: "{model}"' in back.read_text() and f'provider: "{name}"' in back.read_text()
        capsys.readouterr()
        assert export(project, str(back), "--dry-run") == 0 and "no change" in capsys.readouterr().out


def test_user_dir_holds_the_plugin_in_kilos_config_folder(tmp_path):
    home = tmp_path / "dot-config-kilo"
    home.mkdir()
    assert main(["export", "kilo", "--user-dir", str(home)]) == 0
    assert (home / "plugin/context-pipeline.js").is_file()
    data = json.loads((home / "context-pipeline/plugin.json").read_text())
    assert data["cwd_marker"] is None and data["compaction_prompt"] == summary_instructions(compile_profile("default"))
    assert json.loads((home / "kilo.json").read_text())["agent"]["compaction"]["prompt"]
