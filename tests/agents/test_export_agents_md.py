"""`pipeline export agents-md` proven on a real CLI that reads AGENTS.md: Codex CLI 0.169.0
(tests/agents/npm_install.py), headless against the loopback Responses server with the recipe
`pipeline export agents-md --verify` runs (:class:`pipeline.export.verify.agents.AgentsMdRecipe`).
Codex sends the project's AGENTS.md as a user input item (`# AGENTS.md instructions for <cwd>`):
the team's sections in the export's block and the user's own text around it both reach the model.
No skip: a failed install fails the test with npm's message.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pipeline.export.verify.agents import string_leaves

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_runs import (  # noqa: E402
    assert_native_sections_in,
    cli_env,
    export_report,
    git_project,
    pipeline_cli,
    run_cli,
    static_sections,
)

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
    return cli_env("codex", "Codex CLI 0.169.0")


def _sent(tmp_path: Path, env: dict, project: Path) -> list[str]:
    """Every string of Codex's first request (tools left out)."""
    return [text for _, text in string_leaves(run_cli("agents-md", tmp_path, env, project, "Say ok.")[0])]


def test_the_team_sections_and_the_users_text_reach_codex(tmp_path, codex_env):
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text(HAND)
    (tmp_path / "team.yaml").write_text(TEAM)
    report = export_report("agents-md", tmp_path / "team.yaml", project)
    sections = static_sections(tmp_path / "team.yaml", project, False)
    sent = "\n".join(_sent(tmp_path, codex_env, project))
    # every line of every section the report carries reaches the model
    assert {"house_style", "review_rules"} <= set(assert_native_sections_in(sent, report, sections))
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
    done = pipeline_cli("export", "agents-md", str(tmp_path / "team.yaml"), "--project", str(project), "--verify",
                     "--format", "json", cwd=project, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    verify = json.loads(done.stdout)["verify"]
    items = {i["key"]: i for i in verify["items"]}
    assert verify["ok"] is True and "codex-cli 0.169.0" in verify["version"]
    for key in ("system_prompt.sections.house_style", "system_prompt.sections.review_rules"):
        assert items[key]["status"] == "ok", items[key]
    # an AGENTS.override.md beside it is what Codex reads instead: verify fails and names it
    (project / "AGENTS.override.md").write_text("Other rules.\n")
    done = pipeline_cli("export", "agents-md", str(tmp_path / "team.yaml"), "--project", str(project), "--verify",
                     "--check", "--allow-loss", "system_prompt.sections", "compaction", "summary", "summarizer",
                     "retry", "--format", "json", cwd=project, env=env)
    verify = json.loads(done.stdout)["verify"]
    assert done.returncode == 1 and verify["ok"] is False
    assert {i["status"] for i in verify["items"] if i["key"].startswith("system_prompt.sections.")} == {"mismatch"}
    assert any(s["path"].endswith("AGENTS.override.md") for s in verify["shadows"])


def test_codex_in_a_sub_folder_sends_the_root_block_and_the_folders_block(tmp_path, codex_env):
    """Nested AGENTS.md (`folder: packages/api`): Codex, run in packages/api of a git repository, sends
    the AGENTS.md of every folder from the repository's root down to its working directory, so the
    request holds the root's block and the api package's; `--verify` checks the api sections in a run
    there (and the root's in a run at the root)."""
    project = git_project(tmp_path / "mono", {"AGENTS.md": HAND})
    api = project / "packages" / "api"
    api.mkdir(parents=True)
    (api / "AGENTS.md").write_text("# API package\n\nRun the api tests with make api-check.\n")
    (tmp_path / "mono.yaml").write_text(TEAM + '    - {id: api_rules, after: house_style, folder: packages/api, '
                                        'text: "API handlers validate every request body."}\n')
    report = export_report("agents-md", tmp_path / "mono.yaml", project)
    assert report["system_prompt.sections.api_rules"]["where"].startswith("packages/api/AGENTS.md")
    sent = "\n".join(_sent(tmp_path, codex_env, api))
    for line in ("Prefer short functions with one purpose.", "Never commit secrets.",  # the root's block
                 "Run the tests with make check before committing.",  # the user's root text
                 "API handlers validate every request body.", "make api-check"):  # the api package's
        assert line in sent, line
    at_root = "\n".join(_sent(tmp_path, codex_env, project))
    assert "Prefer short functions" in at_root and "API handlers validate" not in at_root
    env = dict(codex_env, HOME=str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    done = pipeline_cli("export", "agents-md", str(tmp_path / "mono.yaml"), "--project", str(project), "--verify",
                        "--format", "json", cwd=project, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    items = {i["key"]: i for i in json.loads(done.stdout)["verify"]["items"]}
    assert items["system_prompt.sections.api_rules"]["status"] == "ok"
    assert items["system_prompt.sections.house_style"]["status"] == "ok"
    # an AGENTS.override.md in packages/api is what Codex reads there instead: the api section
    # fails, the root's still holds, and the shadow names the folder's file
    (api / "AGENTS.override.md").write_text("Other api rules.\n")
    done = pipeline_cli("export", "agents-md", str(tmp_path / "mono.yaml"), "--project", str(project), "--verify",
                        "--format", "json", cwd=project, env=env)
    verify = json.loads(done.stdout)["verify"]
    items = {i["key"]: i for i in verify["items"]}
    assert done.returncode == 1 and items["system_prompt.sections.api_rules"]["status"] == "mismatch"
    assert items["system_prompt.sections.house_style"]["status"] == "ok"
    shadows = {s["path"]: s["what"] for s in verify["shadows"]}
    assert "packages/api/AGENTS.override.md in place of" in shadows[str(api / "AGENTS.override.md")]
    assert not any(path == str(project / "AGENTS.override.md") for path in shadows)
