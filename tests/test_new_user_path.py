"""Issue 29's new user's path, end to end in a temporary git repository with real `python -m pipeline`
subprocesses: init with two targets, edit the profile, export as the tool says, commit through the
hooks init wrote (the real pre-commit, installed as git's hook, runs them), edit again, `--check` names the drifted file and the
exact fix, the fix ends the loop, and `init --target codex` adds codex's hook and CI step only."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.js import load_yaml


def _env(home: Path) -> dict:
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""), "HOME": str(home),
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_NOSYSTEM": "1"}


def _run(args: list[str], repo: Path, env: dict) -> subprocess.CompletedProcess:
    if args[0] == "pipeline":
        args = [sys.executable, "-m", "pipeline", *args[1:]]
    return subprocess.run(args, cwd=repo, env=env, capture_output=True, text=True, timeout=300)


def _hooks(repo: Path) -> dict[str, dict]:
    config = load_yaml((repo / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    return {h["id"]: h for r in config["repos"] for h in r["hooks"]}


def _commit(repo: Path, env: dict, message: str) -> str:
    """`git commit` with pre-commit installed as git's hook: the hooks whose `files:` match run;
    their output is returned."""
    assert _run(["git", "add", "-A"], repo, env).returncode == 0
    done = _run(["git", "commit", "-m", message], repo, env)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def test_the_new_users_path(tmp_path):
    repo, env = tmp_path / "app", _env(tmp_path / "home")
    (tmp_path / "home").mkdir()
    repo.mkdir()
    assert _run(["git", "init", "-q", "-b", "main"], repo, env).returncode == 0
    init = _run(["pipeline", "init", "--target", "claude-code", "--target", "pi", "--install", "cp==0.1"], repo, env)
    assert init.returncode == 0, init.stderr
    assert (repo / ".context-pipeline.toml").read_text().count('profile = "agent-profiles/team.yaml"') == 1
    profile = repo / "agent-profiles" / "team.yaml"
    profile.write_text(profile.read_text() + "compaction:\n  reserve_tokens: 24000\n")
    # the hooks fail before the export: they name the fix
    check = _run(["pipeline", "export", "pi", "--check"], repo, env)
    assert check.returncode == 1 and "run `pipeline export pi` to update them" in check.stderr
    for target in ("pi", "claude-code"):
        done = _run(["pipeline", "export", target], repo, env)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[0] == \
            "profile agent-profiles/team.yaml (the repository's, set in .context-pipeline.toml)"
    assert '"reserveTokens": 24000' in (repo / ".pi" / "settings.json").read_text()
    installed = _run([sys.executable, "-m", "pre_commit", "install"], repo, env)
    assert installed.returncode == 0, installed.stderr
    ran = _commit(repo, env, "context profile, hooks and exports")
    for hook in ("validate context-pipeline profiles", "check the pi files exported from the profile",
                 "check the claude-code files exported from the profile"):
        assert re.search(re.escape(hook) + r"\.+Passed", ran), ran
    # a drifted export is refused at commit time, naming the fix
    profile.write_text(profile.read_text().replace("24000", "22000"))
    assert _run(["git", "add", "-A"], repo, env).returncode == 0
    refused = _run(["git", "commit", "-m", "drift"], repo, env)
    assert refused.returncode != 0 and "run `pipeline export pi` to update them" in refused.stdout + refused.stderr
    profile.write_text(profile.read_text().replace("22000", "24000"))
    # edit again: --check names the drifted file and the exact command; running it ends the loop
    profile.write_text(profile.read_text().replace("24000", "20000"))
    check = _run(["pipeline", "export", "pi", "--check"], repo, env)
    assert check.returncode == 1 and ".pi/settings.json" in check.stderr
    fix = re.search(r"run `([^`]+)` to update them", check.stderr).group(1)
    assert fix == "pipeline export pi"
    assert _run(shlex.split(fix), repo, env).returncode == 0
    assert _run(["pipeline", "export", "pi", "--check"], repo, env).returncode == 0
    assert _run(["pipeline", "export", "claude-code", "--check", *_allowed(repo, "claude-code")], repo, env).returncode == 0
    _commit(repo, env, "smaller reserve")
    # a second target: codex's hook and CI step only, nothing else touched
    before = {p: p.read_bytes() for p in (profile, repo / ".context-pipeline.toml")}
    hooks_before = _hooks(repo)
    again = _run(["pipeline", "init", "--target", "codex"], repo, env)
    assert again.returncode == 0, again.stderr
    assert {p: p.read_bytes() for p in before} == before
    hooks = _hooks(repo)
    assert set(hooks) - set(hooks_before) == {"pipeline-export-codex"}
    assert all(hooks[h] == hooks_before[h] for h in hooks_before)
    assert re.search(hooks["pipeline-export-codex"]["files"], "agent-profiles/team.yaml")
    workflow = load_yaml((repo / ".github" / "workflows" / "context-profiles.yml").read_text())
    names = [s.get("name", "") for s in workflow["jobs"]["profiles"]["steps"]]
    assert [n for n in names if n.startswith("export ")] == [
        "export claude-code is up to date", "export pi is up to date", "export codex is up to date"]
    files = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert _run(["pipeline", "init", "--target", "codex"], repo, env).returncode == 0
    assert {p: p.read_bytes() for p in files} == files  # idempotent: byte for byte


def _allowed(repo: Path, target: str) -> list[str]:
    return shlex.split(_hooks(repo)[f"pipeline-export-{target}"]["entry"])[4:]
