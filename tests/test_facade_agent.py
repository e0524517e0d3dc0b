"""``Pipeline.agent``: the reference agent wired from one import, run against the loopback server."""

from __future__ import annotations

import pytest

import pipeline
from pipeline.llm.errors import LLMAuthError
from pipeline import Tool
from pipeline.session import MessageEntry, SessionFile
from pipeline.testing.loopback import LoopbackServer

READ = {"toolCalls": [{"name": "read", "arguments": {"path": "notes.txt"}}]}


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "notes.txt").write_text("the notes say 42\n", encoding="utf-8")
    (root / "AGENTS.md").write_text("Answer in one line.\n", encoding="utf-8")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))  # no files of the machine's own
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "S4F_TEST_KEY"):
        monkeypatch.delenv(name, raising=False)
    return root


def _roles(path) -> list[str]:
    session = SessionFile.open(path)
    assert session.problems == []
    return [e.message.role for e in session.path_to() if isinstance(e, MessageEntry)]


def test_an_agent_from_one_import_runs_a_tool_and_answers(project):
    events: list[str] = []
    with LoopbackServer([READ, "It says 42."]) as server:
        agent = pipeline.compile_profile("default").agent(
            project / "chat.jsonl", model="local-model", base_url=server.openai_base_url, cwd=project,
            context_window=32768, max_tokens=4096, listener=lambda event: events.append(event.kind),
        )
        result = agent.run("What do the notes say?")
        first, second = server.received
    assert result.answer == "It says 42." and result.error is None
    assert events[:3] == ["run_start", "request", "reply"] and "tool_end" in events
    # the built-in read tool ran in cwd; no key was named or set: none is sent to the local server
    assert second.body["messages"][-1]["content"] == "the notes say 42\n"
    assert "authorization" not in first.headers
    assert first.body["model"] == "local-model"
    assert [t["function"]["name"] for t in first.body["tools"]] == ["read", "ls", "find", "grep"]
    # discovery as pi does it: the project's AGENTS.md is in the system prompt
    assert "Answer in one line." in first.body["messages"][0]["content"]
    assert _roles(project / "chat.jsonl") == ["user", "assistant", "toolResult", "assistant"]
    assert agent.conversation.model.context_window == 32768


def test_a_second_agent_continues_the_session_and_an_empty_file_starts_one(project):
    path = project / "chat.jsonl"
    path.write_text("", encoding="utf-8")  # as pi does: an empty file is a new session
    p = pipeline.compile_profile("default")
    with LoopbackServer(["one", "two"]) as server:
        p.agent(path, model="m", base_url=server.openai_base_url, cwd=project).run("first")
        p.agent(str(path), model="m", base_url=server.openai_base_url, cwd=project).run("second")
        last = server.bodies[-1]
    assert _roles(path) == ["user", "assistant", "user", "assistant"]
    assert [m["role"] for m in last["messages"]][1:] == ["user", "assistant", "user"]


def test_a_key_given_as_a_value_is_sent_and_not_written(project):
    with LoopbackServer(["ok"]) as server:
        agent = pipeline.compile_profile("default").agent(
            project / "chat.jsonl", model="m", base_url=server.openai_base_url, cwd=project, api_key="sk-s4f-value",
        )
        agent.run("hi")
        [request] = server.received
    assert request.headers["authorization"] == "Bearer sk-s4f-value"
    assert "sk-s4f-value" not in (project / "chat.jsonl").read_text(encoding="utf-8")
    assert "sk-s4f-value" not in repr(agent.client)


def test_a_missing_key_is_raised_before_the_session_is_created(project):
    with pytest.raises(LLMAuthError) as caught:
        pipeline.compile_profile("default").agent(
            project / "chat.jsonl", model="m", base_url="http://127.0.0.1:9/v1", api_key_env="S4F_TEST_KEY", cwd=project,
        )
    assert caught.value.env_name == "S4F_TEST_KEY"
    assert not (project / "chat.jsonl").exists()


def test_host_tools_and_built_in_names_keep_their_order_and_the_anthropic_wire(project):
    calls: list[dict] = []

    def lookup(arguments):
        calls.append(dict(arguments))
        return "found it"

    tool = Tool(name="lookup", description="Looks a word up.", parameters={
        "type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}, function=lookup)
    script = [{"toolCalls": [{"name": "lookup", "arguments": {"word": "x"}}]}, "done"]
    with LoopbackServer(script) as server:
        agent = pipeline.compile_profile("default").agent(
            project / "chat.jsonl", model="claude-x", wire="anthropic", base_url=server.anthropic_base_url,
            cwd=project, tools=[tool, "ls"], discover=False,
        )
        result = agent.run("look x up")
        first = server.received[0]
    assert result.answer == "done" and calls == [{"word": "x"}]
    assert first.path == "/v1/messages" and "x-api-key" not in first.headers
    assert [t["name"] for t in first.body["tools"]] == ["lookup", "ls"]
    assert "Answer in one line." not in str(first.body.get("system"))  # discover=False: no AGENTS.md
    assert agent.conversation.model.api == "anthropic-messages"


def test_no_model_anywhere_is_a_located_problem(project):
    with pytest.raises(pipeline.PipelineError) as caught:
        pipeline.compile_profile("default").agent(project / "chat.jsonl", base_url="http://127.0.0.1:9/v1")
    [problem] = caught.value.problems
    assert problem.code == "provider.config" and problem.key == "model"
    assert not (project / "chat.jsonl").exists()


def test_agent_options_and_the_provider_table():
    """Issue 30, item 3: the agent's wiring takes one typed options object, and every provider
    default (API name, endpoint, key variable) comes from one table."""
    import dataclasses
    from pathlib import Path

    from pipeline.llm.anthropic_messages import AnthropicMessagesClient
    from pipeline.llm.openai_chat import OpenAIChatClient
    from pipeline.llm.providers import PROVIDERS
    from pipeline.runtime.host import APIS
    from pipeline.wiring import AgentOptions, Endpoint

    keyed = Endpoint.of(AgentOptions(wire="anthropic", api_key="sk-value"))
    assert (keyed.api_key_env, dict(keyed.env or {}), keyed.anonymous) == ("ANTHROPIC_API_KEY", {"ANTHROPIC_API_KEY": "sk-value"}, False)
    assert "sk-value" not in repr(AgentOptions(api_key="sk-value")) and "sk-value" not in repr(keyed)
    local = Endpoint.of(AgentOptions(base_url="http://127.0.0.1:1"))
    assert local.anonymous and local.env is None and "env" not in local.client_options()
    assert Endpoint.of(AgentOptions(base_url="http://x", api_key_env="MINE")).anonymous is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        AgentOptions().wire = "anthropic"  # type: ignore[misc]
    assert (OpenAIChatClient.default_key_env, AnthropicMessagesClient.default_base_url) == (
        PROVIDERS["openai"].key_env, PROVIDERS["anthropic"].base_url)
    assert APIS == {"openai": "openai-completions", "anthropic": "anthropic-messages",
                    "gemini": "google-generative-ai"}
    from pipeline.llm.gemini import GeminiClient
    from pipeline.proxy.routes import Upstreams

    assert (GeminiClient.default_base_url, GeminiClient.default_key_env) == (
        PROVIDERS["gemini"].base_url, PROVIDERS["gemini"].key_env)
    assert Upstreams() == Upstreams(*(PROVIDERS[name].base_url for name in ("anthropic", "openai", "gemini")))
    package = Path(__file__).resolve().parents[1] / "pipeline"
    for spelling in ('"OPENAI_API_KEY"', '"GEMINI_API_KEY"', '"https://api.anthropic.com"',
                     '"https://generativelanguage.googleapis.com"'):
        spelled = [p for p in package.rglob("*.py") if spelling in p.read_text(encoding="utf-8")]
        assert [p.name for p in spelled] == ["providers.py"], spelling
