"""`pipeline export pi` proven on the real pi 1.6.0 (installed by tests/agents/npm_install.py).

pi runs headless (`pi -p --mode json -a --no-session --offline`) against a loopback
OpenAI chat-completions server in a project where `pipeline export pi` wrote; the test
compares the request pi sends with what `pipeline render` / `pipeline expand` give. No
skip: a missing npm or a failed install fails the test with npm's message.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.testing.loopback import LoopbackServer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from npm_install import AgentInstallError, agent_env  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
PI_TIMEOUT = 120


def _pipeline(*args: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.fixture(scope="module")
def pi_env() -> dict:
    try:
        return agent_env("pi")
    except AgentInstallError as err:
        pytest.fail(f"the real pi 1.6.0 could not be installed: {err}")


def _world(tmp_path: Path, server: LoopbackServer, base: dict) -> tuple[Path, dict]:
    home, agent, project = tmp_path / "home", tmp_path / "agent", tmp_path / "project"
    for d in (home, agent, project):
        d.mkdir()
    (agent / "models.json").write_text(json.dumps({"providers": {"loop": {
        "baseUrl": server.openai_base_url, "api": "openai-completions", "apiKey": "x",
        "models": [{"id": "m", "contextWindow": 128000, "maxTokens": 1024}]}}}))
    (project / "AGENTS.md").write_text("Run the tests with make check before committing.\n")
    env = dict(base, HOME=str(home), PI_CODING_AGENT_DIR=str(agent))
    return project, env


def _small_window(env: dict, window: int = 8192) -> None:
    """The loopback model's context window, small enough for a few turns to compact."""
    path = Path(env["PI_CODING_AGENT_DIR"]) / "models.json"
    models = json.loads(path.read_text())
    models["providers"]["loop"]["models"][0]["contextWindow"] = window
    path.write_text(json.dumps(models))


def _run_pi(project: Path, env: dict, *messages: str) -> subprocess.CompletedProcess:
    """pi headless, one prompt after the other (``-p`` runs each message as a turn)."""
    done = subprocess.run(["pi", "-p", "--mode", "json", "-a", "--no-session", "--offline", "--model", "loop/m",
                           *messages], cwd=project, env=env, capture_output=True, text=True, timeout=PI_TIMEOUT)
    assert done.returncode == 0, f"pi failed ({done.returncode}):\n{done.stderr[-3000:]}"
    return done


def _system(server: LoopbackServer) -> str:
    bodies = [b for b in server.bodies if isinstance(b, dict) and "messages" in b]
    assert bodies, f"pi sent no chat request; the server saw {[r.path for r in server.received]}"
    first = bodies[0]["messages"][0]
    assert first["role"] in ("system", "developer"), first
    content = first["content"]
    return content if isinstance(content, str) else "".join(p["text"] for p in content)


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
    path = tmp_path / "overlay.yaml"
    path.write_text(OVERLAY)
    return str(path)


@pytest.mark.parametrize("profile", ["builtin:default", "builtin:pi-1", "builtin:examples/team", "overlay"])
def test_pi_sends_the_profile_prompt(tmp_path, pi_env, profile):
    profile = _profile(tmp_path, profile)
    with LoopbackServer([{"text": "ok"}]) as server:
        project, env = _world(tmp_path, server, pi_env)
        done = _pipeline("export", "pi", profile, "--project", str(project), cwd=project, env=env)
        assert done.returncode == 0, done.stderr
        assert (project / ".pi/extensions/context-pipeline/index.js").is_file()
        _run_pi(project, env, "hi")
        sent = _system(server)
    rendered = _pipeline("render", profile, "--discover", "--cwd", str(project), "--tools", "read,bash,edit,write",
                         cwd=project, env=env)
    assert rendered.returncode == 0, rendered.stderr
    assert rendered.stdout.endswith("\n")
    assert sent == rendered.stdout[:-1]
    assert "make check" in sent  # the context file reached it
    if profile.endswith("overlay.yaml"):
        assert f"keep its build green in {project}." in sent and "short functions with one purpose" in sent


def test_the_users_system_md_append_and_skills_render_as_the_profile_says(tmp_path, pi_env):
    """pi's other inputs reach the render: .pi/SYSTEM.md (the custom prompt), .pi/APPEND_SYSTEM.md,
    a project skill; the prompt is still byte-equal to `pipeline render --discover`."""
    with LoopbackServer([{"text": "ok"}]) as server:
        project, env = _world(tmp_path, server, pi_env)
        (project / ".pi").mkdir()
        (project / ".pi/SYSTEM.md").write_text("You keep the release notes of this project.\n")
        (project / ".pi/APPEND_SYSTEM.md").write_text("Answer in short sentences.\n")
        skill = project / ".pi/skills/changelog"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text("---\nname: changelog\ndescription: Write a changelog entry.\n---\nSteps.\n")
        done = _pipeline("export", "pi", "builtin:default", "--project", str(project), cwd=project, env=env)
        assert done.returncode == 0, done.stderr
        _run_pi(project, env, "hi")
        sent = _system(server)
    rendered = _pipeline("render", "builtin:default", "--discover", "--cwd", str(project), "--tools",
                         "read,bash,edit,write", cwd=project, env=env)
    assert rendered.returncode == 0, rendered.stderr
    assert sent == rendered.stdout[:-1]
    assert "release notes" in sent and "short sentences" in sent and "changelog" in sent


def test_without_the_export_pi_sends_its_own_prompt(tmp_path, pi_env):
    """The control: the equality above is the extension's doing, not pi's own prompt."""
    with LoopbackServer([{"text": "ok"}]) as server:
        project, env = _world(tmp_path, server, pi_env)
        _run_pi(project, env, "hi")
        sent = _system(server)
    rendered = _pipeline("render", "builtin:default", "--discover", "--cwd", str(project), "--tools",
                         "read,bash,edit,write", cwd=project, env=env)
    assert sent != rendered.stdout[:-1]


def test_template_reaches_the_model_as_expand_gives_it(tmp_path, pi_env):
    with LoopbackServer([{"text": "ok"}]) as server:
        project, env = _world(tmp_path, server, pi_env)
        prompts = tmp_path / "profile" / "prompts"
        prompts.mkdir(parents=True)
        (prompts / "review.md").write_text("---\ndescription: Review one file\n---\n"
                                           "Look over $1 and report problems with ${2:-style}. All: $@\n")
        profile = tmp_path / "profile" / "team.yaml"
        profile.write_text("extends: builtin:default\nname: team\ntemplates:\n"
                           "  sources: [project, global, prompts]\n")
        done = _pipeline("export", "pi", str(profile), "--project", str(project), cwd=project, env=env)
        assert done.returncode == 0, done.stderr
        assert (project / ".pi/prompts/review.md").read_text() == (prompts / "review.md").read_text()
        _run_pi(project, env, "/review src/app.py 'error handling'")
        bodies = [b for b in server.bodies if isinstance(b, dict) and "messages" in b]
        users = [m for m in bodies[0]["messages"] if m["role"] == "user"]
    content = users[-1]["content"]
    sent = content if isinstance(content, str) else "".join(p["text"] for p in content if p.get("type") == "text")
    expanded = _pipeline("expand", "/review src/app.py 'error handling'", "--profile", str(profile),
                         cwd=project, env=env)
    assert expanded.returncode == 0, expanded.stderr
    assert sent == expanded.stdout.removesuffix("\n")
    assert "error handling" in sent and "src/app.py" in sent


def test_settings_hold_the_profile_thresholds(tmp_path, pi_env):
    project = tmp_path / "p"
    project.mkdir()
    (project / ".pi").mkdir()
    (project / ".pi/settings.json").write_text(json.dumps({"theme": "dark"}))
    env = dict(pi_env, HOME=str(tmp_path))
    done = _pipeline("export", "pi", "--project", str(project), "--force", cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    settings = json.loads((project / ".pi/settings.json").read_text())
    assert settings["theme"] == "dark"
    assert settings["compaction"] == {"enabled": True, "reserveTokens": 16384, "keepRecentTokens": 20000}
    assert settings["retry"]["maxRetries"] == 3


COMPACTING = """\
extends: builtin:default
name: compacting
compaction:
  reserve_tokens: 2000
  keep_recent_tokens: 1000
"""


def _text_of(message: dict) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def test_a_forced_compaction_sends_the_profiles_summary_request_and_retries_a_missing_heading(tmp_path, pi_env):
    from pipeline import compile_profile
    from pipeline.compaction.summary_schema import heading_line, render_schema

    profile = tmp_path / "compacting.yaml"
    profile.write_text(COMPACTING)
    summary = compile_profile(str(profile)).profile.summary
    schema = render_schema(summary.schema_, summary.schema_format)
    required = [heading_line(s, summary.schema_format) for s in summary.schema_ if s.required]
    complete = "\n\n".join(f"{h}\n- noted" for h in required)
    # turn 1 is summarized whole: turn 2's long user message alone fills keep_recent_tokens
    log = "Here is the build log: " + "one more line of output. " * 180
    replies = [
        {"text": "I looked at the build. " * 250, "usage": {"input": 300, "output": 200}},  # turn 1
        {"text": "noted", "usage": {"input": 7000, "output": 5}},  # turn 2: over the threshold
        {"text": f"{required[0]}\n- half a checkpoint"},  # the first summary lacks headings
        {"text": complete},  # the corrective call's answer
        {"text": "done", "usage": {"input": 300, "output": 5}},  # turn 3
    ]
    with LoopbackServer(replies) as server:
        project, env = _world(tmp_path, server, pi_env)
        _small_window(env)
        done = _pipeline("export", "pi", str(profile), "--project", str(project), cwd=project, env=env)
        assert done.returncode == 0, done.stderr
        run = _run_pi(project, env, "Look at the build.", log, "Now fix it.")
        bodies = [b for b in server.bodies if isinstance(b, dict) and "messages" in b]
    system = summary.system_prompt.render()
    calls = [b for b in bodies if _text_of(b["messages"][0]) == system]
    assert len(calls) == 2, f"expected a summary call and its corrective retry; pi sent {len(bodies)} requests"
    first = _text_of(calls[0]["messages"][-1])
    assert first.startswith(f"<{summary.tags.conversation}>\n{summary.labels.user}Look at the build.")
    assert first.endswith(summary.instructions.initial.render(schema=schema))
    retry = _text_of(calls[1]["messages"][-1])
    note = summary.instructions.schema_retry.render(missing=", ".join(required[1:]), schema=schema)
    assert retry == f"{first}\n\n{note}"
    events = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    ends = [e for e in events if e.get("type") == "compaction_end"]
    assert ends and ends[0]["result"]["summary"].startswith(complete), ends


MASKING = """\
extends: builtin:default
name: masking
compaction:
  strategy: mask_tool_results
  reserve_tokens: 2000
  keep_recent_tokens: 1000
"""


def test_mask_tool_results_shows_old_tool_results_as_the_placeholder(tmp_path, pi_env):
    from pipeline import compile_profile

    profile = tmp_path / "masking.yaml"
    profile.write_text(MASKING)
    placeholder = compile_profile(str(profile)).profile.compaction.masking.placeholder
    log = "Here is the build log: " + "one more line of output. " * 180
    replies = [
        {"toolCalls": [{"name": "read", "arguments": {"path": "notes.txt"}}], "usage": {"input": 300, "output": 20}},
        {"text": "Read it.", "usage": {"input": 320, "output": 5}},
        {"text": "noted", "usage": {"input": 7000, "output": 5}},  # over the threshold: pi would compact
        {"text": "done", "usage": {"input": 300, "output": 5}},
    ]
    with LoopbackServer(replies) as server:
        project, env = _world(tmp_path, server, pi_env)
        (project / "notes.txt").write_text("The release goes out on Monday.\n")
        _small_window(env)
        done = _pipeline("export", "pi", str(profile), "--project", str(project), cwd=project, env=env)
        assert done.returncode == 0, done.stderr
        run = _run_pi(project, env, "Read notes.txt.", log, "Now ship it.")
        bodies = [b for b in server.bodies if isinstance(b, dict) and "messages" in b]
    assert len(bodies) == 4, f"pi sent {len(bodies)} requests (a summary call would make five)"
    tool = lambda body: [_text_of(m) for m in body["messages"] if m["role"] == "tool"]  # noqa: E731
    original = tool(bodies[1])
    assert len(original) == 1 and "release goes out on Monday" in original[0]
    chars = len(original[0].encode("utf-16-le")) // 2
    assert tool(bodies[2]) == original  # before the compaction pi would have run
    assert tool(bodies[3]) == [placeholder.render(tool="read", chars=str(chars))]


@pytest.mark.parametrize("percent, compacts", [(50, True), (90, False)])
def test_a_share_of_window_trigger_compacts_where_the_profile_says(tmp_path, pi_env, percent, compacts):
    """Window 8192, reserve 2000 (pi's own rule: above 6192); the context reaches 5000 then 7000
    tokens. At 50% (4096) the first crossing compacts, which pi alone would not do yet; at 90%
    (7373) nothing compacts, though pi alone would at 7000."""
    from pipeline import compile_profile

    profile = tmp_path / "trigger.yaml"
    profile.write_text(f"{COMPACTING}  trigger: {{percent_of_window: {percent}}}\n")
    system = compile_profile(str(profile)).profile.summary.system_prompt.render()
    required = "\n\n".join(f"{h}\n- noted" for h in ("## Goal", "## Constraints & Preferences", "## Progress",
                                                        "## Key Decisions", "## Next Steps"))
    log = "Here is the build log: " + "one more line of output. " * 180
    turn = lambda tokens: {"text": "noted", "usage": {"input": tokens, "output": 5}}  # noqa: E731
    replies = [{"text": "I looked at the build. " * 250, "usage": {"input": 300, "output": 200}}, turn(5000)]
    replies += [{"text": required}, turn(7000)] if compacts else [turn(7000), turn(300)]
    with LoopbackServer([*replies, turn(300)]) as server:
        project, env = _world(tmp_path, server, pi_env)
        _small_window(env)
        done = _pipeline("export", "pi", str(profile), "--project", str(project), cwd=project, env=env)
        assert done.returncode == 0, done.stderr
        run = _run_pi(project, env, "Look at the build.", log, "Now fix it.")
        bodies = [b for b in server.bodies if isinstance(b, dict) and "messages" in b]
    summaries = [b for b in bodies if _text_of(b["messages"][0]) == system]
    assert len(summaries) == (1 if compacts else 0), f"{len(summaries)} summary calls in {len(bodies)} requests"
    settings = json.loads((project / ".pi/settings.json").read_text())
    assert settings["compaction"]["reserveTokens"] == 1_000_000_000


def test_a_project_export_turns_compaction_off_when_the_profile_does(tmp_path, pi_env):
    """pi reads compaction.enabled from the merged settings, so the project's file counts."""
    profile = tmp_path / "off.yaml"
    profile.write_text(COMPACTING.replace("compaction:\n", "compaction:\n  enabled: false\n"))
    log = "Here is the build log: " + "one more line of output. " * 180
    replies = [{"text": "I looked at the build. " * 250, "usage": {"input": 300, "output": 200}},
               {"text": "noted", "usage": {"input": 7000, "output": 5}}]
    with LoopbackServer(replies) as server:
        project, env = _world(tmp_path, server, pi_env)
        _small_window(env)
        done = _pipeline("export", "pi", str(profile), "--project", str(project), cwd=project, env=env)
        assert done.returncode == 0, done.stderr
        run = _run_pi(project, env, "Look at the build.", log, "Now fix it.")
        bodies = [b for b in server.bodies if isinstance(b, dict) and "messages" in b]
    assert json.loads((project / ".pi/settings.json").read_text())["compaction"]["enabled"] is False
    assert len(bodies) == 3  # three turns, no summary call
    assert '"compaction_start"' not in run.stdout


#: A test extension beside the export's: `/nav` goes back to the first user message, asking pi
#: for a summary of the branch it leaves, and writes the branch_summary entry to $NAV_OUT.
NAVIGATE = """\
import { writeFileSync } from "node:fs";
export default function (pi) {
  pi.registerCommand("nav", {
    description: "go back to the first user message, summarizing the branch left",
    handler: async (_args, ctx) => {
      const first = ctx.sessionManager.getEntries().find((e) => e.type === "message" && e.message.role === "user");
      const result = await ctx.navigateTree(first.id, { summarize: true });
      const entry = ctx.sessionManager.getEntries().find((e) => e.type === "branch_summary");
      writeFileSync(process.env.NAV_OUT, JSON.stringify({ result, entry }));
    },
  });
}
"""


def test_a_branch_summary_is_the_profiles_request_preamble_and_file_lists(tmp_path, pi_env):
    """Leaving a branch of pi's tree with a summary: the request is the profile's (its summary
    system prompt, the conversation block, the branch instructions with the branch schema), and
    the branch_summary entry is the profile's preamble, the answer and the file lists."""
    from pipeline import compile_profile
    from pipeline.compaction.summary_schema import heading_line, render_schema

    profile = compile_profile("builtin:default").profile
    summary = profile.summary
    sections = summary.branch_schema or summary.schema_
    answer = "\n\n".join(f"{heading_line(s, summary.schema_format)}\n- explored" for s in sections if s.required)
    replies = [{"toolCalls": [{"name": "read", "arguments": {"path": "notes.txt"}}], "usage": {"input": 300, "output": 20}},
               {"text": "Read it.", "usage": {"input": 320, "output": 5}},
               {"text": "Fixed.", "usage": {"input": 340, "output": 5}},
               {"text": answer}]
    with LoopbackServer(replies) as server:
        project, env = _world(tmp_path, server, pi_env)
        (project / "notes.txt").write_text("The release goes out on Monday.\n")
        done = _pipeline("export", "pi", "builtin:default", "--project", str(project), cwd=project, env=env)
        assert done.returncode == 0, done.stderr
        (project / ".pi/extensions/navigate.js").write_text(NAVIGATE)
        out = tmp_path / "nav.json"
        _run_pi(project, dict(env, NAV_OUT=str(out)), "Read notes.txt.", "Now fix it.", "/nav")
        bodies = [b for b in server.bodies if isinstance(b, dict) and "messages" in b]
    assert len(bodies) == 4, f"pi sent {len(bodies)} requests"
    request = bodies[3]
    assert _text_of(request["messages"][0]) == summary.system_prompt.render()
    user = _text_of(request["messages"][-1])
    instructions = summary.instructions.branch.render(schema=render_schema(sections, summary.schema_format))
    # the branch left starts after the first user message (the common ancestor); no tool results
    assert user.startswith(f"<{summary.tags.conversation}>\n{summary.labels.tool_calls}read(")
    assert f"{summary.labels.user}Now fix it." in user and "release goes out" not in user
    assert user.endswith(f"</{summary.tags.conversation}>\n\n{instructions}")
    assert profile.compaction.branch.max_tokens in (request.get("max_tokens"), request.get("max_completion_tokens"))
    entry = json.loads(out.read_text())["entry"]
    lists = f"\n\n<{summary.tags.read_files}>\nnotes.txt\n</{summary.tags.read_files}>"
    assert entry["summary"] == summary.branch_preamble.render() + answer + lists
    assert entry["details"] == {"readFiles": ["notes.txt"], "modifiedFiles": []}
    assert entry["fromHook"] is True


HYBRID = MASKING.replace("name: masking", "name: hybrid").replace("strategy: mask_tool_results", "strategy: hybrid")


@pytest.mark.parametrize("notes_chars, summarizes", [(16_000, False), (40, True)])
def test_hybrid_masks_and_summarizes_only_when_the_masked_context_is_still_over(tmp_path, pi_env, notes_chars,
                                                                                 summarizes):
    """Window 8192, reserve 2000 (above 6192): the reply at 7000 tokens makes pi compact. A
    16,000-character tool result (4,000 tokens, which the next reply's usage counts) masked
    brings the context under the trigger: no summary call, the placeholder from then on, and
    pi's second look before the next prompt (its estimate still 7000) counts the mask too; a
    40-character one does not: the profile's summary request follows the mask."""
    from pipeline import compile_profile

    profile = tmp_path / "hybrid.yaml"
    profile.write_text(HYBRID)
    compiled = compile_profile(str(profile)).profile
    placeholder, system = compiled.compaction.masking.placeholder, compiled.summary.system_prompt.render()
    required = "\n\n".join(f"{h}\n- noted" for h in ("## Goal", "## Constraints & Preferences", "## Progress",
                                                        "## Key Decisions", "## Next Steps"))
    log = "Here is the build log: " + "one more line of output. " * 180
    replies = [
        {"toolCalls": [{"name": "read", "arguments": {"path": "notes.txt"}}], "usage": {"input": 300, "output": 20}},
        {"text": "Read it.", "usage": {"input": 320 + notes_chars // 4, "output": 5}},
        {"text": "noted", "usage": {"input": 7000, "output": 5}},  # over the threshold: pi compacts
        *([{"text": required}] if summarizes else []),
        {"text": "done", "usage": {"input": 300, "output": 5}},
    ]
    with LoopbackServer(replies) as server:
        project, env = _world(tmp_path, server, pi_env)
        (project / "notes.txt").write_text(("The release goes out on Monday. " * 1000)[:notes_chars - 1] + "\n")
        _small_window(env)
        done = _pipeline("export", "pi", str(profile), "--project", str(project), "--format", "json", cwd=project,
                         env=env)
        assert done.returncode == 0, done.stderr
        report = {c["key"]: c["how"] for c in json.loads(done.stdout)["report"]}
        assert report["compaction.strategy"] == "extension"
        run = _run_pi(project, env, "Read notes.txt.", log, "Now ship it.")
        bodies = [b for b in server.bodies if isinstance(b, dict) and "messages" in b]
    calls = [b for b in bodies if _text_of(b["messages"][0]) == system]
    assert len(calls) == (1 if summarizes else 0), f"{len(calls)} summary calls in {len(bodies)} requests"
    assert len(bodies) == (5 if summarizes else 4)
    if not summarizes:
        tool = [_text_of(m) for m in bodies[-1]["messages"] if m["role"] == "tool"]
        assert tool == [placeholder.render(tool="read", chars=str(notes_chars))]
    events = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    ends = [e for e in events if e.get("type") == "compaction_end"]
    assert bool(ends and ends[0].get("result")) == summarizes, ends
