"""What the real-CLI export tests of the later targets (agents-md, qwen-code, kilo, copilot) share:
the `pipeline` subprocess, a git project holding hand-written files, one headless run of a CLI
through the recipe `pipeline export TARGET --verify` runs (with a scripted loopback server when a
test needs one), and the sections as the export's static file holds them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping

import pytest

from pipeline.export.verify.agents import RECIPES, Invocation, Recipe, texts
from pipeline.loopback.chat import LoopbackServer

from npm_install import AgentInstallError, agent_env

#: a profile with two team sections (one holding the working directory) and the test's ./prompts templates
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


def cli_env(name: str, label: str, **extra: str) -> dict:
    """The environment with the pinned CLI ``name`` on PATH; the test fails (never skips) without it."""
    try:
        return dict(agent_env(name), **extra)
    except AgentInstallError as err:
        pytest.fail(f"the real {label} could not be installed: {err}")


def env_fixture(fixture: str, name: str, label: str, **extra: str) -> Any:
    """A module-scoped fixture named ``fixture``: :func:`cli_env` of the pinned CLI ``name``."""

    @pytest.fixture(scope="module", name=fixture)
    def env() -> dict:
        return cli_env(name, label, **extra)

    return env


def pipeline_cli(*args: str, cwd: Path, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


def git_project(root: Path, files: Mapping[str, str]) -> Path:
    """A fresh git project at ``root`` holding ``files`` (relative path -> text)."""
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def export_report(target: str, profile: Path | str, project: Path) -> dict[str, dict]:
    """``pipeline export TARGET PROFILE --project PROJECT``'s report, by key (the export must succeed)."""
    done = pipeline_cli("export", target, str(profile), "--project", str(project), "--format", "json", cwd=project)
    assert done.returncode == 0, done.stderr
    return {c["key"]: c for c in json.loads(done.stdout)["report"]}


def exported(target: str, tmp_path: Path, profile_text: str, prompts: Mapping[str, str],
             files: Mapping[str, str]) -> tuple[Path, Path, dict[str, dict]]:
    """``profile_text`` as ``tmp_path/team.yaml``, its ``prompts`` (name -> text) in ``tmp_path/prompts``,
    exported to ``target`` in a fresh git project holding ``files``: the profile, the project, the report."""
    (tmp_path / "prompts").mkdir(exist_ok=True)
    for name, text in prompts.items():
        (tmp_path / "prompts" / name).write_text(text)
    profile = tmp_path / "team.yaml"
    profile.write_text(profile_text)
    project = git_project(tmp_path / "project", files)
    return profile, project, export_report(target, profile, project)


def export_replacing(target: str, tmp_path: Path, profile: Path, project: Path) -> dict[str, dict]:
    """``profile`` with ``system_prompt.base: profile``, exported to ``target`` in ``project``: the report."""
    replacing = tmp_path / "replacing.yaml"
    replacing.write_text(f"extends: {profile}\nname: replacing\nsystem_prompt:\n  base: profile\n")
    return export_report(target, replacing, project)


def run_cli(target: str, tmp_path: Path, env: dict, project: Path, invocation: Invocation | str,
            replies: list[Any] | None = None, recipe: Recipe | None = None, timeout: float = 600) -> list[dict]:
    """One headless run of ``target``'s CLI in ``project`` (a fresh home each time); its requests.
    ``replies``: the loopback server's script (default one plain answer)."""
    recipe = recipe or RECIPES[target]()
    if replies is not None:
        recipe.server = lambda: LoopbackServer(replies)  # type: ignore[method-assign]
    home = tmp_path / f"home-{len(list(tmp_path.glob('home-*')))}"
    typed = Invocation(invocation) if isinstance(invocation, str) else invocation
    run = recipe.run(recipe.binary, project, home, [typed], timeout, env)
    assert run.returncode == 0, (run.stdout[-1000:], run.stderr[-2000:])
    assert run.bodies, f"{recipe.binary} sent no request"
    return [dict(b) for b in run.bodies]


def static_sections(profile: Path | str, project: Path, replaces: bool | None = None) -> dict[str, str]:
    """The sections as the export's static file holds them, rendered in ``project``."""
    from pipeline import compile_profile
    from pipeline.export.static_prompt import rendered_for

    return {k: s.text for k, s in rendered_for(compile_profile(str(profile)), str(project), replaces).items()}


def assert_native_sections_in(text: str, report: dict, sections: dict[str, str]) -> list[str]:
    """Every line of every section the report calls native is in ``text``; the native ids."""
    native = [k.removeprefix("system_prompt.sections.") for k, c in report.items()
              if k.startswith("system_prompt.sections.") and c["how"] == "native"]
    assert native, report
    for section in native:
        for line in sections[section].splitlines():
            assert line in text, (section, line)
    return native


def user_text(body: dict, leave_out: str) -> str:
    """The last user message's text, without the parts the agent adds (starting with ``leave_out``)."""
    users = [m for m in body["messages"] if m.get("role") == "user"]
    return "".join(t for t in texts(users[-1]["content"]) if not t.lstrip().startswith(leave_out)).rstrip("\n")
