"""`pipeline export qwen-code` proven on the real Qwen Code 0.24.4 (tests/agents/npm_install.py).

Qwen Code runs headless (`qwen -p MSG`) against the loopback OpenAI chat-completions server with
the recipe `pipeline export qwen-code --verify` runs
(:class:`pipeline.export.verify.agents.QwenCodeRecipe`: OPENAI_BASE_URL/OPENAI_API_KEY/OPENAI_MODEL,
a throwaway HOME whose settings turn its managed-memory side request off), in a project where
the export wrote. No skip: a failed install fails the test with npm's message.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pipeline.export.verify.agents import RECIPES, Invocation, system_message, texts
from pipeline.loopback.chat import LoopbackServer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from npm_install import AgentInstallError, agent_env  # noqa: E402

TIMEOUT = 240
TEAM = """\
extends: builtin:examples/team
name: team
system_prompt:
  sections:
    - {id: house_style, after: rules, text: "Prefer short functions with one purpose."}
    - {id: where, after: house_style, text: "Build from ${cwd} with make."}
templates:
  sources: [project, ./prompts]
compaction:
  trigger: {percent_of_window: 30}
"""
RECAP = "---\ndescription: Recap\n---\nRecap these files: $@ (end)\n"


@pytest.fixture(scope="module")
def qwen_env() -> dict:
    try:
        return agent_env("qwen-code")
    except AgentInstallError as err:
        pytest.fail(f"the real Qwen Code 0.24.4 could not be installed: {err}")


class _Scripted(type(RECIPES["qwen-code"]())):  # type: ignore[misc]
    """The --verify recipe with a scripted server (a reply that fills the context)."""

    def __init__(self, replies: list[Any]) -> None:
        self.replies = replies

    def server(self) -> Any:
        return LoopbackServer(self.replies)


def _run(tmp_path: Path, env: dict, project: Path, text: str, replies: list[Any] | None = None) -> list[dict]:
    recipe = _Scripted(replies or ["ok"])
    invocation = Invocation(text)
    home = tmp_path / f"home-{len(list(tmp_path.glob('home-*')))}"
    run = recipe.run("qwen", project, home, [invocation], TIMEOUT, env)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.bodies, "qwen sent no request"
    return [dict(b) for b in run.bodies]


def _pipeline(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def _setup(tmp_path: Path, profile_text: str = TEAM) -> tuple[Path, Path, dict]:
    (tmp_path / "prompts").mkdir(exist_ok=True)
    (tmp_path / "prompts" / "recap.md").write_text(RECAP)
    profile = tmp_path / "team.yaml"
    profile.write_text(profile_text)
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "QWEN.md").write_text("# Ours\nRun the tests with make check before committing.\n")
    done = _pipeline("export", "qwen-code", str(profile), "--project", str(project), "--format", "json", cwd=project)
    assert done.returncode == 0, done.stderr
    return profile, project, {c["key"]: c for c in json.loads(done.stdout)["report"]}


def _static_sections(profile: Path, project: Path) -> dict[str, str]:
    from pipeline import compile_profile
    from pipeline.export.static_prompt import rendered_for

    return {k: s.text for k, s in rendered_for(compile_profile(str(profile)), str(project)).items()}


def test_the_team_sections_reach_qwens_system_message(tmp_path, qwen_env):
    profile, project, report = _setup(tmp_path)
    system = system_message(_run(tmp_path, qwen_env, project, "Say ok.")[0]) or ""
    sections = _static_sections(profile, project)
    native = [k.removeprefix("system_prompt.sections.") for k, c in report.items()
              if k.startswith("system_prompt.sections.") and c["how"] == "native"]
    assert "house_style" in native
    for section in native:  # every line of every section the report carries, at system level
        for line in sections[section].splitlines():
            assert line in system, (section, line)
    assert "make check before committing" in system  # the user's own QWEN.md lines stay and are sent
    assert report["system_prompt.sections.where"]["how"] == "lost" and str(project) + " with make" not in system
    assert system.startswith("You are Qwen Code")  # Qwen Code's own prompt stays first (base: agent)


def test_a_command_reaches_the_model_as_pipeline_expand_gives_it(tmp_path, qwen_env):
    profile, project, report = _setup(tmp_path)
    assert report["templates.recap"]["where"].startswith(".qwen/commands/recap.toml")
    typed = "/recap src/app.py docs/readme.md"
    expanded = _pipeline("expand", typed, "--profile", str(profile), cwd=project)
    assert expanded.returncode == 0, expanded.stderr
    body = _run(tmp_path, qwen_env, project, typed)[0]
    users = [m for m in body["messages"] if m.get("role") == "user"]
    parts = [t for t in texts(users[-1]["content"]) if not t.lstrip().startswith("<system-reminder>")]
    assert parts[-1].rstrip("\n") == expanded.stdout.rstrip("\n") == "Recap these files: src/app.py docs/readme.md (end)"


def test_system_md_replaces_qwens_prompt_with_base_profile(tmp_path, qwen_env):
    profile, project, _ = _setup(tmp_path)
    replacing = tmp_path / "replacing.yaml"
    replacing.write_text(f"extends: {profile}\nname: replacing\nsystem_prompt:\n  base: profile\n")
    done = _pipeline("export", "qwen-code", str(replacing), "--project", str(project), cwd=project)
    assert done.returncode == 0, done.stderr
    assert (project / ".qwen/.env").read_text() == "QWEN_SYSTEM_MD=true\n"
    system = system_message(_run(tmp_path, qwen_env, project, "Say ok.")[0]) or ""
    written = (project / ".qwen/system.md").read_text().strip()
    assert system.startswith(written)  # the file's text in place of Qwen Code's own prompt
    assert "You are Qwen Code" not in system
    assert "make check before committing" in system  # QWEN.md still follows it


def test_without_the_export_qwen_sends_its_own_prompt_only(tmp_path, qwen_env):
    """The control: the team's sentence and the command exist in Qwen Code only through the export."""
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    sent = json.dumps(_run(tmp_path, qwen_env, project, "Say ok.")[0])
    assert "Prefer short functions" not in sent
    run = _Scripted(["ok"]).run("qwen", project, tmp_path / "home-x", [Invocation("/recap a b")], TIMEOUT, qwen_env)
    assert run.returncode != 0 and '"/recap" is not supported' in run.stderr and not run.bodies


#: the first reply reads a file and reports 100,000 prompt tokens (half of an unknown model's 200,000 window)
FULL = [{"toolCalls": [{"name": "read_file", "arguments": {"file_path": "QWEN.md"}}], "usage": {"input": 100_000}},
        "summary", "done"]


def _summary_requests(bodies: list[dict]) -> list[dict]:
    return [b for b in bodies if "summarizes a conversation" in (system_message(b) or "")]


@pytest.mark.parametrize("percent,compacts", [(30, True), (90, False)])
def test_qwen_compacts_at_the_exported_threshold(tmp_path, qwen_env, percent, compacts):
    _, project, report = _setup(tmp_path, TEAM.replace("percent_of_window: 30", f"percent_of_window: {percent}"))
    settings = json.loads((project / ".qwen/settings.json").read_text())
    assert settings["context"]["autoCompactThreshold"] == percent / 100
    assert report["compaction.trigger"]["how"] == "native"
    bodies = _run(tmp_path, qwen_env, project, "read QWEN.md", FULL)
    # 100,000 tokens pass 30% of the window (60,000) and not 90% (capped at the window less 33,000: 167,000)
    assert bool(_summary_requests(bodies)) is compacts, [system_message(b)[:80] for b in bodies]
