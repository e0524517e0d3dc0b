"""`pipeline export copilot` proven on the real GitHub Copilot CLI 1.0.102 (tests/agents/npm_install.py).

Copilot runs headless (`copilot -p MSG --allow-all-tools`) against the loopback OpenAI
chat-completions server with the recipe `pipeline export copilot --verify` runs
(:class:`pipeline.export.verify.agents.CopilotRecipe`: BYOK through COPILOT_PROVIDER_BASE_URL,
COPILOT_OFFLINE, a throwaway COPILOT_HOME; its unpacked package cached under the agents' cache).
No GitHub account is needed. No skip: a failed install fails the test with npm's message.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


from pipeline.export.verify.agents import system_message

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_runs import TEAM, assert_native_sections_in, env_fixture, exported, git_project, pipeline_cli  # noqa: E402
from cli_runs import run_cli, static_sections  # noqa: E402
from npm_install import cache_root  # noqa: E402


# the first run unpacks Copilot's package: into the agents' cache, once
copilot_env = env_fixture("copilot_env", "copilot", "Copilot CLI 1.0.102",
                          COPILOT_CACHE_HOME=str(cache_root() / "copilot-cache"))


def _setup(tmp_path: Path) -> tuple[Path, Path, dict]:
    return exported("copilot", tmp_path, TEAM, {"recap.md": "Recap these files: $@ (end)\n"},
                    {"AGENTS.md": "Run the tests with make check before committing.\n"})


def test_the_team_sections_reach_copilots_system_message(tmp_path, copilot_env):
    profile, project, report = _setup(tmp_path)
    system = system_message(run_cli("copilot", tmp_path, copilot_env, project, "Say ok.")[0]) or ""
    assert "house_style" in assert_native_sections_in(system, report, static_sections(profile, project, False))
    assert system.startswith("You are the GitHub Copilot CLI")  # its own prompt first, the file after it
    assert system.index("Prefer short functions with one purpose.") > system.index("You are the GitHub Copilot CLI")
    assert "make check before committing" in system and "Build from" not in system


def test_a_command_is_lost_and_reaches_the_model_as_typed(tmp_path, copilot_env):
    """The report's `lost` for a template is what Copilot does: `/recap a b` arrives as typed."""
    _, project, report = _setup(tmp_path)
    assert report["templates.recap"]["how"] == "lost"
    sent = json.dumps(run_cli("copilot", tmp_path, copilot_env, project, "/recap a.py b.py")[0]["messages"])
    assert "/recap a.py b.py" in sent and "Recap these files" not in sent


def test_without_the_export_copilot_sends_no_team_section(tmp_path, copilot_env):
    project = git_project(tmp_path / "project", {})
    assert "Prefer short functions" not in json.dumps(run_cli("copilot", tmp_path, copilot_env, project, "Say ok.")[0])


def test_verify_runs_copilot(tmp_path, copilot_env):
    profile, project, _ = _setup(tmp_path)
    env = dict(copilot_env, HOME=str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    done = pipeline_cli("export", "copilot", str(profile), "--project", str(project), "--verify", "--format", "json",
                        cwd=project, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    verify = json.loads(done.stdout)["verify"]
    items = {i["key"]: i for i in verify["items"]}
    assert verify["ok"] is True and "1.0.102" in verify["version"]
    assert items["system_prompt.sections.house_style"]["status"] == "ok"
