"""`pipeline export claude-code` proven on the real Claude Code 2.1.328 (tests/agents/npm_install.py).

Claude Code runs headless (`claude -p ... --output-format json`, HOME in a temporary folder)
against the loopback Anthropic Messages server, in a project where `pipeline export
claude-code` wrote; the tests read the requests it sends. No skip: a missing npm or a
failed install fails the test with npm's message.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.testing.loopback import LoopbackServer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from npm_install import AgentInstallError, agent_env  # noqa: E402

CLAUDE_TIMEOUT = 180


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
def claude_env() -> dict:
    try:
        return agent_env("claude-code")
    except AgentInstallError as err:
        pytest.fail(f"the real Claude Code 2.1.328 could not be installed: {err}")


def _claude(tmp_path: Path, base: dict, project: Path, message: str, replies: list, *, code: int = 0,
            result: dict | None = None) -> list[dict]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    with LoopbackServer(replies) as server:
        env = dict(base, HOME=str(home), ANTHROPIC_BASE_URL=server.anthropic_base_url,
                   ANTHROPIC_API_KEY="sk-loopback", DISABLE_AUTOUPDATER="1",
                   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
        done = subprocess.run(["claude", "-p", message, "--output-format", "json"], cwd=project, env=env,
                              capture_output=True, text=True, timeout=CLAUDE_TIMEOUT)
        bodies = [b for b in server.bodies if isinstance(b, dict) and "messages" in b]
    if result is not None:
        result.update(json.loads(done.stdout))
    assert done.returncode == code, f"claude exited ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert bodies, "claude sent no request"
    return bodies


def _export(profile: str, project: Path, *extra: str) -> dict:
    done = _pipeline("export", "claude-code", profile, "--project", str(project), "--format", "json", *extra,
                     cwd=project)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _blocks(content) -> list[str]:
    if isinstance(content, str):
        return [content]
    return [b["text"] for b in content if b.get("type") == "text"]


OVERLAY = """\
extends: builtin:examples/team
name: overlay
system_prompt:
  sections:
    - {id: identity, text: "You help a small team keep its build green in ${cwd}."}
    - {id: house_style, after: identity, text: "Prefer short functions with one purpose."}
"""


@pytest.mark.parametrize("profile", ["builtin:default", "builtin:pi-1", "builtin:examples/team", "overlay"])
def test_claude_code_sends_every_native_section_as_its_system_prompt(tmp_path, claude_env, profile):
    if profile == "overlay":
        (tmp_path / "overlay.yaml").write_text(OVERLAY)
        profile = str(tmp_path / "overlay.yaml")
    project = tmp_path / "project"
    project.mkdir()
    (project / "CLAUDE.md").write_text("Run the tests with make check before committing.\n")
    report = {c["key"]: c for c in _export(_replacing(tmp_path, profile), project)["report"]}
    bodies = _claude(tmp_path, claude_env, project, "hi", ["ok"])
    system = [b["text"] for b in bodies[0]["system"]]
    rendered = _pipeline("render", profile, "--cwd", str(project), "--format", "json", cwd=project)
    assert rendered.returncode == 0, rendered.stderr
    sections = {s["id"]: s["text"] for s in json.loads(rendered.stdout)["sections"]}
    native = [k.removeprefix("system_prompt.sections.") for k, c in report.items()
              if k.startswith("system_prompt.sections.") and c["how"] in ("native", "mismatch")]
    assert native, report
    agent = (project / ".claude/agents/context-pipeline.md").read_text()
    body = agent.split("\n---\n", 1)[1]
    # the agent's body is the whole prompt Claude Code sends after its identity line, in place of its own
    assert body.strip() in system, system
    prompt = next(t for t in system if t == body.strip())
    for section in native:
        assert sections[section] in prompt, section
    for key, c in report.items():
        section = key.removeprefix("system_prompt.sections.")
        if c["how"] == "lost" and sections.get(section) and str(project) in sections[section]:
            assert sections[section] not in prompt  # a section holding the working directory stays out
    # the user's CLAUDE.md still reaches the model (the first user message), as without the export
    first_user = "".join(_blocks(bodies[0]["messages"][0]["content"]))
    assert "make check before committing" in first_user
    if profile.endswith("overlay.yaml"):
        assert report["system_prompt.sections.identity"]["how"] == "lost"  # it holds ${cwd}
        assert "short functions with one purpose" in prompt


def test_without_the_export_claude_code_sends_its_own_prompt(tmp_path, claude_env):
    """The control: the profile's sections reach the system prompt through the export only."""
    project = tmp_path / "project"
    project.mkdir()
    bodies = _claude(tmp_path, claude_env, project, "hi", ["ok"])
    system = "".join(b["text"] for b in bodies[0]["system"])
    assert "through a set of tools" not in system and len(system) > 2000


def _command_text(bodies: list[dict], name: str) -> str:
    for body in bodies:
        for message in body["messages"]:
            texts = _blocks(message["content"])
            for i, text in enumerate(texts):
                if f"<command-name>/{name}</command-name>" in text and i + 1 < len(texts):
                    return texts[i + 1]
    raise AssertionError(f"/{name} did not reach the model")


def test_an_exported_command_reaches_the_model_as_expand_gives_it(tmp_path, claude_env):
    prompts = tmp_path / "profile" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text("---\ndescription: Review one file\n---\n"
                                       "Look over $1 and report problems with $2. All: $@\n")
    (prompts / "fix.md").write_text("Fix ${1:-everything}\n")
    profile = tmp_path / "profile" / "team.yaml"
    profile.write_text("extends: builtin:default\nname: team\ntemplates:\n  sources: [project, global, prompts]\n")
    project = tmp_path / "project"
    project.mkdir()
    report = {c["key"]: c for c in _export(str(profile), project, "--dry-run")["report"]}
    _export(str(profile), project)
    assert "$ARGUMENTS[0]" in (project / ".claude/commands/review.md").read_text()
    assert report["templates.review"]["how"] == "native"
    assert report["templates.fix"]["how"] == "lost" and "default" in report["templates.fix"]["why"]
    assert not (project / ".claude/commands/fix.md").exists()
    call = "/review src/app.py error-handling"
    sent = _command_text(_claude(tmp_path, claude_env, project, call, ["ok"]), "review")
    expanded = _pipeline("expand", call, "--profile", str(profile), cwd=project)
    assert expanded.returncode == 0, expanded.stderr
    assert sent.rstrip("\n") == expanded.stdout.rstrip("\n")
    assert "src/app.py" in sent and "error-handling" in sent


def _read_then_answer(project: Path, input_tokens: int) -> list:
    """A tool call whose reply says the context holds ``input_tokens``, then answers (the
    window of Claude Code's default model here is 1,000,000 tokens)."""
    call = {"name": "Read", "arguments": {"file_path": str(project / "notes.txt")}}
    return [{"toolCalls": [call], "usage": {"input": input_tokens, "output": 20}},
            {"text": "<summary>The release goes out on Monday.</summary>"}, {"text": "done"}]


def _compaction_requests(bodies: list[dict], marker: str) -> list[dict]:
    return [b for b in bodies if marker in "".join(_blocks(b["messages"][-1]["content"]))]


def test_the_precompact_hook_adds_the_profiles_summary_instructions(tmp_path, claude_env):
    from pipeline import compile_profile
    from pipeline.compaction.summary_schema import render_schema

    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("The release goes out on Monday.\n")
    _export("builtin:default", project)
    summary = compile_profile("builtin:default").profile.summary
    instructions = summary.instructions.initial.render(schema=render_schema(summary.schema_, summary.schema_format))
    bodies = _claude(tmp_path, claude_env, project, "Read notes.txt", _read_then_answer(project, 990_000))
    assert instructions not in json.dumps(bodies[0])
    compacting = _compaction_requests(bodies, instructions)
    assert compacting, f"no request carried the summary instructions ({len(bodies)} requests)"
    assert "release goes out on Monday" in json.dumps(compacting[0]["messages"])  # the conversation is summarized


def test_a_profile_that_turns_compaction_off_keeps_claude_code_from_compacting(tmp_path, claude_env):
    """The same turn as above (990,000 of 1,000,000 tokens) compacts without the key."""
    profile = tmp_path / "off.yaml"
    profile.write_text("extends: builtin:default\nname: off\ncompaction:\n  enabled: false\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("The release goes out on Monday.\n")
    report = {c["key"]: c for c in _export(str(profile), project)["report"]}
    assert report["compaction.enabled"]["how"] == "native"
    assert json.loads((project / ".claude/settings.json").read_text())["env"] == {"DISABLE_AUTO_COMPACT": "1"}
    result: dict = {}
    bodies = _claude(tmp_path, claude_env, project, "Read notes.txt", _read_then_answer(project, 990_000),
                     code=1, result=result)
    assert result["terminal_reason"] == "blocking_limit"  # Claude Code stops at the full window instead
    first = (project / ".claude/context-pipeline/compact-instructions.md").read_text().split("\n")[0]
    assert len(first) > 20
    assert not _compaction_requests(bodies, first), f"{len(bodies)} requests"
