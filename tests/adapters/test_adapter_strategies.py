"""Each adapter compacts through the one driver: ``compaction.strategy`` and
``compaction.model_overrides`` take effect through pydantic-ai, the Agents SDK and LangChain
(the real frameworks against the loopback model server).

The scripted conversation is adapter_common's: run 2's reply reports a context over the
threshold, so the check compacts after it. With ``strategy: mask_tool_results`` (the
profile's, or the model's own through ``model_overrides``) the compaction is one mask entry:
no summary call, and run 3's request shows the tool result as the profile's placeholder.
An override that raises the threshold for this model (``reserve_tokens``) makes the same
conversation compact nothing; the same override for another model changes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

pytest.importorskip("pydantic_ai", reason="the pydantic-ai extra (part of the test extra)")
pytest.importorskip("agents", reason="the openai-agents extra (part of the test extra)")
pytest.importorskip("langchain.agents", reason="the langchain extra (part of the test extra)")

from pipeline.facade import Pipeline  # noqa: E402
from pipeline.session import CompactionEntry, CustomEntry, SessionFile  # noqa: E402
from pipeline.session.masks import MASK_TYPE  # noqa: E402
from pipeline.testing.loopback import LoopbackServer  # noqa: E402
from . import adapter_common as common  # noqa: E402

MODEL = "loopback-model"
KEY = f"openai/{MODEL}"  # the bridge's provider and model
NO_SUMMARY = [r for r in common.REPLIES if r != common.SUMMARY]


def _profile(server: Any, monkeypatch: Any, overrides: dict) -> Pipeline:
    return common.profile(server, monkeypatch).with_overrides(overrides)


def _pydantic_ai(server: Any, pipeline: Pipeline, path: Path) -> Any:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from pipeline.adapters.pydantic_ai import ProfileCapability

    capability = ProfileCapability.create(pipeline, path, context_window=common.WINDOW, model=MODEL,
                                          cwd=str(path.parent))
    model = OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=server.openai_base_url, api_key="dummy"))
    agent = Agent(model, capabilities=[capability])

    @agent.tool_plain
    def lookup(topic: str) -> str:
        """Look a topic up."""
        return common.TOOL_RESULT

    history = None
    for prompt in common.PROMPTS:
        result = agent.run_sync(prompt, message_history=history)
        history = result.all_messages()
    return capability.bridge


def _openai_agents(server: Any, pipeline: Pipeline, path: Path) -> Any:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool
    from openai import AsyncOpenAI

    from pipeline.adapters.openai_agents import ProfileSession

    @function_tool
    def lookup(topic: str) -> str:
        """Look a topic up."""
        return common.TOOL_RESULT

    session = ProfileSession.create(pipeline, path, context_window=common.WINDOW, model=MODEL, cwd=str(path.parent))
    client = AsyncOpenAI(base_url=server.openai_base_url, api_key="dummy", max_retries=0)
    agent = Agent(name="coder", instructions=session.instructions, tools=[lookup],
                  model=OpenAIChatCompletionsModel(model=MODEL, openai_client=client))
    for prompt in common.PROMPTS:
        Runner.run_sync(agent, prompt, session=session, run_config=session.run_config(tracing_disabled=True))
    return session.bridge


def _langchain(server: Any, pipeline: Pipeline, path: Path) -> Any:
    from langchain.agents import create_agent
    from langchain_core.messages import HumanMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    from pipeline.adapters.langchain import ProfileMiddleware

    @tool
    def lookup(topic: str) -> str:
        """Look a topic up."""
        return common.TOOL_RESULT

    middleware = ProfileMiddleware.create(pipeline, path, context_window=common.WINDOW, model=MODEL, cwd=str(path.parent))
    agent = create_agent(ChatOpenAI(model=MODEL, base_url=server.openai_base_url, api_key="dummy", max_retries=0),
                         tools=[lookup], middleware=[middleware])
    messages: list = []
    for prompt in common.PROMPTS:
        messages = agent.invoke({"messages": [*messages, HumanMessage(prompt)]})["messages"]
    return middleware.bridge


FRAMEWORKS: dict[str, Callable[[Any, Pipeline, Path], Any]] = {
    "pydantic-ai": _pydantic_ai, "openai-agents": _openai_agents, "langchain": _langchain,
}

MASKING = {
    "profile strategy": {"compaction.strategy": "mask_tool_results"},
    "model override": {"compaction.model_overrides": {KEY: {"strategy": "mask_tool_results"}}},
}


def _kinds(path: Path) -> list[str]:
    out = []
    for entry in SessionFile.open(path).path_to():
        if isinstance(entry, CompactionEntry):
            out.append("compaction")
        elif isinstance(entry, CustomEntry) and entry.custom_type == MASK_TYPE:
            out.append("mask")
        elif getattr(entry, "message", None) is not None:
            out.append(entry.message.role)
    return out


def _tool_texts(body: dict) -> list[str]:
    return [m.get("content") if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
            for m in body.get("messages") or () if m.get("role") == "tool"]


@pytest.mark.parametrize("how", MASKING)
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_mask_tool_results_takes_effect_through_the_adapter(framework, how, tmp_path, monkeypatch):
    path = tmp_path / "chat.jsonl"
    with LoopbackServer(NO_SUMMARY) as server:
        pipeline = _profile(server, monkeypatch, MASKING[how])
        bridge = FRAMEWORKS[framework](server, pipeline, path)
        bodies = list(server.bodies)
    # no summary call: every request is the framework's; one mask entry after run 2, no compaction entry
    assert [b.get("model") for b in bodies] == [MODEL] * 4
    assert _kinds(path) == ["user", "assistant", "toolResult", "assistant", "user", "assistant", "mask", "user",
                            "assistant"]
    [done] = bridge.compactions
    assert done.result.strategy == "mask_tool_results" and done.result.masked and not done.result.summarized
    placeholder = pipeline.profile.compaction.masking.placeholder.render(
        {"tool": "lookup", "chars": str(len(common.TOOL_RESULT))})
    assert any(common.TOOL_RESULT in t for t in _tool_texts(bodies[2]))  # run 2 still sees the result
    run3 = _tool_texts(bodies[3])
    assert run3 and all(common.TOOL_RESULT not in t for t in run3) and any(placeholder in t for t in run3)


@pytest.mark.parametrize("key, compacts", [(KEY, False), ("openai/another-model", True)])
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_model_override_of_the_trigger_takes_effect_through_the_adapter(framework, key, compacts, tmp_path,
                                                                          monkeypatch):
    """``reserve_tokens: 100`` for this model: 3500 tokens stay under 4000 - 100, nothing compacts."""
    path = tmp_path / "chat.jsonl"
    replies = common.REPLIES if compacts else NO_SUMMARY
    with LoopbackServer(replies) as server:
        pipeline = _profile(server, monkeypatch, {"compaction.model_overrides": {key: {"reserve_tokens": 100}}})
        bridge = FRAMEWORKS[framework](server, pipeline, path)
    assert ("compaction" in _kinds(path)) == compacts
    assert len(bridge.compactions) == (1 if compacts else 0)
    if compacts:
        assert bridge.compactions[0].result.summarized and bridge.compactions[0].result.strategy == "summarize"
