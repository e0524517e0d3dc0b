"""`pipeline export kilo` proven on the real Kilo CLI 7.7.7 (tests/agents/npm_install.py).

Kilo runs headless (`kilo run MSG`, `kilo run --command NAME ARGS`) against the loopback OpenAI
chat-completions server with the recipe `pipeline export kilo --verify` runs
(:class:`pipeline.export.verify.agents.KiloRecipe`: the provider in the throwaway XDG config
folder's kilo/kilo.json, KILO_DISABLE_MODELS_FETCH), in a project where the export wrote. Each
run takes 15-45 s (startup). No skip: a failed install fails the test with npm's message.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pipeline.export.verify.agents import Invocation, KiloRecipe, system_message, texts
from pipeline.loopback.chat import LoopbackServer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from npm_install import AgentInstallError, agent_env  # noqa: E402

TIMEOUT = 300
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
RECAP = "---\ndescription: Recap\n---\nRecap all: $@ (end)\n"
FIRST = "First $1 then $2 (end)\n"


@pytest.fixture(scope="module")
def kilo_env() -> dict:
    try:
        return agent_env("kilo")
    except AgentInstallError as err:
        pytest.fail(f"the real Kilo CLI 7.7.7 could not be installed: {err}")


class _Scripted(KiloRecipe):
    def __init__(self, replies: list[Any], model: dict | None = None) -> None:
        super().__init__(model)
        self.replies = replies

    def server(self) -> Any:
        return LoopbackServer(self.replies)


def _run(tmp_path: Path, env: dict, project: Path, invocation: Invocation, replies: list[Any] | None = None,
         model: dict | None = None) -> list[dict]:
    home = tmp_path / f"home-{len(list(tmp_path.glob('home-*')))}"
    run = _Scripted(replies or ["ok"], model).run("kilo", project, home, [invocation], TIMEOUT, env)
    assert run.returncode == 0, (run.stdout[-1000:], run.stderr[-2000:])
    assert run.bodies, "kilo sent no request"
    return [dict(b) for b in run.bodies]


def _pipeline(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def _setup(tmp_path: Path, profile_text: str = TEAM) -> tuple[Path, Path, dict]:
    (tmp_path / "prompts").mkdir(exist_ok=True)
    (tmp_path / "prompts" / "recap.md").write_text(RECAP)
    (tmp_path / "prompts" / "first.md").write_text(FIRST)
    profile = tmp_path / "team.yaml"
    profile.write_text(profile_text)
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "AGENTS.md").write_text("Run the tests with make check before committing.\n")
    done = _pipeline("export", "kilo", str(profile), "--project", str(project), "--format", "json", cwd=project)
    assert done.returncode == 0, done.stderr
    return profile, project, {c["key"]: c for c in json.loads(done.stdout)["report"]}


def test_the_team_sections_and_a_command_reach_kilo(tmp_path, kilo_env):
    from pipeline import compile_profile
    from pipeline.export.static_prompt import rendered_for

    profile, project, report = _setup(tmp_path)
    system = system_message(_run(tmp_path, kilo_env, project, Invocation("Say ok."))[0]) or ""
    sections = {k: s.text for k, s in rendered_for(compile_profile(str(profile)), str(project)).items()}
    native = [k.removeprefix("system_prompt.sections.") for k, c in report.items()
              if k.startswith("system_prompt.sections.") and c["how"] == "native"]
    assert "house_style" in native
    for section in native:  # every line of every native section, at system level
        for line in sections[section].splitlines():
            assert line in system, (section, line)
    assert system.startswith("You are Kilo") and "make check before committing" in system
    assert report["system_prompt.sections.where"]["how"] == "lost" and "Build from" not in system
    # one command with arguments, as `pipeline expand` gives it
    assert report["templates.recap"]["where"].startswith(".kilo/command/recap.md")
    expanded = _pipeline("expand", "/recap a.py b.py", "--profile", str(profile), cwd=project)
    assert expanded.returncode == 0, expanded.stderr
    body = _run(tmp_path, kilo_env, project, Invocation("/recap a.py b.py", "recap", ("a.py", "b.py")))[0]
    users = [m for m in body["messages"] if m.get("role") == "user"]
    assert _sent(body) == expanded.stdout.rstrip("\n") == "Recap all: a.py b.py (end)"


def test_the_highest_positional_takes_the_rest_as_the_report_notes(tmp_path, kilo_env):
    """Kilo's `$2` with three arguments is `b c`: the report's note says so, and what Kilo sends is the
    exported file's expansion in opencode's dialect (pi's would be `b`)."""
    profile, project, report = _setup(tmp_path)
    assert "the highest `$N` also takes every argument after it" in report["templates.first"]["where"]
    assert "Kilo CLI" in report["templates.first"]["where"]
    typed = "/first a b c"
    pi = _pipeline("expand", typed, "--profile", str(profile), cwd=project)
    dialect = _pipeline("expand", typed, "--dialect", "opencode", "--templates-dir", str(project / ".kilo/command"),
                        cwd=project)
    assert pi.stdout.rstrip("\n") == "First a then b (end)"
    body = _run(tmp_path, kilo_env, project, Invocation(typed, "first", ("a", "b", "c")))[0]
    assert _sent(body) == dialect.stdout.rstrip("\n") == "First a then b c (end)"


def _sent(body: dict) -> str:
    users = [m for m in body["messages"] if m.get("role") == "user"]
    return "".join(t for t in texts(users[-1]["content"]) if not t.lstrip().startswith("<environment_details>")) \
        .rstrip("\n")


def test_base_profile_is_kilos_agent_prompt_after_its_opening(tmp_path, kilo_env):
    profile, project, _ = _setup(tmp_path)
    replacing = tmp_path / "replacing.yaml"
    replacing.write_text(f"extends: {profile}\nname: replacing\nsystem_prompt:\n  base: profile\n")
    done = _pipeline("export", "kilo", str(replacing), "--project", str(project), cwd=project)
    assert done.returncode == 0, done.stderr
    config = json.loads((project / "kilo.json").read_text())
    assert config["agent"]["code"]["prompt"] == "{file:./.kilo/context-pipeline/prompt.md}"
    system = system_message(_run(tmp_path, kilo_env, project, Invocation("Say ok."))[0]) or ""
    written = (project / ".kilo/context-pipeline/prompt.md").read_text().strip()
    assert written in system and system.startswith("You are Kilo")  # after Kilo's opening, which stays
    assert system.index(written) < 2000


#: a model with a small window: the first reply reads a file and reports 7,950 of its 8,000 tokens (over the
#: 7,900 Kilo can use: the window less the output limit)
SMALL = {"limit": {"context": 8000, "output": 100}}
FULL = [{"toolCalls": [{"name": "read", "arguments": {"filePath": "AGENTS.md"}}], "usage": {"input": 7950}},
        "summary", "done"]


@pytest.mark.parametrize("enabled", [True, False])
def test_kilo_compacts_as_the_exported_auto_says(tmp_path, kilo_env, enabled):
    text = TEAM + f"compaction:\n  enabled: {str(enabled).lower()}\n  keep_recent_tokens: 1234\n"
    _, project, report = _setup(tmp_path, text)
    config = json.loads((project / "kilo.json").read_text())
    assert config["compaction"]["auto"] is enabled and config["compaction"]["preserve_recent_tokens"] == 1234
    assert report["compaction.enabled"]["how"] == "native"
    bodies = _run(tmp_path, kilo_env, project, Invocation("read AGENTS.md"), FULL, SMALL)
    summaries = [b for b in bodies if "Here is the conversation so far" in json.dumps(b.get("messages", [])[-1:])]
    assert bool(summaries) is enabled, [json.dumps(b["messages"][-1])[:200] for b in bodies]
