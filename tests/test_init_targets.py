"""`pipeline init --target AGENT`: the hook and the CI job check `pipeline export AGENT --check`."""

from __future__ import annotations

import shlex

from pipeline.cli import main
from pipeline.js import load_yaml


def test_init_target_pi_hook_and_workflow_run_export_check(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert main(["init", ".", "--target", "pi", "--install", "context-pipeline==0.1.0"]) == 0
    config = load_yaml((tmp_path / ".pre-commit-config.yaml").read_text())
    entries = [h["entry"] for r in config["repos"] for h in r["hooks"]]
    assert any(e.startswith("pipeline export pi agent-profiles/team.yaml --check") for e in entries)
    workflow = load_yaml((tmp_path / ".github" / "workflows" / "context-profiles.yml").read_text())
    runs = [s.get("run", "") for job in workflow["jobs"].values() for s in job["steps"]]
    hook = next(e for e in entries if e.startswith("pipeline export pi"))
    assert hook in runs
    assert main(["export", "pi", "agent-profiles/team.yaml", *hook.split("--check")[1].split()]) == 0
    capsys.readouterr()
    for command in (hook,):
        assert main(shlex.split(command)[1:]) == 0
    assert main(["validate", "."]) == 0


def test_init_target_not_exported_yet_is_a_clear_error(tmp_path, capsys):
    from pipeline.export import TARGETS

    missing = [t for t in ("claude-code", "codex", "opencode", "gemini") if t not in TARGETS]
    for target in missing:
        assert main(["init", str(tmp_path), "--target", target]) == 2
        assert f"--target {target}: `pipeline export` has no such target" in capsys.readouterr().err
    assert not (tmp_path / ".pre-commit-config.yaml").exists() or not missing
