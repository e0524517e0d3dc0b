"""`pipeline export gemini` proven on the real Gemini CLI 0.61.0 (tests/agents/npm_install.py).

Gemini CLI runs headless (`gemini -p ... -m gemini-2.5-flash`, HOME in a temporary folder
whose settings select the API-key auth, GEMINI_API_KEY, GOOGLE_GEMINI_BASE_URL at the
loopback Gemini server of pipeline/testing/loopback_gemini.py, GEMINI_CLI_TRUST_WORKSPACE
since headless runs refuse untrusted folders) in a project where `pipeline export gemini`
wrote. No skip: a missing npm or a failed install fails the test with npm's message.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.testing.loopback_gemini import GeminiLoopbackServer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from npm_install import AgentInstallError, agent_env  # noqa: E402

GEMINI_TIMEOUT = 180


def _pipeline(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def _replacing(tmp_path: Path, profile: str) -> str:
    """``profile`` with ``system_prompt.base: profile``: its whole prompt in place of the agent's own
    (the default keeps the agent's prompt: tests/agents/test_agent_prompt_kept.py)."""
    path = tmp_path / "replacing.yaml"
    path.write_text(f"extends: {profile}\nname: replacing\nsystem_prompt:\n  base: profile\n")
    return str(path)


@pytest.fixture(scope="module")
def gemini_env() -> dict:
    try:
        return agent_env("gemini")
    except AgentInstallError as err:
        pytest.fail(f"the real Gemini CLI 0.61.0 could not be installed: {err}")


def _gemini(tmp_path: Path, base: dict, project: Path, message: str) -> list[dict]:
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini/settings.json").write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
    with GeminiLoopbackServer(["ok"], max_requests=10, timeout=GEMINI_TIMEOUT) as server:
        env = dict(base, HOME=str(home), GEMINI_API_KEY="x", GOOGLE_GEMINI_BASE_URL=server.url,
                   GEMINI_CLI_TRUST_WORKSPACE="true")
        done = subprocess.run(["gemini", "-p", message, "-m", "gemini-2.5-flash"], cwd=project, env=env,
                              capture_output=True, text=True, timeout=GEMINI_TIMEOUT)
        bodies = [b for b in server.bodies if isinstance(b, dict)]
    assert done.returncode == 0, f"gemini failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert bodies, "gemini sent no request"
    return bodies


def _export(profile: str, project: Path) -> dict:
    done = _pipeline("export", "gemini", profile, "--project", str(project), "--format", "json", cwd=project)
    assert done.returncode == 0, done.stderr
    return {c["key"]: c for c in json.loads(done.stdout)["report"]}


def _texts(content: dict) -> list[str]:
    return [p["text"] for p in content.get("parts", []) if "text" in p]


OVERLAY = """\
extends: builtin:examples/team
name: overlay
system_prompt:
  sections:
    - {id: identity, text: "You help a small team keep its build green in ${cwd}."}
    - {id: house_style, after: identity, text: "Prefer short functions with one purpose."}
"""


@pytest.mark.parametrize("profile", ["builtin:default", "builtin:pi-1", "builtin:examples/team", "overlay"])
def test_gemini_sends_every_native_section_as_its_system_instruction(tmp_path, gemini_env, profile):
    if profile == "overlay":
        (tmp_path / "overlay.yaml").write_text(OVERLAY)
        profile = str(tmp_path / "overlay.yaml")
    project = tmp_path / "project"
    project.mkdir()
    (project / "GEMINI.md").write_text("Run the tests with make check before committing.\n")
    report = _export(_replacing(tmp_path, profile), project)
    bodies = _gemini(tmp_path, gemini_env, project, "hi")
    system = "".join(_texts(bodies[0]["systemInstruction"]))
    assert system == (project / ".gemini/system.md").read_text().strip()  # the whole instruction, Gemini's own gone
    rendered = _pipeline("render", profile, "--cwd", str(project), "--format", "json", cwd=project)
    assert rendered.returncode == 0, rendered.stderr
    sections = {s["id"]: s["text"] for s in json.loads(rendered.stdout)["sections"]}
    native = [k.removeprefix("system_prompt.sections.") for k, c in report.items()
              if k.startswith("system_prompt.sections.") and c["how"] in ("native", "mismatch")]
    assert native
    for section in native:
        assert sections[section] in system, section
    for key, c in report.items():
        section = key.removeprefix("system_prompt.sections.")
        if c["how"] == "lost" and sections.get(section) and str(project) in sections[section]:
            assert sections[section] not in system
    # the user's GEMINI.md still reaches the model, in the first user message
    assert "make check before committing" in "".join(_texts(bodies[0]["contents"][0]))
    if profile.endswith("overlay.yaml"):
        assert report["system_prompt.sections.identity"]["how"] == "lost"
        assert "short functions with one purpose" in system


def test_without_the_export_gemini_sends_its_own_instruction(tmp_path, gemini_env):
    project = tmp_path / "project"
    project.mkdir()
    system = "".join(_texts(_gemini(tmp_path, gemini_env, project, "hi")[0]["systemInstruction"]))
    assert "through a set of tools" not in system and len(system) > 2000


def test_an_exported_command_reaches_the_model_as_expand_gives_it(tmp_path, gemini_env):
    prompts = tmp_path / "profile" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text("---\ndescription: Review files\n---\nReview $@ and report every problem.\n")
    (prompts / "fix.md").write_text("Fix $1 first\n")
    profile = tmp_path / "profile" / "team.yaml"
    profile.write_text("extends: builtin:default\nname: team\ntemplates:\n  sources: [project, global, prompts]\n")
    project = tmp_path / "project"
    project.mkdir()
    report = _export(str(profile), project)
    assert report["templates.review"]["how"] == "native" and "as typed" in report["templates.review"]["where"]
    assert report["templates.fix"]["how"] == "lost" and "positional" in report["templates.fix"]["why"]
    assert "{{args}}" in (project / ".gemini/commands/review.toml").read_text()
    assert not (project / ".gemini/commands/fix.toml").exists()
    call = "/review src/app.py src/db.py"
    bodies = _gemini(tmp_path, gemini_env, project, call)
    sent = _texts(bodies[0]["contents"][-1])[-1]
    expanded = _pipeline("expand", call, "--profile", str(profile), cwd=project)
    assert expanded.returncode == 0, expanded.stderr
    assert sent.rstrip("\n") == expanded.stdout.rstrip("\n")
    assert "src/db.py" in sent
