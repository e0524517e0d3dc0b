"""Issue 21 item 19: the claude-code dialect expands command arguments as the real Claude
Code 2.1.328 does. Each case runs ``claude -p "/cmd args"`` (installed by
``tests/agents/npm_install.py``, pinned) against the loopback Anthropic server, takes the
command's text from the request that reached the model, and compares it with
``pipeline``'s expansion of the same file. Without npm the test fails and says so."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from pipeline.testing.loopback import LoopbackServer
from pipeline.templates.discovery import load_sources
from pipeline.templates.invoke import expand_input
from pipeline.templates.discovery import TemplateSource

# tests/agents is on sys.path: it has no __init__.py, since `agents` is the OpenAI Agents SDK's name
from npm_install import agent_env

#: name -> body of a file in ``.claude/commands``; the placeholders of every kind, near misses included
COMMANDS = {
    "review-pr": "Review PR #$1 with priority $2\n",
    "pos": "A[$0][$1][$2][$10][$ARGUMENTS[2]][$ARGUMENTS[5]][$ARGUMENTSX][$1x][$1_][$1-]\n",
    "plain": "Plain body\n",
    "five": "Only [$5]\n",
}
CALLS = [
    "/review-pr 42 high",  # the report: #high, and `$2` stays (Claude Code counts from $0)
    "/review-pr 42 high urgent",
    "/review-pr 42",
    "/pos a b",
    "/pos \"a b\" 'c d' e",
    "/pos a b c d e f g h i j k",
    "/pos",
    "/plain x y",
    "/plain",
    "/five a b",  # a placeholder left as written counts as not used: the arguments are appended
]


def _command_text(bodies: list, name: str) -> str:
    """The text block that follows the ``<command-name>/NAME`` block in the first user message."""
    for body in bodies:
        for message in body.get("messages", []):
            blocks = message["content"] if isinstance(message["content"], list) else [
                {"type": "text", "text": message["content"]}]
            texts = [b["text"] for b in blocks if b.get("type") == "text"]
            for i, text in enumerate(texts):
                if f"<command-name>/{name}</command-name>" in text and i + 1 < len(texts):
                    return texts[i + 1]
    raise AssertionError(f"no text after /{name}'s command block reached the model: {json.dumps(bodies)[:2000]}")


@pytest.fixture(scope="module")
def observed(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("claude")
    project, home = root / "project", root / "home"
    commands = project / ".claude" / "commands"
    commands.mkdir(parents=True)
    home.mkdir()
    for name, body in COMMANDS.items():
        (commands / f"{name}.md").write_text(body)
    env = agent_env("claude-code", {"PATH": os.environ.get("PATH", ""), "HOME": str(home)})
    seen = {}
    for call in CALLS:
        with LoopbackServer(["ok"]) as server:
            env.update(ANTHROPIC_BASE_URL=server.anthropic_base_url, ANTHROPIC_API_KEY="sk-loopback",
                       DISABLE_AUTOUPDATER="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
            done = subprocess.run(["claude", "-p", call, "--output-format", "json"], cwd=project, env=env,
                                  capture_output=True, text=True, timeout=180)
            assert server.bodies, f"claude sent no request for {call!r}: {done.returncode} {done.stderr[-2000:]}"
            seen[call] = _command_text(server.bodies, call.split()[0][1:])
    return {"commands": str(commands), **seen}


@pytest.mark.parametrize("call", CALLS)
def test_the_claude_code_dialect_expands_as_claude_code_does(observed, call):
    loaded = load_sources([TemplateSource(Path(observed["commands"]), "path", dialect="claude-code")])
    assert expand_input(call, loaded) == observed[call]


def test_the_reported_case(observed):
    """What the issue saw: `$1` is the second argument, `$2` (a third) is left as written."""
    assert observed["/review-pr 42 high"] == "Review PR #high with priority $2\n"
