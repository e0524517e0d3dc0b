"""`pipeline export agents-md` proven on a real CLI that reads AGENTS.md: Codex CLI 0.169.0
(tests/agents/npm_install.py), headless against the loopback Responses server with the recipe
`pipeline export agents-md --verify` runs (:class:`pipeline.export.verify.agents.AgentsMdRecipe`).
Codex sends the project's AGENTS.md as a user input item (`# AGENTS.md instructions for <cwd>`):
the team's sections in the export's block and the user's own text around it both reach the model.
No skip: a failed install fails the test with npm's message.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.export.verify.agents import RECIPES, Invocation, string_leaves

sys.path.insert(0, str(Path(__file__).resolve().parent))
from npm_install import AgentInstallError, agent_env  # noqa: E402

TEAM = """\
extends: builtin:examples/team
name: team
system_prompt:
  sections:
    - {id: house_style, after: rules, text: "Prefer short functions with one purpose."}
    - {id: review_rules, after: house_style, kind: rules, item: "- ${rule}",
       rules: [{text: Never commit secrets.}, {text: Name every new file in the changelog.}]}
    - {id: where, after: review_rules, text: "Build from ${cwd} with make."}
"""
HAND = "# Our project\n\nRun the tests with make check before committing.\n"


@pytest.fixture(scope="module")
def codex_env() -> dict:
    try:
        return agent_env("codex")
    except AgentInstallError as err:
        pytest.fail(f"the real Codex CLI 0.169.0 could not be installed: {err}")


def _pipeline(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env=env)


def _static_sections(profile: str, project: Path) -> dict[str, str]:
    """The sections as a static file holds them: rendered in ``project`` without pi's tool catalog
    (the reader's own tools bring their guidance)."""
    from pipeline import compile_profile
    from pipeline.export.static_prompt import rendered_for

    return {k: s.text for k, s in rendered_for(compile_profile(profile), str(project), False).items()}


def _sent(tmp_path: Path, env: dict, project: Path) -> list[str]:
    """Every string of Codex's first request (tools left out)."""
    recipe = RECIPES["agents-md"]()
    run = recipe.run("codex", project, tmp_path / "home", [Invocation("Say ok.")], 180, env)
    assert run.returncode == 0, run.stderr
    assert run.bodies, "codex sent no request"
    return [text for _, text in string_leaves(run.bodies[0])]


def test_the_team_sections_and_the_users_text_reach_codex(tmp_path, codex_env):
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text(HAND)
    (tmp_path / "team.yaml").write_text(TEAM)
    done = _pipeline("export", "agents-md", str(tmp_path / "team.yaml"), "--project", str(project), "--format",
                     "json", cwd=project)
    assert done.returncode == 0, done.stderr
    report = {c["key"]: c for c in json.loads(done.stdout)["report"]}
    sections = _static_sections(str(tmp_path / "team.yaml"), project)
    native = [k.removeprefix("system_prompt.sections.") for k, c in report.items()
              if k.startswith("system_prompt.sections.") and c["how"] == "native"]
    assert {"house_style", "review_rules"} <= set(native)
    sent = "\n".join(_sent(tmp_path, codex_env, project))
    for section in native:  # every line of every section the report carries reaches the model
        for line in sections[section].splitlines():
            assert line in sent, (section, line)
    assert "Run the tests with make check before committing." in sent  # the user's text too
    assert sections["where"] not in sent  # a section holding the working directory is lost, and absent
    assert report["system_prompt.sections.where"]["how"] == "lost"


def test_without_the_export_codex_sends_only_the_users_agents_md(tmp_path, codex_env):
    """The control: the team's sentence is in Codex's request only through the export's block."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text(HAND)
    sent = "\n".join(_sent(tmp_path, codex_env, project))
    assert "make check before committing" in sent and "Prefer short functions" not in sent


def test_verify_runs_codex_on_the_agents_md_export(tmp_path, codex_env):
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text(HAND)
    (tmp_path / "team.yaml").write_text(TEAM)
    env = dict(codex_env, HOME=str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    done = _pipeline("export", "agents-md", str(tmp_path / "team.yaml"), "--project", str(project), "--verify",
                     "--format", "json", cwd=project, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    verify = json.loads(done.stdout)["verify"]
    items = {i["key"]: i for i in verify["items"]}
    assert verify["ok"] is True and "codex-cli 0.169.0" in verify["version"]
    for key in ("system_prompt.sections.house_style", "system_prompt.sections.review_rules"):
        assert items[key]["status"] == "ok", items[key]
    # an AGENTS.override.md beside it is what Codex reads instead: verify fails and names it
    (project / "AGENTS.override.md").write_text("Other rules.\n")
    done = _pipeline("export", "agents-md", str(tmp_path / "team.yaml"), "--project", str(project), "--verify",
                     "--check", "--allow-loss", "system_prompt.sections", "compaction", "summary", "summarizer",
                     "retry", "--format", "json", cwd=project, env=env)
    verify = json.loads(done.stdout)["verify"]
    assert done.returncode == 1 and verify["ok"] is False
    assert {i["status"] for i in verify["items"] if i["key"].startswith("system_prompt.sections.")} == {"mismatch"}
    assert any(s["path"].endswith("AGENTS.override.md") for s in verify["shadows"])
