"""`pipeline export pi` on the file system: manifest, merge, conflicts, --dry-run, --check."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.cli import main

EXT = ".pi/extensions/context-pipeline/index.js"
PLAN = ".pi/extensions/context-pipeline/profile.json"


def export(project: Path, *args: str) -> int:
    return main(["export", "pi", *args, "--project", str(project)])


def test_writes_the_files_and_a_manifest(tmp_path):
    assert export(tmp_path) == 0
    manifest = json.loads((tmp_path / ".pi/context-pipeline-export.json").read_text())
    assert set(manifest["files"]) == {EXT, PLAN}
    assert ["compaction", "reserveTokens"] in manifest["shared"][".pi/settings.json"]
    assert json.loads((tmp_path / PLAN).read_text())["profile"] == "default"


def test_dry_run_writes_nothing_and_says_what_would_change(tmp_path, capsys):
    assert export(tmp_path, "--dry-run") == 0
    assert not (tmp_path / ".pi").exists()
    assert f"would create {EXT}" in capsys.readouterr().out


def test_check_reports_drift_then_passes(tmp_path, capsys):
    assert export(tmp_path, "--check", "--allow-loss", "summary") == 1
    assert export(tmp_path) == 0
    assert export(tmp_path, "--check", "--allow-loss", "summary") == 0
    (tmp_path / EXT).write_text("// edited\n")
    assert export(tmp_path, "--check", "--allow-loss", "summary") == 1
    assert "differ from what the profile exports" in capsys.readouterr().err


SHARE = "extends: builtin:default\nname: share\ncompaction:\n  branch: {summary_share_limit: 0.5}\n"


def test_check_fails_on_an_undeclared_loss(tmp_path, capsys):
    assert export(tmp_path) == 0
    assert export(tmp_path, "--check") == 0  # builtin:default loses nothing on pi
    (tmp_path / "share.yaml").write_text(SHARE)
    assert export(tmp_path, str(tmp_path / "share.yaml")) == 0
    capsys.readouterr()
    assert export(tmp_path, str(tmp_path / "share.yaml"), "--check") == 1
    assert "compaction.branch.summary_share_limit would be lost" in capsys.readouterr().err
    assert export(tmp_path, str(tmp_path / "share.yaml"), "--check", "--allow-loss",
                  "compaction.branch.summary_share_limit") == 0


def test_shared_settings_keep_the_users_keys_and_refuse_to_overwrite_theirs(tmp_path, capsys):
    (tmp_path / ".pi").mkdir()
    (tmp_path / ".pi/settings.json").write_text(json.dumps({"theme": "dark", "compaction": {"reserveTokens": 1}}))
    assert export(tmp_path) == 1  # the user's reserveTokens is not the export's to change
    assert "compaction.reserveTokens is set in the file" in capsys.readouterr().err
    assert json.loads((tmp_path / ".pi/settings.json").read_text())["compaction"] == {"reserveTokens": 1}
    assert export(tmp_path, "--force") == 0
    data = json.loads((tmp_path / ".pi/settings.json").read_text())
    assert data["theme"] == "dark" and data["compaction"]["reserveTokens"] == 16384
    assert export(tmp_path) == 0  # now the key is the export's: a re-export needs no --force


def test_never_overwrites_a_file_it_did_not_write(tmp_path, capsys):
    (tmp_path / EXT).parent.mkdir(parents=True)
    (tmp_path / EXT).write_text("// mine\n")
    assert export(tmp_path) == 1
    err = capsys.readouterr().err
    assert "index.js" in err and "was not written by this export" in err
    assert (tmp_path / EXT).read_text() == "// mine\n"
    assert not (tmp_path / ".pi/context-pipeline-export.json").exists()


def test_reexport_removes_what_the_profile_no_longer_produces(tmp_path):
    prompts = tmp_path / "prof" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "fix.md").write_text("Fix $1\n")
    profile = tmp_path / "prof" / "p.yaml"
    profile.write_text("extends: builtin:default\nname: p\ntemplates:\n  sources: [project, global, prompts]\n")
    project = tmp_path / "proj"
    project.mkdir()
    assert export(project, str(profile)) == 0
    assert (project / ".pi/prompts/fix.md").read_text() == "Fix $1\n"
    (prompts / "fix.md").unlink()
    assert export(project, str(profile)) == 0
    assert not (project / ".pi/prompts/fix.md").exists()


def test_a_removed_file_that_was_edited_is_a_conflict(tmp_path):
    prompts = tmp_path / "prof" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "fix.md").write_text("Fix $1\n")
    profile = tmp_path / "prof" / "p.yaml"
    profile.write_text("extends: builtin:default\nname: p\ntemplates:\n  sources: [project, global, prompts]\n")
    project = tmp_path / "proj"
    project.mkdir()
    assert export(project, str(profile)) == 0
    (project / ".pi/prompts/fix.md").write_text("Fix $1 carefully\n")
    (prompts / "fix.md").unlink()
    assert export(project, str(profile)) == 1
    assert (project / ".pi/prompts/fix.md").exists()


def test_json_report_names_how_each_setting_arrives(tmp_path, capsys):
    assert export(tmp_path, "--dry-run", "--format", "json") == 0
    data = json.loads(capsys.readouterr().out)
    how = {c["key"]: c["how"] for c in data["report"]}
    assert how["compaction.reserve_tokens"] == "native"
    assert how["system_prompt"] == "extension"
    assert how["summary.instructions.initial"] == "extension"
    assert how["summary.instructions.branch"] == how["summary.branch_schema"] == "extension"
    assert data["undeclared_losses"] == []


def test_user_dir_is_laid_out_as_pis_agent_directory(tmp_path):
    assert main(["export", "pi", "--user-dir", str(tmp_path)]) == 0
    assert (tmp_path / "extensions/context-pipeline/index.js").is_file()
    assert (tmp_path / "settings.json").is_file()


def test_a_missing_project_is_a_located_error(tmp_path, capsys):
    assert export(tmp_path / "nope") == 1
    assert f"{tmp_path / 'nope'}: --project: not a directory" in capsys.readouterr().err


def test_a_broken_settings_file_is_located(tmp_path, capsys):
    (tmp_path / ".pi").mkdir()
    (tmp_path / ".pi/settings.json").write_text('{"theme": \n')
    assert export(tmp_path) == 1
    assert f"{tmp_path / '.pi/settings.json'}:2:1: not valid JSON" in capsys.readouterr().err


def test_model_overrides_and_losses_of_a_compaction_policy(tmp_path, capsys):
    profile = tmp_path / "p.yaml"
    profile.write_text("extends: builtin:default\nname: p\ncompaction:\n  trigger: {percent_of_window: 80}\n"
                       "  model_overrides:\n    \"loop/m-1.5\": {keep_recent_tokens: 6000, reserve_tokens: 9000}\n")
    project = tmp_path / "proj"
    project.mkdir()
    assert export(project, str(profile), "--format", "json") == 0
    data = json.loads(capsys.readouterr().out)
    how = {c["key"]: c["how"] for c in data["report"]}
    assert how["compaction.trigger"] == "extension"
    assert how["compaction.model_overrides.loop/m-1.5.keep_recent_tokens"] == "native"
    assert how["compaction.model_overrides.loop/m-1.5.reserve_tokens"] == "extension"  # the extension's threshold
    settings = json.loads((project / ".pi/settings.json").read_text())
    assert settings["compaction"]["modelOverrides"] == {"loop/m-1.5": {"keepRecentTokens": 6000}}
    assert settings["compaction"]["reserveTokens"] == 1_000_000_000
    plan = json.loads((project / PLAN).read_text())
    assert plan["trigger"] == {"trigger": {"percent_of_window": 80.0}, "reserve_tokens": 16384,
                               "models": {"loop/m-1.5": {"trigger": None, "reserve_tokens": 9000}}}
    assert export(project, str(profile), "--check", "--allow-loss", "summary") == 0


def test_model_overrides_with_pis_rule_stay_native(tmp_path, capsys):
    profile = tmp_path / "p.yaml"
    profile.write_text("extends: builtin:default\nname: p\ncompaction:\n"
                       "  model_overrides:\n    \"loop/m-1.5\": {keep_recent_tokens: 6000, reserve_tokens: 9000}\n")
    project = tmp_path / "proj"
    project.mkdir()
    assert export(project, str(profile)) == 0
    settings = json.loads((project / ".pi/settings.json").read_text())
    assert settings["compaction"]["modelOverrides"] == {"loop/m-1.5": {"reserveTokens": 9000, "keepRecentTokens": 6000}}
    assert settings["compaction"]["reserveTokens"] == 16384
    assert json.loads((project / PLAN).read_text())["trigger"] is None


def test_mask_tool_results_is_carried_by_the_extension(tmp_path, capsys):
    profile = tmp_path / "p.yaml"
    profile.write_text("extends: builtin:default\nname: p\ncompaction:\n  strategy: mask_tool_results\n")
    project = tmp_path / "proj"
    project.mkdir()
    assert export(project, str(profile), "--format", "json") == 0
    how = {c["key"]: c["how"] for c in json.loads(capsys.readouterr().out)["report"]}
    assert how["compaction.strategy"] == how["compaction.masking.placeholder"] == "extension"
    assert "summary.instructions.initial" not in how  # this strategy never summarizes
    plan = json.loads((project / PLAN).read_text())
    assert plan["masking"]["placeholder"][0].startswith("(output of ")


def test_hybrid_goes_through_the_extension_with_its_trigger(tmp_path, capsys):
    """hybrid: the extension masks, then tests the masked context against the profile's
    trigger (`masking.rule`, per model too); a per-model strategy stays lost."""
    profile = tmp_path / "p.yaml"
    profile.write_text("extends: builtin:default\nname: p\ncompaction:\n  strategy: hybrid\n"
                       "  model_overrides:\n    loop/m: {reserve_tokens: 3000, strategy: summarize}\n")
    assert main(["export", "pi", str(profile), "--project", str(tmp_path), "--format", "json"]) == 0
    how = {c["key"]: c["how"] for c in json.loads(capsys.readouterr().out)["report"]}
    assert how["compaction.strategy"] == how["compaction.masking.placeholder"] == "extension"
    assert how["compaction.model_overrides.loop/m.strategy"] == "lost"
    masking = json.loads((tmp_path / PLAN).read_text())["masking"]
    assert masking["strategy"] == "hybrid" and masking["placeholder"]
    assert masking["rule"] == {"trigger": None, "reserve_tokens": 16384,
                               "models": {"loop/m": {"trigger": None, "reserve_tokens": 3000}}}


def test_without_profile_default_is_not_written_over_another_profiles_export(tmp_path, capsys):
    """Issue 29 point 4: in a repository exported from a team profile but with no repository profile
    set, a plain `pipeline export pi` silently reverted the team's thresholds and deleted its
    templates; now it refuses, naming the profile the files came from and the exact commands."""
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "fix.md").write_text("Fix $1\n")
    team = tmp_path / "team.yaml"
    team.write_text("extends: builtin:default\nname: team\ntemplates:\n  sources: [project, global, prompts]\n"
                    "compaction:\n  reserve_tokens: 24000\n")
    project = tmp_path / "proj"
    project.mkdir()
    for target in ("pi", "claude-code"):
        assert main(["export", target, str(team), "--project", str(project)]) == 0
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    capsys.readouterr()
    for args in ([], ["--check"], ["--force"]):
        for target, manifest in (("pi", ".pi"), ("claude-code", ".claude")):
            assert main(["export", target, "--project", str(project), *args]) == 1
            err = capsys.readouterr().err
            assert f"{project / manifest / 'context-pipeline-export.json'}: profile: these files were exported " \
                   f"from profile `{team}`" in err
            assert f"`pipeline export {target} {team} --project {project}`" in err
    assert {p: p.read_bytes() for p in project.rglob("*") if p.is_file()} == before
    assert main(["export", "pi", "default", "--project", str(project)]) == 0  # named: the user's choice
    assert '"reserveTokens": 16384' in (project / ".pi/settings.json").read_text()
    assert export(project) == 0  # now the files are default's
