"""`pipeline export codex` on the file system: the instructions file, config.toml edited key by
key (the user's lines, comments and tables kept), the loss report."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pipeline.cli import main

from .profiles import TEAM, replacing
from pipeline.export.apply import toml_value
from pipeline.export.base import SharedToml
from pipeline.export.codex import NEVER

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found]

CONFIG = ".codex/config.toml"
INSTRUCTIONS = ".codex/context-pipeline/instructions.md"

USERS = """\
# my Codex settings
model = "gpt-5"  # the one we pay for

[model_providers.work]
base_url = "https://example.invalid/v1"
"""


def export(project: Path, *args: str) -> int:
    return main(["export", "codex", *args, "--project", str(project)])


def report(project: Path, capsys, *args: str) -> dict:
    capsys.readouterr()
    assert export(project, *args, "--format", "json", "--dry-run") == 0
    return {c["key"]: c for c in json.loads(capsys.readouterr().out)["report"]}


def test_the_default_keeps_codexs_instructions_and_the_team_gets_developer_instructions(tmp_path, capsys):
    assert export(tmp_path) == 0
    config = tomllib.loads((tmp_path / CONFIG).read_text())
    assert "model_instructions_file" not in config and "developer_instructions" not in config
    assert not (tmp_path / INSTRUCTIONS).exists()
    got = report(tmp_path, capsys)
    assert got["system_prompt"]["how"] == "own" and got["system_prompt.sections.rules"]["how"] == "own"
    (tmp_path / "team.yaml").write_text(TEAM)
    assert export(tmp_path, str(tmp_path / "team.yaml")) == 0
    assert tomllib.loads((tmp_path / CONFIG).read_text())["developer_instructions"] == "Prefer short functions."
    got = report(tmp_path, capsys, str(tmp_path / "team.yaml"))
    assert got["system_prompt.sections.house"]["how"] == "native"
    assert export(tmp_path, "default") == 0  # named: a plain export is refused over another profile's
    assert "developer_instructions" not in tomllib.loads((tmp_path / CONFIG).read_text())


def test_writes_the_instructions_and_names_them_in_config_toml(tmp_path):
    assert export(tmp_path, replacing(tmp_path)) == 0
    config = tomllib.loads((tmp_path / CONFIG).read_text())
    assert config["model_instructions_file"] == "context-pipeline/instructions.md"
    assert config["compact_prompt"].startswith("Above is a transcript")  # builtin:default's initial instructions
    assert "## Goal" in config["compact_prompt"]  # the schema, rendered
    text = (tmp_path / INSTRUCTIONS).read_text()
    assert text.startswith("You are a careful software engineer") and str(tmp_path) not in text
    manifest = json.loads((tmp_path / ".codex/context-pipeline-export.json").read_text())
    assert set(manifest["files"]) == {INSTRUCTIONS}
    assert manifest["shared"][CONFIG] == [["model_instructions_file"], ["compact_prompt"]]


def test_the_users_config_keeps_its_lines_comments_and_tables(tmp_path):
    (tmp_path / ".codex").mkdir()
    (tmp_path / CONFIG).write_text(USERS)
    assert export(tmp_path, replacing(tmp_path)) == 0
    text = (tmp_path / CONFIG).read_text()
    assert text.startswith('# my Codex settings\nmodel = "gpt-5"  # the one we pay for\nmodel_instructions_file = ')
    assert text.endswith('\n\n[model_providers.work]\nbase_url = "https://example.invalid/v1"\n')
    config = tomllib.loads(text)
    assert config["model"] == "gpt-5" and config["model_providers"]["work"]["base_url"]
    assert export(tmp_path, replacing(tmp_path), "--check", "--allow-loss", "compaction", "summary", "retry",
                  "system_prompt") == 0


def test_a_key_the_user_set_is_a_conflict_until_force(tmp_path, capsys):
    (tmp_path / ".codex").mkdir()
    (tmp_path / CONFIG).write_text('compact_prompt = "mine"\n' + USERS)
    assert export(tmp_path) == 1
    assert "key compact_prompt is set in the file, not by this export" in capsys.readouterr().err
    assert (tmp_path / CONFIG).read_text().startswith('compact_prompt = "mine"\n')
    assert export(tmp_path, "--force") == 0
    assert tomllib.loads((tmp_path / CONFIG).read_text())["compact_prompt"] != "mine"
    assert export(tmp_path) == 0  # the key is the export's now


def test_a_re_export_removes_the_keys_the_profile_no_longer_sets(tmp_path):
    (tmp_path / "mask.yaml").write_text("extends: builtin:default\nname: mask\n"
                                        "compaction:\n  strategy: mask_tool_results\n")
    (tmp_path / ".codex").mkdir()
    (tmp_path / CONFIG).write_text(USERS)
    assert export(tmp_path, replacing(tmp_path)) == 0
    assert export(tmp_path, str(tmp_path / "mask.yaml")) == 0
    text = (tmp_path / CONFIG).read_text()
    assert "compact_prompt" not in text and "model_instructions_file" not in text and text.startswith("# my Codex")


def test_a_config_with_only_the_exports_keys_goes_when_they_go(tmp_path):
    assert export(tmp_path) == 0
    manifest = tmp_path / ".codex/context-pipeline-export.json"
    data = json.loads(manifest.read_text())
    data["shared"][CONFIG].append(["model_auto_compact_token_limit"])
    manifest.write_text(json.dumps(data))
    assert export(tmp_path) == 0  # nothing to remove: the file still holds the profile's keys
    assert (tmp_path / CONFIG).is_file()


def test_invalid_toml_is_a_located_error(tmp_path, capsys):
    (tmp_path / ".codex").mkdir()
    (tmp_path / CONFIG).write_text('model = "gpt-5\n')
    assert export(tmp_path) == 1
    err = capsys.readouterr().err
    assert f"{tmp_path / CONFIG}:1" in err and "not valid TOML" in err


def test_a_multi_line_value_of_the_export_is_refused_rather_than_broken(tmp_path, capsys):
    (tmp_path / ".codex").mkdir()
    (tmp_path / CONFIG).write_text('compact_prompt = """\nmine\n"""\n')
    assert export(tmp_path, "--force") == 1
    assert "cannot edit this TOML file line by line" in capsys.readouterr().err
    assert (tmp_path / CONFIG).read_text() == 'compact_prompt = """\nmine\n"""\n'


def test_toml_values_are_one_line_and_read_back():
    for value in ("a \"quoted\" / path\n\ttab \x7f \u2603", 12, True, ["a", 1]):
        line = f"k = {toml_value(value)}"
        assert "\n" not in line and tomllib.loads(line)["k"] == value
    with pytest.raises(ValueError):
        SharedToml("x.toml", ((("a", "b"), 1),))


def test_the_report_names_every_setting(tmp_path, capsys):
    got = report(tmp_path, capsys, replacing(tmp_path))
    assert got["system_prompt"]["how"] == "native"
    assert got["system_prompt.sections.identity"]["how"] == "mismatch"  # pi's own identity, in place of Codex's
    assert got["system_prompt.sections.project_context"]["how"] == "lost"
    assert "AGENTS.md" in got["system_prompt.sections.project_context"]["why"]
    assert got["system_prompt.sections.cwd"]["how"] == "lost"
    for key in ("summary.instructions.initial", "summary.schema"):
        assert got[key]["how"] == "native" and "compact_prompt" in got[key]["where"]
    for key in ("compaction.reserve_tokens", "compaction.keep_recent_tokens", "summary.system_prompt",
                "summary.validity", "retry", "summary.instructions.update"):
        assert got[key]["how"] == "lost", key


@pytest.mark.parametrize("extra, key, how", [
    ("  trigger: {tokens: 50000}\n", "compaction.trigger", "native"),
    ("  trigger: {percent_of_window: 80}\n", "compaction.trigger", "lost"),
    ("  enabled: false\n", "compaction.enabled", "native"),
    ("  model_overrides:\n    loop/m: {reserve_tokens: 100}\n", "compaction.model_overrides.loop/m", "lost"),
    ("  strategy: hybrid\n", "compaction.strategy", "lost"),
])
def test_compaction_settings(tmp_path, capsys, extra, key, how):
    (tmp_path / "p.yaml").write_text(f"extends: builtin:default\nname: p\ncompaction:\n{extra}")
    got = report(tmp_path, capsys, str(tmp_path / "p.yaml"))
    assert got[key]["how"] == how
    assert export(tmp_path, str(tmp_path / "p.yaml")) == 0
    config = tomllib.loads((tmp_path / CONFIG).read_text())
    if "tokens: 50000" in extra:
        assert config["model_auto_compact_token_limit"] == 50000
    elif "enabled" in extra:
        assert config["model_auto_compact_token_limit"] == NEVER
    else:
        assert "model_auto_compact_token_limit" not in config


def test_user_dir_is_laid_out_as_codex_home(tmp_path):
    assert main(["export", "codex", replacing(tmp_path), "--user-dir", str(tmp_path)]) == 0
    assert (tmp_path / "context-pipeline/instructions.md").is_file()
    assert tomllib.loads((tmp_path / "config.toml").read_text())["model_instructions_file"] == \
        "context-pipeline/instructions.md"
    assert (tmp_path / "context-pipeline-export.json").is_file()
