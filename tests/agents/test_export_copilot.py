"""`pipeline export copilot` proven on the real GitHub Copilot CLI 1.0.102 (tests/agents/npm_install.py).

Copilot runs headless (`copilot -p MSG --allow-all-tools`) against the loopback OpenAI
chat-completions server with the recipe `pipeline export copilot --verify` runs
(:class:`pipeline.export.verify.agents.CopilotRecipe`: BYOK through COPILOT_PROVIDER_BASE_URL,
COPILOT_OFFLINE, a throwaway COPILOT_HOME; its unpacked package cached under the agents' cache).
No GitHub account is needed. No skip: a failed install fails the test with npm's message.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.export.verify.agents import RECIPES, Invocation, system_message

sys.path.insert(0, str(Path(__file__).resolve().parent))
from npm_install import AgentInstallError, agent_env, cache_root  # noqa: E402

TIMEOUT = 600  # the first run unpacks Copilot's package into the cache
TEAM = """\
extends: builtin:examples/team
name: team
system_prompt:
  sections:
    - {id: house_style, after: rules, text: "Prefer short functions with one purpose."}
    - {id: where, after: house_style, text: "Build from ${cwd} with make."}
templates:
  sources: [project, ./prompts]
"""


@pytest.fixture(scope="module")
def copilot_env() -> dict:
    try:
        env = agent_env("copilot")
    except AgentInstallError as err:
        pytest.fail(f"the real Copilot CLI 1.0.102 could not be installed: {err}")
    return dict(env, COPILOT_CACHE_HOME=str(cache_root() / "copilot-cache"))


def _pipeline(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=TIMEOUT, env=env)


def _run(tmp_path: Path, env: dict, project: Path, text: str) -> list[dict]:
    home = tmp_path / f"home-{len(list(tmp_path.glob('home-*')))}"
    run = RECIPES["copilot"]().run("copilot", project, home, [Invocation(text)], TIMEOUT, env)
    assert run.returncode == 0, (run.stdout[-1000:], run.stderr[-2000:])
    assert run.bodies, "copilot sent no request"
    return [dict(b) for b in run.bodies]


def _setup(tmp_path: Path) -> tuple[Path, Path, dict]:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "recap.md").write_text("Recap these files: $@ (end)\n")
    profile = tmp_path / "team.yaml"
    profile.write_text(TEAM)
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "AGENTS.md").write_text("Run the tests with make check before committing.\n")
    done = _pipeline("export", "copilot", str(profile), "--project", str(project), "--format", "json", cwd=project)
    assert done.returncode == 0, done.stderr
    return profile, project, {c["key"]: c for c in json.loads(done.stdout)["report"]}


def test_the_team_sections_reach_copilots_system_message(tmp_path, copilot_env):
    from pipeline import compile_profile
    from pipeline.export.static_prompt import rendered_for

    profile, project, report = _setup(tmp_path)
    system = system_message(_run(tmp_path, copilot_env, project, "Say ok.")[0]) or ""
    sections = {k: s.text for k, s in rendered_for(compile_profile(str(profile)), str(project), False).items()}
    native = [k.removeprefix("system_prompt.sections.") for k, c in report.items()
              if k.startswith("system_prompt.sections.") and c["how"] == "native"]
    assert "house_style" in native
    for section in native:  # every line of every native section, at system level, after Copilot's prompt
        for line in sections[section].splitlines():
            assert line in system, (section, line)
    assert system.startswith("You are the GitHub Copilot CLI")
    assert system.index("Prefer short functions with one purpose.") > system.index("You are the GitHub Copilot CLI")
    assert "make check before committing" in system and "Build from" not in system


def test_a_command_is_lost_and_reaches_the_model_as_typed(tmp_path, copilot_env):
    """The report's `lost` for a template is what Copilot does: `/recap a b` arrives as typed."""
    _, project, report = _setup(tmp_path)
    assert report["templates.recap"]["how"] == "lost"
    body = _run(tmp_path, copilot_env, project, "/recap a.py b.py")[0]
    sent = json.dumps(body["messages"])
    assert "/recap a.py b.py" in sent and "Recap these files" not in sent


def test_without_the_export_copilot_sends_no_team_section(tmp_path, copilot_env):
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    assert "Prefer short functions" not in json.dumps(_run(tmp_path, copilot_env, project, "Say ok.")[0])


def test_verify_runs_copilot(tmp_path, copilot_env):
    profile, project, _ = _setup(tmp_path)
    env = dict(copilot_env, HOME=str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    done = _pipeline("export", "copilot", str(profile), "--project", str(project), "--verify", "--format", "json",
                     cwd=project, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    verify = json.loads(done.stdout)["verify"]
    items = {i["key"]: i for i in verify["items"]}
    assert verify["ok"] is True and "1.0.102" in verify["version"]
    assert items["system_prompt.sections.house_style"]["status"] == "ok"
