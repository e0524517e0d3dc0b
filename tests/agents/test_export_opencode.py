"""`pipeline export opencode` proven on the real opencode 1.18.33 (tests/agents/npm_install.py).

opencode runs headless (`opencode run ...`, HOME and the XDG config, data and state folders in
a temporary folder; PWD set to the project, which opencode takes as its directory) against
the loopback OpenAI chat-completions server, a custom provider (`@ai-sdk/openai-compatible`,
which opencode installs from the npm registry on first use into the XDG cache kept beside the
pinned CLIs) declared in the user's opencode.json; the project is where `pipeline export
opencode` wrote. opencode sends a title request alongside the agent's first one, in either
order: the server answers it aside (`opencode_title` of pipeline/export/verify/agents.py), and the tests read the agent's requests.
No skip: a missing npm or a failed install fails the test with npm's message.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.export.verify.agents import opencode_is_title, opencode_provider, opencode_title
from pipeline.testing.loopback import LoopbackServer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from npm_install import AgentInstallError, agent_env, cache_root  # noqa: E402

OPENCODE_TIMEOUT = 240


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
def opencode_env() -> dict:
    try:
        return agent_env("opencode")
    except AgentInstallError as err:
        pytest.fail(f"the real opencode 1.18.33 could not be installed: {err}")


def _opencode(tmp_path: Path, base: dict, project: Path, args: list[str], replies: list,
              model: dict | None = None) -> list[dict]:
    home = tmp_path / "home"
    config = home / ".config" / "opencode"
    config.mkdir(parents=True, exist_ok=True)
    user = json.loads((config / "opencode.json").read_text()) if (config / "opencode.json").is_file() else {}
    cache = cache_root() / "opencode-xdg-cache"
    cache.mkdir(parents=True, exist_ok=True)
    with LoopbackServer(replies, aside=opencode_title) as server:  # the recipe of `pipeline export --verify`
        (config / "opencode.json").write_text(json.dumps({**user, **opencode_provider(server.openai_base_url, model)}))
        env = dict(base, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
                   XDG_DATA_HOME=str(home / ".local/share"), XDG_STATE_HOME=str(home / ".local/state"),
                   XDG_CACHE_HOME=str(cache), PWD=str(project))
        done = subprocess.run(["opencode", "run", *args], cwd=project, env=env, capture_output=True, text=True,
                              timeout=OPENCODE_TIMEOUT, stdin=subprocess.DEVNULL)
        bodies = [b for b in server.bodies if isinstance(b, dict) and "messages" in b]
    assert done.returncode == 0, f"opencode exited ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    agent = [b for b in bodies if not opencode_is_title(b)]
    assert agent, f"opencode sent no agent request ({len(bodies)} requests)"
    return agent


def _text(message: dict) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def _export(profile: str, root: Path, *extra: str, where: str = "--project") -> dict:
    done = _pipeline("export", "opencode", profile, where, str(root), "--format", "json", *extra, cwd=root)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


OVERLAY = """\
extends: builtin:examples/team
name: overlay
system_prompt:
  sections:
    - {id: identity, text: "You help a small team keep its build green in ${cwd}."}
    - {id: house_style, after: identity, text: "Prefer short functions with one purpose."}
"""


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("Run the tests with make check before committing.\n")
    return project


@pytest.mark.parametrize("profile", ["builtin:default", "builtin:pi-1", "overlay"])
def test_opencode_sends_every_native_and_plugin_section(tmp_path, opencode_env, profile):
    if profile == "overlay":
        (tmp_path / "overlay.yaml").write_text(OVERLAY)
        profile = str(tmp_path / "overlay.yaml")
    project = _project(tmp_path)
    report = {c["key"]: c for c in _export(_replacing(tmp_path, profile), project)["report"]}
    bodies = _opencode(tmp_path, opencode_env, project, ["hi"], ["ok"])
    system = _text(bodies[0]["messages"][0])
    rendered = _pipeline("render", profile, "--cwd", str(project), "--format", "json", cwd=project)
    assert rendered.returncode == 0, rendered.stderr
    sections = {s["id"]: s["text"] for s in json.loads(rendered.stdout)["sections"]}
    carried = [k.removeprefix("system_prompt.sections.") for k, c in report.items()
               if k.startswith("system_prompt.sections.") and c["how"] in ("native", "extension", "mismatch")]
    assert carried, report
    for section in carried:
        assert sections[section] in system, section
    # the profile's prompt comes first, in place of opencode's; then opencode's environment and AGENTS.md
    first = sections[carried[0]]
    assert system.startswith(first)
    assert "make check before committing" in system
    if profile.endswith("overlay.yaml"):
        assert report["system_prompt.sections.identity"]["how"] == "extension"  # it holds ${cwd}
        assert f"keep its build green in {project}." in system


def test_without_the_export_opencode_sends_its_own_prompt(tmp_path, opencode_env):
    project = _project(tmp_path)
    bodies = _opencode(tmp_path, opencode_env, project, ["hi"], ["ok"])
    rendered = _pipeline("render", "builtin:default", "--cwd", str(project), "--format", "json", cwd=project)
    identity = json.loads(rendered.stdout)["sections"][0]["text"]
    assert identity not in _text(bodies[0]["messages"][0])


def test_an_exported_command_reaches_the_model_as_expand_gives_it(tmp_path, opencode_env):
    project = _project(tmp_path)
    prompts = tmp_path / "profile" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "inspect.md").write_text("---\ndescription: Inspect one file\n---\n"
                                        "Look over $1 and report problems with $2. All: $@\n")
    profile = tmp_path / "profile" / "team.yaml"
    profile.write_text("extends: builtin:default\nname: team\ntemplates:\n  sources: [project, global, prompts]\n")
    report = {c["key"]: c for c in _export(str(profile), project)["report"]}
    assert report["templates.inspect"]["how"] == "native"
    assert "$2" in (project / ".opencode/command/inspect.md").read_text()
    bodies = _opencode(tmp_path, opencode_env, project, ["--command", "inspect", "src/app.py", "style"], ["ok"])
    users = [m for m in bodies[0]["messages"] if m["role"] == "user"]
    expanded = _pipeline("expand", "/inspect src/app.py style", "--profile", str(profile), cwd=project)
    assert expanded.returncode == 0, expanded.stderr
    assert _text(users[-1]) == expanded.stdout.removesuffix("\n")
    # the report's note: opencode's highest `$N` takes every argument after it (pi's `$2` takes one)
    bodies = _opencode(tmp_path, opencode_env, project, ["--command", "inspect", "src/app.py", "style", "naming"],
                       ["ok"])
    users = [m for m in bodies[0]["messages"] if m["role"] == "user"]
    assert _text(users[-1]) == "Look over src/app.py and report problems with style naming. All: src/app.py style naming"
    assert "highest" in report["templates.inspect"]["where"]


COMPACTING = """\
extends: builtin:default
name: compacting
compaction:
  reserve_tokens: 2000
"""


def test_a_compaction_sends_the_profiles_summary_prompt_and_instructions(tmp_path, opencode_env):
    """A window of 8,000 with the profile's reserve of 2,000: a reply at 7,000 tokens makes opencode
    compact; its summary request carries the profile's summary system prompt (the compaction
    agent's prompt) and, through the plugin, its instructions."""
    from pipeline import compile_profile
    from pipeline.compaction.summary_schema import render_schema

    (tmp_path / "c.yaml").write_text(COMPACTING)
    summary = compile_profile(str(tmp_path / "c.yaml")).profile.summary
    initial = summary.instructions.initial.render(schema=render_schema(summary.schema_, summary.schema_format))
    project = _project(tmp_path)
    _export(str(tmp_path / "c.yaml"), project)
    replies = [{"toolCalls": [{"name": "bash", "arguments": {"command": "true", "description": "check"}}],
                "usage": {"input": 7000, "output": 10}},
               {"text": "## Goal\n- noted"}, {"text": "done", "usage": {"input": 300, "output": 5}}]
    bodies = _opencode(tmp_path, opencode_env, project, ["look at the build"], replies,
                       model={"limit": {"context": 8000, "output": 1000}})
    system = summary.system_prompt.render()
    calls = [b for b in bodies if _text(b["messages"][0]).startswith(system)]
    assert len(calls) == 1, [_text(b["messages"][0])[:80] for b in bodies]
    assert _text(calls[0]["messages"][-1]).startswith(initial)
    assert json.loads((project / "opencode.json").read_text())["compaction"]["reserved"] == 2000


def test_a_user_dir_export_is_opencodes_config_folder(tmp_path, opencode_env):
    """--user-dir ~/.config/opencode: the prompt named relative to that folder's opencode.json and
    the plugin in its plugin/ folder reach a project that has no export of its own."""
    config = tmp_path / "home" / ".config" / "opencode"
    config.mkdir(parents=True)
    (config / "opencode.json").write_text(json.dumps({"theme": "system"}))
    _export(_replacing(tmp_path, "builtin:default"), config, where="--user-dir")
    project = _project(tmp_path)
    bodies = _opencode(tmp_path, opencode_env, project, ["hi"], ["ok"])
    system = _text(bodies[0]["messages"][0])
    text = (config / "context-pipeline/prompt.md").read_text().removesuffix("\n")
    assert system.startswith(text.replace("${cwd}", str(project)))
    assert json.loads((config / "opencode.json").read_text())["theme"] == "system"
