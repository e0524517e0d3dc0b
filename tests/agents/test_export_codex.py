"""`pipeline export codex` proven on the real Codex CLI 0.169.0 (tests/agents/npm_install.py).

Codex runs headless (`codex exec --skip-git-repo-check "..."`, HOME and CODEX_HOME in a
temporary folder) against the loopback Responses API server
(:mod:`pipeline.testing.loopback_responses`), as a custom provider with `wire_api =
"responses"`, in a project where `pipeline export codex` wrote; the project is trusted in
CODEX_HOME's config.toml (Codex reads a project's `.codex/config.toml` only then). The tests
read the requests Codex sends. No skip: a missing npm or a failed install fails the test
with npm's message.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.export.verify.agents import codex_config
from pipeline.testing.loopback_responses import ResponsesLoopbackServer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from npm_install import AgentInstallError, agent_env  # noqa: E402

CODEX_TIMEOUT = 120


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
def codex_env() -> dict:
    try:
        return agent_env("codex")
    except AgentInstallError as err:
        pytest.fail(f"the real Codex CLI 0.169.0 could not be installed: {err}")


def _home(home: Path, server: ResponsesLoopbackServer, project: Path | None, extra: str = "") -> Path:
    """CODEX_HOME with a config.toml: the loopback provider added, and the project trusted."""
    home.mkdir(exist_ok=True)
    config = home / "config.toml"
    text = config.read_text() if config.exists() else ""
    text += codex_config(server.base_url, extra)  # the recipe `pipeline export codex --verify` runs with
    if project is not None:
        text += f'\n[projects."{project}"]\ntrust_level = "trusted"\n'
    config.write_text(text)
    return home


def _codex(tmp_path: Path, base: dict, project: Path, message: str, replies: list, *, trust: bool = True,
           extra: str = "", home: Path | None = None) -> list[dict]:
    with ResponsesLoopbackServer(replies, max_requests=12, timeout=CODEX_TIMEOUT) as server:
        codex_home = _home(home or tmp_path / "codex-home", server, project if trust and home is None else None,
                           extra)
        env = dict(base, HOME=str(tmp_path / "home"), CODEX_HOME=str(codex_home), LOOP_KEY="x",
                   XDG_CONFIG_HOME=str(tmp_path / "home" / ".config"))
        (tmp_path / "home").mkdir(exist_ok=True)
        done = subprocess.run(["codex", "exec", "--skip-git-repo-check", message], cwd=project, env=env,
                              capture_output=True, text=True, timeout=CODEX_TIMEOUT, stdin=subprocess.DEVNULL)
        bodies = [b for b in server.bodies if isinstance(b, dict) and "input" in b]
    assert done.returncode == 0, f"codex exited ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    assert bodies, "codex sent no request"
    return bodies


def _export(profile: str, root: Path, *extra: str, where: str = "--project") -> dict:
    done = _pipeline("export", "codex", profile, where, str(root), "--format", "json", *extra, cwd=root)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _texts(body: dict, role: str) -> list[str]:
    """The text of every input message of ``role``, one entry per content part."""
    return [c.get("text", "") for item in body["input"] if item.get("type") == "message" and item.get("role") == role
            for c in item.get("content") or []]


OVERLAY = """\
extends: builtin:examples/team
name: overlay
system_prompt:
  sections:
    - {id: identity, text: "You help a small team keep its build green in ${cwd}."}
    - {id: house_style, after: identity, text: "Prefer short functions with one purpose."}
"""


def _profile(tmp_path: Path, profile: str) -> str:
    if profile != "overlay":
        return profile
    (tmp_path / "overlay.yaml").write_text(OVERLAY)
    return str(tmp_path / "overlay.yaml")


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("Run the tests with make check before committing.\n")
    return project


@pytest.mark.parametrize("profile", ["builtin:default", "builtin:pi-1", "builtin:examples/team", "overlay"])
def test_codex_sends_every_native_section_as_its_instructions(tmp_path, codex_env, profile):
    profile = _profile(tmp_path, profile)
    project = _project(tmp_path)
    report = {c["key"]: c for c in _export(_replacing(tmp_path, profile), project)["report"]}
    bodies = _codex(tmp_path, codex_env, project, "hi", ["ok"])
    developer = _texts(bodies[0], "developer")
    instructions = (project / ".codex/context-pipeline/instructions.md").read_text()
    # the file is Codex's first developer message, in place of its built-in instructions
    assert developer[0] == instructions.strip()
    rendered = _pipeline("render", profile, "--cwd", str(project), "--format", "json", cwd=project)
    assert rendered.returncode == 0, rendered.stderr
    sections = {s["id"]: s["text"] for s in json.loads(rendered.stdout)["sections"]}
    native = [k.removeprefix("system_prompt.sections.") for k, c in report.items()
              if k.startswith("system_prompt.sections.") and c["how"] in ("native", "mismatch")]
    assert native, report
    for section in native:
        assert sections[section] in developer[0], section
    for key, c in report.items():
        section = key.removeprefix("system_prompt.sections.")
        if c["how"] == "lost" and sections.get(section) and str(project) in sections[section]:
            assert sections[section] not in developer[0]  # a section holding the working directory stays out
    # the user's AGENTS.md still reaches the model, as Codex sends it without the export
    assert any("make check before committing" in t for t in _texts(bodies[0], "user"))
    if profile.endswith("overlay.yaml"):
        assert report["system_prompt.sections.identity"]["how"] == "lost"  # it holds ${cwd}
        assert "short functions with one purpose" in developer[0]


def test_without_the_export_codex_sends_its_own_instructions(tmp_path, codex_env):
    """The control: the profile's sections arrive through the export only."""
    project = _project(tmp_path)
    _export(_replacing(tmp_path, "builtin:default"), project)
    bodies = _codex(tmp_path, codex_env, project, "hi", ["ok"], trust=False)  # untrusted: .codex/ is not read
    instructions = (project / ".codex/context-pipeline/instructions.md").read_text().strip()
    assert all(instructions not in t for t in _texts(bodies[0], "developer"))


def test_a_user_dir_export_is_codex_home(tmp_path, codex_env):
    """--user-dir lays out CODEX_HOME: its config.toml (merged with the user's keys) names the
    instructions file, which Codex sends, for a project that is not even trusted."""
    project = _project(tmp_path)
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text("# the user's own settings\n")
    _export(_replacing(tmp_path, "builtin:default"), home, where="--user-dir")
    config = (home / "config.toml").read_text()
    assert config.startswith("# the user's own settings\n") and "model_instructions_file" in config
    bodies = _codex(tmp_path, codex_env, project, "hi", ["ok"], home=home)
    instructions = (home / "context-pipeline/instructions.md").read_text()
    assert _texts(bodies[0], "developer")[0] == instructions.strip()


def test_templates_are_reported_lost_and_reach_the_model_as_typed(tmp_path, codex_env):
    """Codex 0.169.0 has no custom prompts: the report says so, and `/prompts:NAME args` (the form
    Codex had) is sent to the model as typed, even with a prompt file in CODEX_HOME/prompts."""
    project = _project(tmp_path)
    prompts = tmp_path / "profile" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text("---\ndescription: Review one file\n---\nLook over $1 and report $2.\n")
    profile = tmp_path / "profile" / "team.yaml"
    profile.write_text("extends: builtin:default\nname: team\ntemplates:\n  sources: [project, global, prompts]\n")
    out = _export(str(profile), project)
    report = {c["key"]: c for c in out["report"]}
    assert report["templates.review"]["how"] == "lost" and "no custom prompts" in report["templates.review"]["why"]
    assert not any("prompts" in c["path"] for c in out["changes"])
    home = tmp_path / "codex-home"
    (home / "prompts").mkdir(parents=True)
    (home / "prompts/review.md").write_text((prompts / "review.md").read_text())
    bodies = _codex(tmp_path, codex_env, project, "/prompts:review src/app.py style", ["ok"])
    assert _texts(bodies[0], "user")[-1] == "/prompts:review src/app.py style"


COMPACTING = """\
extends: builtin:default
name: compacting
compaction:
  trigger: {tokens: 1000}
"""


def test_codex_compacts_at_the_profiles_token_trigger_with_its_instructions(tmp_path, codex_env):
    """The first reply reports 5,000 tokens: over the profile's 1,000, Codex compacts before it
    continues the turn, and its summary request ends with the profile's instructions."""
    from pipeline import compile_profile
    from pipeline.compaction.summary_schema import render_schema

    (tmp_path / "c.yaml").write_text(COMPACTING)
    summary = compile_profile(str(tmp_path / "c.yaml")).profile.summary
    initial = summary.instructions.initial.render(schema=render_schema(summary.schema_, summary.schema_format))
    project = _project(tmp_path)
    report = {c["key"]: c for c in _export(str(tmp_path / "c.yaml"), project)["report"]}
    assert report["compaction.trigger"]["how"] == "native"
    replies = [{"toolCalls": [{"name": "shell", "arguments": {"command": ["true"]}}],
                "usage": {"input": 5000, "output": 10}},
               {"text": "## Goal\n- noted"}, {"text": "done"}]
    bodies = _codex(tmp_path, codex_env, project, "look at the build", replies)
    summaries = [b for b in bodies if _texts(b, "user") and _texts(b, "user")[-1] == initial]
    assert len(summaries) == 1, [(_texts(b, "user") or [""])[-1][:80] for b in bodies]


def test_compaction_off_keeps_codex_from_compacting(tmp_path, codex_env):
    (tmp_path / "off.yaml").write_text(COMPACTING + "  enabled: false\n")
    project = _project(tmp_path)
    _export(str(tmp_path / "off.yaml"), project)
    replies = [{"toolCalls": [{"name": "shell", "arguments": {"command": ["true"]}}],
                "usage": {"input": 5000, "output": 10}}, {"text": "done"}]
    bodies = _codex(tmp_path, codex_env, project, "look at the build", replies)
    assert len(bodies) == 2  # the turn and its continuation, no summary request
