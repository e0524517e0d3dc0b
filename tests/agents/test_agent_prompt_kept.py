"""The agent's own prompt is kept (issue 29, point 6), proven on the five real CLIs.

For the starter profile (`pipeline init` writes it), `builtin:default`, `builtin:pi-1` and an
overlay that adds team sections (`system_prompt.base: agent`, the default), `pipeline export
TARGET` writes, each CLI runs once headless against its loopback server (the harnesses of the
other tests in this folder), and its first request must hold

* a phrase of the agent's own system prompt's tool guidance (found in each CLI's captured
  request without an export: Claude Code's "Prefer the dedicated file/search tools",
  Codex's "Use the `apply_patch` tool to edit files", opencode's "# Tool usage policy",
  Gemini CLI's "Use 'read_file' to understand context"), in the place the agent sends it;
* the team's sections, where the agent reads project instructions, and the user's own
  instruction file beside them, unchanged;
* none of pi's tool rules or pi's identity.

pi keeps pi's default plus the team's sections: its request is `pipeline render` of the profile.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from npm_install import AgentInstallError, agent_env  # noqa: E402
from test_export_claude_code import _blocks, _claude  # noqa: E402
from test_export_codex import _codex  # noqa: E402
from test_export_codex import _texts as _codex_texts  # noqa: E402
from test_export_gemini import _gemini  # noqa: E402
from test_export_gemini import _texts as _gemini_texts  # noqa: E402
from test_export_opencode import _opencode, _text  # noqa: E402
from test_export_pi import _run_pi, _system, _world  # noqa: E402

from pipeline.testing.loopback import LoopbackServer  # noqa: E402

PROFILES = ("starter", "builtin:default", "builtin:pi-1", "overlay")
OVERLAY = """\
extends: builtin:default
name: team-overlay
system_prompt:
  sections:
    - {id: house_style, after: rules, text: "House style: prefer short functions with one purpose."}
    - id: team_rules
      after: house_style
      kind: rules
      heading: "Team rules:"
      item: "- ${rule}"
      rules: [{from: tool_guidelines}, {text: "Run make check before you call a change done."}]
"""
TEAM = ("House style: prefer short functions with one purpose.", "Team rules:\n- Run make check before you call a "
        "change done.")
#: pi's tool rules and identities (builtin:default, builtin:pi-1): none may reach another agent
PI = ("Each edits[].oldText has to match", "Look at the PI_* environment variables",
      "Open files with read rather than", "You are a careful software engineer",
      "You are a coding assistant working inside the user's project")
USERS = "Our own rule: the user's file, as written."


def _pipeline(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture(scope="module")
def profiles(tmp_path_factory) -> dict[str, str]:
    """Each profile as `pipeline export` takes it: the starter from a real `pipeline init`."""
    repo = tmp_path_factory.mktemp("init")
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    done = _pipeline("init", cwd=repo)
    assert done.returncode == 0, done.stderr
    (overlay := repo / "overlay.yaml").write_text(OVERLAY)
    return {"starter": str(repo / "agent-profiles" / "team.yaml"), "builtin:default": "builtin:default",
            "builtin:pi-1": "builtin:pi-1", "overlay": str(overlay)}


def _env(name: str) -> dict:
    try:
        return agent_env(name)
    except AgentInstallError as err:
        pytest.fail(f"the real {name} could not be installed: {err}")


@pytest.fixture(scope="module")
def envs() -> dict[str, dict]:
    return {}


def _agent_env(envs: dict, name: str) -> dict:
    if name not in envs:
        envs[name] = _env(name)
    return envs[name]


def _export(target: str, profile: str, project: Path) -> dict:
    done = _pipeline("export", target, profile, "--project", str(project), "--format", "json", cwd=project)
    assert done.returncode == 0, done.stderr
    report = {c["key"]: c for c in json.loads(done.stdout)["report"]}
    assert report["system_prompt"]["how"] == "own", report["system_prompt"]
    return report


def _check(which: str, report: dict, own: str, own_phrase: str, team_place: str, request: str) -> None:
    """The agent's own guidance kept, the team's sections where it reads them, nothing of pi's."""
    assert own_phrase in own, own[:3000]
    for phrase in PI:
        assert phrase not in request, phrase
    assert USERS in request  # the user's own instruction file still reaches the model
    if which == "overlay":
        for phrase in TEAM:
            assert phrase in team_place, (phrase, team_place[-3000:])
        assert report["system_prompt.sections.house_style"]["how"] == "native"
        assert report["system_prompt.sections.team_rules"]["how"] == "native"
    else:  # no team section: the agent's prompt is its own, and nothing of the profile's prompt is written
        assert all(c["how"] != "native" for k, c in report.items() if k.startswith("system_prompt.sections.")), report
        for phrase in TEAM:
            assert phrase not in request


def _project(tmp_path: Path, users_file: str) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / users_file).write_text(USERS + "\n")
    return project


@pytest.mark.parametrize("which", PROFILES)
def test_claude_code_keeps_its_prompt_and_reads_the_team_sections(tmp_path, profiles, envs, which):
    project = _project(tmp_path, "CLAUDE.md")
    report = _export("claude-code", profiles[which], project)
    body = _claude(tmp_path, _agent_env(envs, "claude-code"), project, "hi", ["ok"])[0]
    own = "".join(b["text"] for b in body["system"])
    first_user = "".join(_blocks(body["messages"][0]["content"]))
    _check(which, report, own, "Prefer the dedicated file/search tools", first_user, json.dumps(body))
    assert (project / "CLAUDE.md").read_text() == USERS + "\n"


@pytest.mark.parametrize("which", PROFILES)
def test_codex_keeps_its_instructions_and_reads_the_team_sections(tmp_path, profiles, envs, which):
    project = _project(tmp_path, "AGENTS.md")
    report = _export("codex", profiles[which], project)
    body = _codex(tmp_path, _agent_env(envs, "codex"), project, "hi", [{"text": "ok"}])[0]
    developer = "\n".join(_codex_texts(body, "developer"))
    _check(which, report, developer + body.get("instructions", ""), "Use the `apply_patch` tool to edit files",
           developer, json.dumps(body))


@pytest.mark.parametrize("which", PROFILES)
def test_opencode_keeps_its_prompt_and_reads_the_team_sections(tmp_path, profiles, envs, which):
    project = _project(tmp_path, "AGENTS.md")
    report = _export("opencode", profiles[which], project)
    body = _opencode(tmp_path, _agent_env(envs, "opencode"), project, ["hi"], [{"text": "ok"}])[0]
    system = "\n".join(_text(m) for m in body["messages"] if m["role"] == "system")
    _check(which, report, system, "# Tool usage policy", system, json.dumps(body))


@pytest.mark.parametrize("which", PROFILES)
def test_gemini_keeps_its_instruction_and_reads_the_team_sections(tmp_path, profiles, envs, which):
    project = _project(tmp_path, "GEMINI.md")
    report = _export("gemini", profiles[which], project)
    body = _gemini(tmp_path, _agent_env(envs, "gemini"), project, "hi")[0]
    own = "".join(_gemini_texts(body["systemInstruction"]))
    first_user = "".join(_gemini_texts(body["contents"][0]))
    _check(which, report, own, "Use 'read_file' to understand context", first_user, json.dumps(body))
    assert (project / "GEMINI.md").read_text().startswith(USERS + "\n")  # the user's lines stay, first


@pytest.mark.parametrize("which", ("starter", "overlay"))
def test_pi_keeps_pis_default_and_the_team_sections(tmp_path, profiles, envs, which):
    """pi's own prompt is the profile's: the request is `pipeline render` of it (builtin:default and
    builtin:pi-1 are test_export_pi.py::test_pi_sends_the_profile_prompt)."""
    with LoopbackServer([{"text": "ok"}]) as server:
        project, env = _world(tmp_path, server, _agent_env(envs, "pi"))
        done = subprocess.run([sys.executable, "-m", "pipeline", "export", "pi", profiles[which], "--project",
                               str(project)], cwd=project, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        _run_pi(project, env, "hi")
        sent = _system(server)
    rendered = subprocess.run([sys.executable, "-m", "pipeline", "render", profiles[which], "--discover", "--cwd",
                               str(project), "--tools", "read,bash,edit,write"], cwd=project, env=env,
                              capture_output=True, text=True, timeout=120)
    assert rendered.returncode == 0, rendered.stderr
    assert sent == rendered.stdout[:-1]
    assert "Each edits[].oldText has to match" in sent  # pi's tool rules: pi's own prompt
    # for pi the team's rules section lists pi's tool guidelines too, before the team's own rule
    for phrase in ("House style: prefer short functions", "Team rules:\n- Open files with read",
                   "- Run make check before you call a change done."):
        assert (phrase in sent) is (which == "overlay")
