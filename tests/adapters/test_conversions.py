"""The adapters' message conversions and the Agents SDK session protocol, with the real frameworks' types."""

from __future__ import annotations

import asyncio

import pytest

from pipeline.adapters import ContextBridge

PI = [
    {"role": "user", "content": [{"type": "text", "text": "list the files"}]},
    {"role": "assistant", "content": [{"type": "text", "text": "Looking."},
                                      {"type": "toolCall", "id": "call_1", "name": "ls", "arguments": {"path": "."}}],
     "usage": {"input": 120, "output": 8, "cacheRead": 30, "cacheWrite": 0}},
    {"role": "toolResult", "toolCallId": "call_1", "toolName": "ls", "content": [{"type": "text", "text": "a.py"}],
     "isError": False},
    {"role": "assistant", "content": [{"type": "text", "text": "One file."}],
     "usage": {"input": 150, "output": 3, "cacheRead": 0, "cacheWrite": 0}},
]


def _bridge(tmp_path) -> ContextBridge:
    return ContextBridge("default", tmp_path / "s.jsonl", context_window=10000, model="m", cwd=str(tmp_path))


def _essentials(messages):
    """What a round trip must keep: roles, texts, tool calls and results, usage counts."""
    out = []
    for m in messages:
        blocks = [(b["type"], b.get("text"), b.get("id"), b.get("name"), b.get("arguments")) for b in m["content"]]
        usage = {k: m["usage"][k] for k in ("input", "output", "cacheRead")} if m["role"] == "assistant" else None
        out.append((m["role"], blocks, m.get("toolCallId"), m.get("toolName"), m.get("isError"), usage))
    return out


def test_pydantic_ai_round_trip(tmp_path):
    pytest.importorskip("pydantic_ai")
    from pipeline.adapters.pydantic_ai import from_pi, to_pi

    framework = from_pi(PI)
    assert [type(m).__name__ for m in framework] == ["ModelRequest", "ModelResponse", "ModelRequest", "ModelResponse"]
    assert _essentials(to_pi(framework, _bridge(tmp_path))) == _essentials(PI)


def test_langchain_round_trip(tmp_path):
    pytest.importorskip("langchain.agents")
    from pipeline.adapters.langchain import from_pi, to_pi

    framework = from_pi(PI)
    assert [type(m).__name__ for m in framework] == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    assert all(m.id for m in framework)
    assert _essentials(to_pi(framework, _bridge(tmp_path))) == _essentials(PI)


def test_agents_items_round_trip_with_usage_from_the_run(tmp_path):
    pytest.importorskip("agents")
    from agents.usage import InputTokensDetails, OutputTokensDetails, RequestUsage

    from pipeline.adapters.openai_agents import from_pi, to_pi

    items = from_pi(PI)
    assert [i.get("type", "message") for i in items] == ["message", "message", "function_call", "function_call_output",
                                                         "message"]
    usages = [RequestUsage(input_tokens=150, output_tokens=8, total_tokens=158,
                           input_tokens_details=InputTokensDetails(cached_tokens=30, cache_write_tokens=0),
                           output_tokens_details=OutputTokensDetails(reasoning_tokens=0)),
              RequestUsage(input_tokens=150, output_tokens=3, total_tokens=153,
                           input_tokens_details=InputTokensDetails(cached_tokens=0, cache_write_tokens=0),
                           output_tokens_details=OutputTokensDetails(reasoning_tokens=0))]
    assert _essentials(to_pi(items, _bridge(tmp_path), {}, usages)) == _essentials(PI)


def test_agents_session_protocol_on_a_pi_file(tmp_path):
    pytest.importorskip("agents")
    from agents.memory import Session

    from pipeline.adapters.openai_agents import ProfileSession, from_pi

    session = ProfileSession(_bridge(tmp_path))
    assert isinstance(session, Session)

    async def steps():
        await session.add_items(from_pi(PI))
        everything = await session.get_items()
        last_two = await session.get_items(limit=2)
        popped = await session.pop_item()
        after_pop = await session.get_items()
        await session.clear_session()
        return everything, last_two, popped, after_pop, await session.get_items()

    everything, last_two, popped, after_pop, cleared = asyncio.run(steps())
    assert everything == from_pi(PI)
    assert last_two == everything[-2:]
    assert popped == everything[-1] and after_pop == everything[:-1]
    assert cleared == []
    assert session.session_id == session.bridge.session.header.raw["id"]


def test_the_prompt_lists_the_tools_sent_with_the_catalog_snippets(tmp_path):
    bridge = _bridge(tmp_path)
    catalog = bridge.pipeline.profile.system_prompt.tools["read"].snippet.render({})
    with_read = bridge.system_prompt(["read", "lookup"])
    assert catalog in with_read
    assert catalog not in bridge.system_prompt(["lookup"])
    described = ContextBridge("default", tmp_path / "t.jsonl", context_window=10000, cwd=str(tmp_path),
                              tool_snippets={"lookup": "Look a topic up in the team wiki"})
    assert "Look a topic up in the team wiki" in described.system_prompt(["read", "lookup"])
