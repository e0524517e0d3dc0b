"""`pipeline export TARGET --verify` against the five real CLIs (pinned installs, tests/agents/npm_install.py).

Each CLI is put on PATH for the `pipeline` subprocess only; the user's HOME is a temporary
folder (where a test plants a user-level file to be reported). No skip: a failed install
fails the test with npm's message.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from npm_install import AgentInstallError, agent_env, cache_root  # noqa: E402

TARGETS = {"pi": "pi", "claude-code": "claude-code", "codex": "codex", "opencode": "opencode", "gemini": "gemini",
           "qwen-code": "qwen-code", "kilo": "kilo", "copilot": "copilot",
           "agents-md": "codex"}
SCAN = "---\ndescription: Scan files\n---\nReview $@ and report every problem.\n"


def _env(target: str, home: Path) -> dict:
    try:
        env = agent_env(TARGETS[target])
    except AgentInstallError as err:
        pytest.fail(f"the real {target} CLI could not be installed: {err}")
    home.mkdir(parents=True, exist_ok=True)
    return dict(env, HOME=str(home), XDG_CACHE_HOME=str(cache_root() / "opencode-xdg-cache"),
                COPILOT_CACHE_HOME=str(cache_root() / "copilot-cache"))


def _profile(tmp_path: Path) -> Path:
    prompts = tmp_path / "profile" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "scan.md").write_text(SCAN)
    profile = tmp_path / "profile" / "team.yaml"
    profile.write_text("extends: builtin:default\nname: team\ntemplates:\n  sources: [project, global, prompts]\n")
    return profile


def _pipeline(*args: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)


TEAM = ("system_prompt:\n  sections:\n"
        "    - {id: team_note, after: rules, text: \"Run make check before you call a change done.\"}\n"
        "    - {id: team_style, after: team_note, text: \"Keep functions short.\"}\n")


@pytest.mark.parametrize("target", list(TARGETS))
def test_an_export_verifies_on_the_real_cli(tmp_path, target):
    """The agent keeps its own prompt (builtin:default's sections are the agent's) and the team's
    sections reach it: --verify finds each of them, and every template, in what the CLI sends."""
    env = _env(target, tmp_path / "home")
    profile = _profile(tmp_path)
    profile.write_text(profile.read_text() + TEAM)
    project = tmp_path / "work" / "project"
    project.mkdir(parents=True)
    done = _pipeline("export", target, str(profile), "--project", str(project), "--verify", "--format", "json",
                     cwd=project, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out = json.loads(done.stdout)
    verify = out["verify"]
    assert verify["ok"] is True and verify["written_for"] == out["agent"]
    items = {i["key"]: i for i in verify["items"]}
    carried = [c["key"] for c in out["report"] if c["how"] in ("native", "extension")
               and c["key"].startswith(("system_prompt.sections.", "templates."))]
    for key in carried:  # every section and template the report carries was checked and found
        assert items[key]["status"] == "ok", items[key]
    if target != "pi":  # pi's extension renders the whole prompt: one `system_prompt` item, checked below
        assert {"system_prompt.sections.team_note", "system_prompt.sections.team_style"} <= set(carried)
    assert items["system_prompt"]["status"] == "ok", items["system_prompt"]  # pi: the whole prompt; others: their own
    if target != "pi":
        assert "none of the profile's 4 section(s) it stands in for (identity, tools, other_tools, rules)" in \
            items["system_prompt"]["detail"]
    if target not in ("codex", "copilot", "agents-md"):  # no commands with arguments there: lost
        assert items["templates.scan"]["status"] == "ok"
    assert f"verify: running {Path(verify['binary']).name} (1/" in done.stderr  # progress on stderr
    statuses = {i["status"] for i in verify["items"]}
    assert statuses <= {"ok", "not_observable"}
    if target in ("opencode", "kilo"):  # opencode and Kilo print the settings they read
        assert items["compaction.reserve_tokens"]["status"] == "ok"


def test_a_tampered_export_fails_naming_the_items(tmp_path):
    env = _env("gemini", tmp_path / "home")
    profile = _profile(tmp_path)
    profile.write_text(profile.read_text() + TEAM)
    project = tmp_path / "project"
    project.mkdir()
    assert _pipeline("export", "gemini", str(profile), "--project", str(project), cwd=project, env=env).returncode == 0
    gemini_md = project / "GEMINI.md"  # the team's sections, in the export's marked block
    gemini_md.write_text(gemini_md.read_text().replace("Run make check", "Run make lint"))
    command = project / ".gemini/commands/scan.toml"
    command.write_text(command.read_text().replace("every problem", "some problems"))
    done = _pipeline("export", "gemini", str(profile), "--project", str(project), "--check", "--verify",
                     "--format", "json", cwd=project, env=env)
    assert done.returncode == 1, done.stderr
    items = {i["key"]: i for i in json.loads(done.stdout)["verify"]["items"]}
    assert items["system_prompt.sections.team_note"]["status"] == "mismatch"
    assert "-Run make check" in items["system_prompt.sections.team_note"]["diff"]
    assert items["templates.scan"]["status"] == "mismatch"
    assert "+Review verify-arg-1 verify-arg-2 and report some problems." in items["templates.scan"]["diff"]
    assert items["system_prompt.sections.team_style"]["status"] == "ok"
    text = _pipeline("export", "gemini", str(profile), "--project", str(project), "--check", "--verify",
                     cwd=project, env=env)
    assert text.returncode == 1
    assert "2 item(s) differ or failed: system_prompt.sections.team_note, templates.scan" in text.stdout


def test_a_parent_claude_md_and_a_user_file_are_reported(tmp_path):
    env = _env("claude-code", tmp_path / "home")
    (tmp_path / "home/.claude").mkdir(parents=True)
    (tmp_path / "home/.claude/CLAUDE.md").write_text("Always answer in French.\n")
    (tmp_path / "work").mkdir()
    (tmp_path / "work/CLAUDE.md").write_text("Prefer tabs.\n")
    project = tmp_path / "work" / "project"
    project.mkdir()
    done = _pipeline("export", "claude-code", "builtin:default", "--project", str(project), "--verify",
                     "--format", "json", cwd=project, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    shadows = {s["path"]: s["what"] for s in json.loads(done.stdout)["verify"]["shadows"]}
    assert "parent folder" in shadows[str(tmp_path / "work/CLAUDE.md")]
    assert "user-level memory" in shadows[str(tmp_path / "home/.claude/CLAUDE.md")]


def test_a_cli_that_is_not_installed_is_a_clear_usage_error(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    env = dict(os.environ, PATH=os.path.dirname(sys.executable), HOME=str(tmp_path))
    done = _pipeline("export", "codex", "--project", str(project), "--verify", cwd=project, env=env)
    assert done.returncode == 2
    assert "`codex` (Codex CLI 0.169.0, the CLI --verify runs) is not installed" in done.stderr
    assert "--agent-bin PATH" in done.stderr and "Traceback" not in done.stderr
    missing = _pipeline("export", "codex", "--project", str(project), "--verify", "--agent-bin",
                        str(tmp_path / "nope"), cwd=project, env=env)
    assert missing.returncode == 2 and "is not an executable file" in missing.stderr


@pytest.mark.parametrize("profile", ["builtin:pi-1", "starter"])
def test_verify_shows_the_agents_own_prompt_kept_and_catches_pis_rules_sent(tmp_path, profile):
    """Issue 29, points 6 and 7: for a profile without team sections (builtin:pi-1, the starter) --verify
    still checks the agent's own prompt stands: none of pi's identity, tool list or tool rules in the
    request; pi's tool rules planted in CLAUDE.md are a mismatch (exit 1) naming the section."""
    env = _env("claude-code", tmp_path / "home")
    project = tmp_path / "project"
    project.mkdir()
    if profile == "starter":
        (project / ".git").mkdir()
        assert _pipeline("init", "--install", "cp==0.1", cwd=project, env=env).returncode == 0
        profile = "agent-profiles/team.yaml"
    done = _pipeline("export", "claude-code", profile, "--project", str(project), "--verify", "--format", "json",
                     cwd=project, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    items = {i["key"]: i for i in json.loads(done.stdout)["verify"]["items"]}
    assert items["system_prompt"]["status"] == "ok"
    assert "Claude Code's own system prompt: none of the profile's" in items["system_prompt"]["detail"]
    rules = _pipeline("render", profile, "--cwd", str(project), "--format", "json", cwd=project, env=env)
    assert rules.returncode == 0, rules.stderr
    sections = {s["id"]: s["text"] for s in json.loads(rules.stdout)["sections"]}
    (project / "CLAUDE.md").write_text(sections["rules"] + "\n")
    tampered = _pipeline("export", "claude-code", profile, "--project", str(project), "--check", "--verify",
                         "--format", "json", cwd=project, env=env)
    assert tampered.returncode == 1, tampered.stderr[-2000:]
    items = {i["key"]: i for i in json.loads(tampered.stdout)["verify"]["items"]}
    assert items["system_prompt"]["status"] == "mismatch"
    assert "stands in for were sent: rules in " in items["system_prompt"]["detail"]
