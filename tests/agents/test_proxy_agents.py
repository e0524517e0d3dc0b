"""`pipeline proxy` between the real CLIs and their loopback servers (issue 31's proof, system prompt).

Each CLI (pinned install, tests/agents/npm_install.py) runs headless once, its base URL pointing
at the real `python -m pipeline proxy` started with a team overlay; the proxy forwards to the
loopback server of the CLI's wire format (the `--verify` recipes, pipeline/export/verify/agents.py,
run it). What the server receives must hold the agent's own prompt, with its own tool guidance,
and the team's sections the proxy added; without the team's sections (`builtin:default`) the
agent's request reaches the server as it sent it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from npm_install import AgentInstallError, agent_env, cache_root  # noqa: E402
from proxy.proxyrun import ProxyProcess  # noqa: E402

from pipeline.export.verify.agents import RECIPES, Invocation, Recipe  # noqa: E402

TEAM = """extends: builtin:default
name: team
system_prompt:
  sections:
    - {id: team_note, after: rules, text: "Run make check before you call a change done."}
    - {id: team_cwd, after: team_note, text: "The team builds from ${cwd} with make."}
"""
#: a phrase of each agent's own system prompt (its tool guidance; pi: pi's own default)
OWN = {"pi": "a coding agent harness", "claude-code": "Prefer the dedicated file/search tools",
       "codex": "apply_patch", "opencode": "# Tool usage policy", "gemini": "read_file",
       "qwen-code": "You are Qwen Code", "kilo": "You are Kilo", "copilot": "You are the GitHub Copilot CLI"}
#: every CLI a recipe runs (agents-md's recipe is Codex's, run above)
CLIS = [t for t in RECIPES if t != "agents-md"]


class _Proxied:
    """The recipe's loopback server seen through the proxy: the agent is given the proxy's URLs,
    the bodies are what the server received."""

    def __init__(self, server: Any, profile: str, store: Path, cwd: Path) -> None:
        self.server, self.profile, self.store, self.cwd = server, profile, store, cwd
        self.proxy: ProxyProcess | None = None
        #: the proxy's /_pipeline/stats as it stopped
        self.stats: dict = {}

    def __enter__(self) -> "_Proxied":
        self.server.__enter__()
        up = self.server.url
        self.proxy = ProxyProcess(self.profile, "--cwd", str(self.cwd), "--anthropic-url", up, "--openai-url",
                                  up + "/v1", "--gemini-url", up, store=self.store).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proxy is not None:
            self.stats = httpx.get(self.proxy.url + "/_pipeline/stats", timeout=30).json()
            self.proxy.stop()
        self.server.__exit__(*exc)

    @property
    def url(self) -> str:
        assert self.proxy is not None
        return self.proxy.url

    anthropic_base_url = url

    @property
    def openai_base_url(self) -> str:
        return self.url + "/v1"

    base_url = openai_base_url

    @property
    def bodies(self) -> list[Any]:
        return self.server.bodies

    @property
    def received(self) -> Any:
        return self.server.received


def _through_proxy(target: str, profile: str, tmp_path: Path) -> list[Any]:
    recipe: Recipe = RECIPES[target]()
    make_server = recipe.server
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    recipe.server = lambda: _Proxied(make_server(), profile, tmp_path / "store.db", project)  # type: ignore[method-assign]
    try:
        env = agent_env(target)
    except AgentInstallError as err:
        pytest.fail(f"the real {target} CLI could not be installed: {err}")
    env["XDG_CACHE_HOME"] = os.environ.get("XDG_CACHE_HOME") or str(cache_root() / "opencode-xdg-cache")
    done = recipe.run(recipe.binary, project, tmp_path / "home", [Invocation("Say ok.")], 300, env)
    assert done.bodies, (done.returncode, done.stdout, done.stderr)
    return list(done.bodies)


@pytest.mark.parametrize("target", CLIS)
def test_the_agent_keeps_its_prompt_and_gets_the_teams_sections_through_the_proxy(tmp_path, monkeypatch, target):
    # Copilot unpacks its package on a first run: into the agents' cache, once
    monkeypatch.setenv("COPILOT_CACHE_HOME", str(cache_root() / "copilot-cache"))
    (tmp_path / "team.yaml").write_text(TEAM)
    bodies = _through_proxy(target, str(tmp_path / "team.yaml"), tmp_path)
    first = json.dumps(bodies[0], ensure_ascii=False)
    assert OWN[target] in first, first[:3000]
    assert "Run make check before you call a change done." in first
    assert f"The team builds from {tmp_path / 'project'} with make." in first


def test_without_team_sections_the_request_arrives_as_the_agent_sent_it(tmp_path):
    bodies = _through_proxy("claude-code", "builtin:default", tmp_path)
    first = json.dumps(bodies[0], ensure_ascii=False)
    assert OWN["claude-code"] in first and "Run make check" not in first


SUMMARIZING = """extends: builtin:default
name: long-runs
compaction:
  trigger: {tokens: %d}
  keep_recent_tokens: 2000
"""
#: each agent's trigger: its first request's estimate (its system prompt and tool definitions,
#: measured on these pinned versions: pi ~1,400 tokens, opencode ~7,800, Gemini CLI ~8,000,
#: Codex ~10,200, Claude Code ~12,500) plus about four files' reads (a file ~1,100 tokens), so
#: several requests pass unchanged before the first summary and a summary is reused by the
#: requests after it; a trigger below the agent's fixed prompt would fire on every request,
#: each one summarizing again
TRIGGER = {"pi": 6000, "opencode": 12000, "gemini": 12000, "codex": 14500, "claude-code": 17000}


def _summary_text(profile: str) -> str:
    from pipeline import compile_profile

    summary = compile_profile(profile).profile.summary
    return "\n".join(f"{summary.schema_format.section_prefix}{s.heading}\n- files were read" for s in summary.schema_)


def _is_summary_call(body: Any) -> bool:
    return "<conversation>" in json.dumps(body)


def _conversation(body: dict) -> list[Any]:
    """The conversation's list in a body of any wire format."""
    return body.get("messages") or body.get("input") or body.get("contents") or []


def _pairs(body: dict) -> tuple[list[str], list[str]]:
    """The tool calls of a body's conversation and the results, each by the id (Gemini: the name)
    that pairs them, in order."""
    calls: list[str] = []
    results: list[str] = []
    for m in _conversation(body):
        calls += [c["id"] for c in m.get("tool_calls") or []]
        results += [m["tool_call_id"]] if m.get("role") == "tool" else []
        blocks = m.get("content") if isinstance(m.get("content"), list) else []
        calls += [b["id"] for b in blocks if b.get("type") == "tool_use"]
        results += [b["tool_use_id"] for b in blocks if b.get("type") == "tool_result"]
        calls += [m["call_id"]] if m.get("type") in ("function_call", "custom_tool_call") else []
        results += [m["call_id"]] if m.get("type") in ("function_call_output", "custom_tool_call_output") else []
        calls += [p["functionCall"]["name"] for p in m.get("parts") or [] if "functionCall" in p]
        results += [p["functionResponse"]["name"] for p in m.get("parts") or [] if "functionResponse" in p]
    return calls, results


def _server(target: str, script: list[Any], aside: Any) -> Any:
    """The loopback server of ``target``'s wire format, answering ``aside`` (and opencode's title) aside."""
    from pipeline.export.verify.agents import opencode_title
    from pipeline.loopback.chat import LoopbackServer
    from pipeline.loopback.gemini import GeminiLoopbackServer
    from pipeline.loopback.responses import ResponsesLoopbackServer

    if target == "codex":
        return ResponsesLoopbackServer(script, max_requests=60, aside=aside)
    if target == "gemini":
        return GeminiLoopbackServer(script, max_requests=60, aside=aside)
    return LoopbackServer(script, aside=lambda body: aside(body) or opencode_title(body))


def _long_run(tmp_path: Path, target: str, call: Any) -> tuple[list[Any], str, str, dict]:
    """``target``'s CLI reads ten files through a proxy whose profile's trigger is small, the server
    answering the proxy's summary calls aside; its bodies, the summary text, the profile's words and
    the proxy's stats."""
    from pipeline import compile_profile
    from pipeline.export.verify.agents import opencode_is_title

    (tmp_path / "p.yaml").write_text(SUMMARIZING % TRIGGER[target])
    profile = str(tmp_path / "p.yaml")
    summary = _summary_text(profile)
    project = tmp_path / "project"
    project.mkdir()
    for i in range(10):
        (project / f"f{i}.txt").write_text(f"file {i}\n" + "a line of text in the file\n" * 150)
    script = [{"toolCalls": [call(project / f"f{i}.txt")]} for i in range(10)]
    server = _server(target, [*script, "All files read."], lambda body: summary if _is_summary_call(body) else None)
    recipe: Recipe = RECIPES[target]()
    proxied = _Proxied(server, profile, tmp_path / "store.db", project)
    recipe.server = lambda: proxied  # type: ignore[method-assign]
    try:
        env = agent_env(target)
    except AgentInstallError as err:
        pytest.fail(f"the real {target} CLI could not be installed: {err}")
    env["XDG_CACHE_HOME"] = os.environ.get("XDG_CACHE_HOME") or str(cache_root() / "opencode-xdg-cache")
    done = recipe.run(recipe.binary, project, tmp_path / "home", [Invocation("Read f0.txt to f9.txt.")], 600, env)
    assert done.returncode == 0, (done.stdout, done.stderr)
    bodies = [b for b in server.bodies if isinstance(b, dict) and _conversation(b) and not opencode_is_title(b)]
    return bodies, summary, compile_profile(profile).profile.summary.system_prompt.render(), proxied.stats


def _assert_summarized_and_reused(bodies: list[Any], summary: str, words: str, stats: dict) -> dict:
    """The proxy's summary calls carry the profile's words, each of a new history; before the first,
    every request holds the tool results of the one before (the agent's own compaction did not
    fire); the summary is
    forwarded, then reused; the last request's tool calls and results are paired. The last request."""
    calls = [b for b in bodies if _is_summary_call(b)]
    assert calls, [json.dumps(b)[:200] for b in bodies]
    assert all(words in json.dumps(b) for b in calls)  # the profile's summary call, not the agent's
    histories = [json.dumps(_conversation(b)) for b in calls]
    assert len(set(histories)) == len(histories)  # never a second summary of the same history
    before = [_pairs(b)[1] for b in bodies[:bodies.index(calls[0])]]  # every tool result, in order
    # several requests below the trigger first, each with every result of the one before: the
    # agent's own compaction did not fire before the profile's
    assert len(before) >= 3 and all(b[:len(a)] == a for a, b in zip(before, before[1:])), "the agent compacted"
    quoted = json.dumps(summary)[1:-1]  # as the JSON text of a body holds it
    summarized = [b for b in bodies if not _is_summary_call(b) and quoted in json.dumps(_conversation(b))]
    assert len(summarized) >= 2, "the summary was not forwarded, then reused"
    asked = [b for b in bodies if not _is_summary_call(b)]
    # a summary stands for several requests: compaction on at most half of them, never on most
    assert 1 <= stats["compactions"] and 2 * stats["compactions"] <= len(asked), (stats, len(asked))
    assert stats["summaries_reused"] > stats["compactions"], stats
    calls_, results = _pairs(summarized[-1])
    assert calls_ and calls_ == results  # pairs whole
    return summarized[-1]


def test_a_long_pi_run_is_summarized_by_the_proxy_and_the_summary_reused(tmp_path):
    """pi reads ten files through the proxy; past the profile's trigger the proxy makes the profile's
    summary call (answered aside by the server), forwards the summary with the kept messages, and the
    next requests reuse it; pi's own compaction (window 128,000) never fires."""
    run = _long_run(tmp_path, "pi", lambda path: {"name": "read", "arguments": {"path": path.name}})
    last = _assert_summarized_and_reused(*run)["messages"]
    assert last[0]["role"] == "system" and last[1]["role"] == "user" and "Read f0.txt to f9.txt." in json.dumps(last[1])


def test_a_long_claude_code_run_is_summarized_by_the_proxy(tmp_path):
    """The same on Claude Code (Anthropic Messages, its Read tool): the proxy's summary call carries
    the profile's words in its system prompt, Claude Code's next requests the summary and its latest
    tool pairs."""
    bodies, summary, words, stats = run = _long_run(
        tmp_path, "claude-code", lambda path: {"name": "Read", "arguments": {"file_path": str(path)}})
    _assert_summarized_and_reused(*run)
    assert all(words in json.dumps(b.get("system")) for b in bodies if _is_summary_call(b))


def test_a_long_codex_run_is_summarized_by_the_proxy_in_the_responses_format(tmp_path):
    """Codex (OpenAI Responses, its exec_command tool): the summary call is a Responses request with the
    profile's words as its instructions; Codex's next requests carry the summary as a user message,
    every function_call with its output."""
    bodies, summary, words, stats = run = _long_run(
        tmp_path, "codex", lambda path: {"name": "exec_command", "arguments": {"cmd": f"cat {path.name}"}})
    last = _assert_summarized_and_reused(*run)
    assert all(b["instructions"] == words for b in bodies if _is_summary_call(b))
    assert "Read f0.txt to f9.txt." in json.dumps(last["input"])


def test_a_long_gemini_cli_run_is_summarized_by_the_proxy_in_the_gemini_format(tmp_path):
    """Gemini CLI (Gemini's generateContent, its read_file tool): the summary call carries the
    profile's words as its systemInstruction; Gemini CLI's next requests carry the summary as a user
    content, every functionCall with its functionResponse."""
    bodies, summary, words, stats = run = _long_run(
        tmp_path, "gemini", lambda path: {"name": "read_file", "arguments": {"file_path": str(path)}})
    last = _assert_summarized_and_reused(*run)
    assert all(words in json.dumps(b["systemInstruction"]) for b in bodies if _is_summary_call(b))
    assert last["contents"][0]["role"] == "user" and "Read f0.txt to f9.txt." in json.dumps(last["contents"][0])


def test_a_long_opencode_run_is_summarized_by_the_proxy(tmp_path):
    """opencode (OpenAI chat completions, its read tool): as pi's, through opencode's provider."""
    run = _long_run(tmp_path, "opencode", lambda path: {"name": "read", "arguments": {"filePath": str(path)}})
    last = _assert_summarized_and_reused(*run)["messages"]
    assert any("Read f0.txt to f9.txt." in json.dumps(m) for m in last[:3])
