"""`pipeline init --target AGENT`: the hook and the CI job check `pipeline export AGENT --check`."""

from __future__ import annotations

import shlex

import pytest

from pipeline.cli import main
from pipeline.js import load_yaml


def test_init_target_pi_hook_and_workflow_run_export_check(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert main(["init", ".", "--target", "pi", "--install", "context-pipeline==0.1.0"]) == 0
    config = load_yaml((tmp_path / ".pre-commit-config.yaml").read_text())
    entries = [h["entry"] for r in config["repos"] for h in r["hooks"]]
    assert "pipeline export pi --check" in entries  # the repository's profile, recorded by init
    workflow = load_yaml((tmp_path / ".github" / "workflows" / "context-profiles.yml").read_text())
    runs = [s.get("run", "") for job in workflow["jobs"].values() for s in job["steps"]]
    hook = next(e for e in entries if e.startswith("pipeline export pi"))
    assert hook in runs
    assert main(["export", "pi"]) == 0
    capsys.readouterr()
    for command in (hook,):
        assert main(shlex.split(command)[1:]) == 0
    assert main(["validate", "."]) == 0


def test_the_targets_init_and_export_offer_are_the_exports(capsys):
    from pipeline.cli import export as export_cli
    from pipeline.cli.init import AGENT_TARGETS
    from pipeline.export import TARGETS

    assert AGENT_TARGETS == tuple(TARGETS)
    with pytest.raises(SystemExit):
        main(["export", "nowhere"])
    assert "invalid choice: 'nowhere' (choose from " in capsys.readouterr().err
    assert all(name in export_cli.HELP for name in TARGETS)


@pytest.mark.parametrize("target", ["claude-code", "codex", "opencode", "gemini", "qwen-code", "kilo", "copilot", "agents-md"])
def test_init_target_hook_checks_that_export(tmp_path, capsys, monkeypatch, target):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert main(["init", ".", "--target", target, "--install", "context-pipeline==0.1.0"]) == 0
    config = load_yaml((tmp_path / ".pre-commit-config.yaml").read_text())
    hook = next(h["entry"] for r in config["repos"] for h in r["hooks"] if h["id"] == f"pipeline-export-{target}")
    assert hook.startswith(f"pipeline export {target} --check")
    capsys.readouterr()
    if target in ("gemini", "copilot", "agents-md"):  # the starter gives nothing to write: the agent's own prompt stays, no key
        assert main(shlex.split(hook)[1:]) == 0
    else:
        assert main(shlex.split(hook)[1:]) == 1  # nothing exported yet: drift
        err = capsys.readouterr().err
        assert "differ from what the profile exports" in err and f"run `pipeline export {target}` to update them" in err
    assert main(["export", target]) == 0
    capsys.readouterr()
    assert main(shlex.split(hook)[1:]) == 0


@pytest.mark.parametrize("target", ["pi", "claude-code", "codex", "opencode", "gemini", "qwen-code", "kilo", "copilot",
                                    "agents-md"])
def test_the_hook_and_ci_watch_every_file_the_export_writes_later(tmp_path, capsys, monkeypatch, target):
    """Issue 29 point 4: the hooks init writes run when a template or an exported file changes, also a
    file the starter does not export yet (GEMINI.md, QWEN.md, AGENTS.md hold the team's sections once
    the profile has some): a hand edit of it must wake the hook and the CI job."""
    import fnmatch
    import re

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert main(["init", ".", "--target", target, "--install", "context-pipeline==0.1.0"]) == 0
    config = load_yaml((tmp_path / ".pre-commit-config.yaml").read_text())
    watched = next(h["files"] for r in config["repos"] for h in r["hooks"] if h["id"] == f"pipeline-export-{target}")
    workflow = load_yaml((tmp_path / ".github" / "workflows" / "context-profiles.yml").read_text())
    paths = workflow["on"]["push"]["paths"]
    profile = tmp_path / "agent-profiles" / "team.yaml"
    profile.write_text(profile.read_text() + "system_prompt:\n  sections:\n"
                       "    - {id: review, before: project_context, text: Every change is reviewed.}\n")
    (tmp_path / ".pi" / "prompts").mkdir(parents=True)
    (tmp_path / ".pi" / "prompts" / "fix.md").write_text("Fix $ARGUMENTS\n")
    def snapshot() -> dict[str, bytes]:
        return {str(p.relative_to(tmp_path)): p.read_bytes() for p in tmp_path.rglob("*")
                if p.is_file() and p.relative_to(tmp_path).parts[0] != "home"}  # HOME: the profile cache

    before = snapshot()
    assert main(["export", target, "--force"]) == 0
    capsys.readouterr()
    written = [path for path, data in snapshot().items() if before.get(path) != data] + [".pi/prompts/fix.md"]
    assert len(written) > 2  # the manifest and at least one file of the agent's
    for path in written:
        assert re.search(watched, path), (path, watched)
        assert any(fnmatch.fnmatch(path, glob) for glob in paths), (path, paths)
