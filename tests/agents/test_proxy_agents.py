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

    def __enter__(self) -> "_Proxied":
        self.server.__enter__()
        up = self.server.url
        self.proxy = ProxyProcess(self.profile, "--cwd", str(self.cwd), "--anthropic-url", up, "--openai-url",
                                  up + "/v1", "--gemini-url", up, store=self.store).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proxy is not None:
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
  trigger: {tokens: 6000}
  keep_recent_tokens: 2000
"""


def _summary_text(profile: str) -> str:
    from pipeline import compile_profile

    summary = compile_profile(profile).profile.summary
    return "\n".join(f"{summary.schema_format.section_prefix}{s.heading}\n- files were read" for s in summary.schema_)


def _is_summary_call(body: Any) -> bool:
    return "<conversation>" in json.dumps(body)


def _long_run(tmp_path: Path, target: str, call: Any) -> tuple[list[Any], str, str]:
    """``target``'s CLI reads ten files through a proxy whose profile's trigger is small, the server
    answering the proxy's summary calls aside; its bodies, the summary text and the profile's words."""
    from pipeline import compile_profile
    from pipeline.loopback.chat import LoopbackServer

    (tmp_path / "p.yaml").write_text(SUMMARIZING)
    profile = str(tmp_path / "p.yaml")
    summary = _summary_text(profile)
    project = tmp_path / "project"
    project.mkdir()
    for i in range(10):
        (project / f"f{i}.txt").write_text(f"file {i}\n" + "a line of text in the file\n" * 150)
    script = [{"toolCalls": [call(project / f"f{i}.txt")]} for i in range(10)]
    server = LoopbackServer([*script, "All files read."],
                            aside=lambda body: summary if _is_summary_call(body) else None)
    recipe: Recipe = RECIPES[target]()
    recipe.server = lambda: _Proxied(server, profile, tmp_path / "store.db", project)  # type: ignore[method-assign]
    try:
        env = agent_env(target)
    except AgentInstallError as err:
        pytest.fail(f"the real {target} CLI could not be installed: {err}")
    done = recipe.run(recipe.binary, project, tmp_path / "home", [Invocation("Read f0.txt to f9.txt.")], 600, env)
    assert done.returncode == 0, (done.stdout, done.stderr)
    bodies = [b for b in server.bodies if isinstance(b, dict)]
    return bodies, summary, compile_profile(profile).profile.summary.system_prompt.render()


def test_a_long_pi_run_is_summarized_by_the_proxy_and_the_summary_reused(tmp_path):
    """pi reads ten files through the proxy; past the profile's trigger the proxy makes the profile's
    summary call (answered aside by the server), forwards the summary with the kept messages, and the
    next requests reuse it; pi's own compaction (window 128,000) never fires."""
    bodies, summary, words = _long_run(tmp_path, "pi", lambda path: {"name": "read", "arguments": {"path": path.name}})
    calls = [b for b in bodies if _is_summary_call(b)]
    turns = [b for b in bodies if not _is_summary_call(b)]
    assert calls, "no summary call"
    histories = [json.dumps(b["messages"][1:]) for b in calls]
    assert len(set(histories)) == len(histories)  # never a second summary of the same history
    assert all(words in json.dumps(b["messages"][0]) for b in calls)  # the profile's summary call, not pi's
    quoted = json.dumps(summary)[1:-1]  # as the JSON text of a body holds it
    summarized = [b for b in turns if quoted in json.dumps(b["messages"][:2])]
    assert len(summarized) >= 2  # the summary forwarded, then reused
    last = summarized[-1]["messages"]
    assert last[0]["role"] == "system" and last[1]["role"] == "user" and "Read f0.txt to f9.txt." in json.dumps(last[1])
    call_ids = [c["id"] for m in last for c in (m.get("tool_calls") or [])]
    assert call_ids == [m["tool_call_id"] for m in last if m["role"] == "tool"]  # pairs whole


def test_a_long_claude_code_run_is_summarized_by_the_proxy(tmp_path):
    """The same on Claude Code (Anthropic Messages, its Read tool): the proxy's summary call carries
    the profile's words, Claude Code's next requests carry the summary and its latest tool pairs."""
    bodies, summary, words = _long_run(tmp_path, "claude-code",
                                       lambda path: {"name": "Read", "arguments": {"file_path": str(path)}})
    calls = [b for b in bodies if _is_summary_call(b)]
    assert calls, [json.dumps(b)[:200] for b in bodies]
    assert all(words in json.dumps(b.get("system")) for b in calls)
    quoted = json.dumps(summary)[1:-1]
    summarized = [b for b in bodies if not _is_summary_call(b) and quoted in json.dumps(b.get("messages"))]
    assert summarized, "the summary was not forwarded"
    last = summarized[-1]["messages"]
    uses = [c["id"] for m in last if isinstance(m.get("content"), list) for c in m["content"] if c.get("type") == "tool_use"]
    results = [c["tool_use_id"] for m in last if isinstance(m.get("content"), list) for c in m["content"]
               if c.get("type") == "tool_result"]
    assert uses and uses == results
