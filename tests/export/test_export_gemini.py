"""`pipeline export gemini` on the file system: files, settings merge, report, --user-dir."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.cli import main

from .profiles import TEAM, replacing


def export(project: Path, *args: str) -> int:
    return main(["export", "gemini", *args, "--project", str(project)])


def report(project: Path, capsys, *args: str) -> dict:
    capsys.readouterr()
    assert export(project, *args, "--dry-run", "--format", "json") == 0
    return {c["key"]: c for c in json.loads(capsys.readouterr().out)["report"]}


def test_the_default_keeps_geminis_prompt_and_the_team_gets_a_block_of_gemini_md(tmp_path, capsys):
    assert export(tmp_path) == 0
    assert not (tmp_path / "GEMINI.md").exists() and not (tmp_path / ".gemini/system.md").exists()
    assert report(tmp_path, capsys)["system_prompt.sections.tools"]["how"] == "own"
    (tmp_path / "team.yaml").write_text(TEAM)
    (tmp_path / "GEMINI.md").write_text("# Ours\nUse tabs.\n")
    assert export(tmp_path, str(tmp_path / "team.yaml")) == 0
    block = "<!-- context-pipeline: begin -->\nPrefer short functions.\n<!-- context-pipeline: end -->\n"
    assert (tmp_path / "GEMINI.md").read_text() == "# Ours\nUse tabs.\n\n" + block
    got = report(tmp_path, capsys, str(tmp_path / "team.yaml"))
    assert got["system_prompt.sections.house"]["how"] == "native"
    assert got["system_prompt.sections.where"]["how"] == "lost"  # it holds ${cwd}
    assert export(tmp_path, str(tmp_path / "team.yaml")) == 0  # unchanged: no conflict with its own block
    text = (tmp_path / "GEMINI.md").read_text()
    (tmp_path / "GEMINI.md").write_text(text.replace("Prefer short", "Prefer long"))
    capsys.readouterr()
    assert export(tmp_path, str(tmp_path / "team.yaml")) == 1  # the user edited the export's block
    assert "marked block was edited" in capsys.readouterr().err
    (tmp_path / "GEMINI.md").write_text("Top.\n" + text)  # a line of the user's above the block is theirs
    assert export(tmp_path, "default") == 0  # builtin:default has no team section: the block goes, the user's lines stay
    assert (tmp_path / "GEMINI.md").read_text() == "Top.\n# Ours\nUse tabs.\n\n"


def test_writes_system_md_the_env_file_and_a_manifest(tmp_path):
    from pipeline import compile_profile

    assert export(tmp_path, replacing(tmp_path)) == 0
    manifest = json.loads((tmp_path / ".gemini/context-pipeline-export.json").read_text())
    assert set(manifest["files"]) == {".gemini/system.md", ".gemini/.env"}
    assert (tmp_path / ".gemini/.env").read_text() == "GEMINI_SYSTEM_MD=true\n"
    system = (tmp_path / ".gemini/system.md").read_text()
    assert compile_profile("default").profile.system_prompt.sections[1].text.render() in system
    assert "Working directory" not in system
    assert not (tmp_path / "GEMINI.md").exists()
    assert not (tmp_path / ".gemini/settings.json").exists()  # no key without a share-of-window trigger


def test_a_share_of_window_trigger_is_the_compression_threshold(tmp_path, capsys):
    profile = tmp_path / "p.yaml"
    profile.write_text("extends: builtin:default\nname: p\ncompaction:\n  trigger: {percent_of_window: 30}\n")
    project = tmp_path / "proj"
    project.mkdir()
    (project / ".gemini").mkdir()
    (project / ".gemini/settings.json").write_text(json.dumps({"ui": {"theme": "x"}}))
    carried = report(project, capsys, str(profile))
    assert carried["compaction.trigger"]["how"] == "native"
    assert export(project, str(profile)) == 0
    data = json.loads((project / ".gemini/settings.json").read_text())
    assert data == {"ui": {"theme": "x"}, "model": {"compressionThreshold": 0.3}}


def test_the_report_names_every_section_and_the_losses(tmp_path, capsys):
    from pipeline import compile_profile

    carried = report(tmp_path, capsys, replacing(tmp_path))
    for section in compile_profile("default").profile.system_prompt.sections:
        assert f"system_prompt.sections.{section.id}" in carried
    assert carried["system_prompt.sections.skills"]["how"] == "lost"
    for key in ("summary.instructions.initial", "summary.schema", "compaction.keep_recent_tokens",
                "compaction.reserve_tokens"):
        assert carried[key]["how"] == "lost" and carried[key]["why"], key


def test_commands_translate_all_arguments_and_lose_positional_ones(tmp_path, capsys):
    prompts = tmp_path / "prof" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "all.md").write_text("Look at $ARGUMENTS\n")
    (prompts / "pos.md").write_text("First $1\n")
    (prompts / "clash.md").write_text("Say {{args}} and $@\n")
    profile = tmp_path / "prof" / "p.yaml"
    profile.write_text("extends: builtin:default\nname: p\ntemplates:\n  sources: [project, global, prompts]\n")
    project = tmp_path / "proj"
    project.mkdir()
    carried = report(project, capsys, str(profile))
    assert carried["templates.all"]["how"] == "native"
    assert carried["templates.pos"]["how"] == "lost"
    assert carried["templates.clash"]["how"] == "lost" and "{{args}}" in carried["templates.clash"]["why"]
    assert export(project, str(profile)) == 0
    assert "prompt = '''\nLook at {{args}}\n'''" in (project / ".gemini/commands/all.toml").read_text()
    assert sorted(p.name for p in (project / ".gemini/commands").iterdir()) == ["all.toml"]


def test_check_and_a_users_env_file(tmp_path, capsys):
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".gemini/.env").write_text("GEMINI_API_KEY=mine\n")
    profile = replacing(tmp_path)
    assert export(tmp_path, profile) == 1  # the user's .env is not the export's
    assert ".env" in capsys.readouterr().err
    assert (tmp_path / ".gemini/.env").read_text() == "GEMINI_API_KEY=mine\n"
    (tmp_path / ".gemini/.env").unlink()
    assert export(tmp_path, profile) == 0
    assert export(tmp_path, profile, "--check", "--allow-loss", "system_prompt.sections", "compaction", "retry",
                  "summary") == 0


def test_user_dir_names_system_md_by_its_path(tmp_path):
    home = tmp_path / "dot-gemini"
    home.mkdir()
    assert main(["export", "gemini", replacing(tmp_path), "--user-dir", str(home)]) == 0
    assert (home / ".env").read_text() == f"GEMINI_SYSTEM_MD={home}/system.md\n"
    assert (home / "system.md").is_file() and (home / "context-pipeline-export.json").is_file()
