"""The LangChain v1 middleware with the real langchain and langchain-openai against the loopback model server."""

from __future__ import annotations

import functools

import pytest

pytest.importorskip("langchain.agents", reason="the langchain extra (part of the test extra)")
pytest.importorskip("langchain_openai", reason="the langchain extra (part of the test extra)")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import HumanMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
import openai  # noqa: E402

from pipeline.adapters.langchain import ProfileMiddleware  # noqa: E402
from pipeline.testing.loopback import LoopbackServer  # noqa: E402
from . import adapter_common as common  # noqa: E402
from .test_pi_sessions import DATA  # noqa: E402


@tool
def read(path: str) -> str:
    """Read a file."""
    return "unused"


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    return common.TOOL_RESULT


def test_three_runs_compact_where_our_loop_does(tmp_path, monkeypatch):
    with LoopbackServer(common.REPLIES) as server:
        pipeline = common.profile(server, monkeypatch)
        middleware = ProfileMiddleware.create(pipeline, tmp_path / "chat.jsonl", context_window=common.WINDOW,
                                              model="loopback-model", cwd=str(tmp_path))
        model = ChatOpenAI(model="loopback-model", base_url=server.openai_base_url, api_key="dummy", max_retries=0)
        agent = create_agent(model, tools=[read, lookup], middleware=[middleware])
        messages, answers = [], []
        for prompt in common.PROMPTS:
            state = agent.invoke({"messages": [*messages, HumanMessage(prompt)]})
            messages = state["messages"]
            answers.append(messages[-1].text)
        bodies = common.model_bodies(server)
        common.assert_summarized_by_profile(pipeline, server.bodies)

    assert answers == ["The fixture is small.", "They differ in size.", "Nothing is left."]
    assert messages[0].text == common.summary_message(pipeline)  # the state after run 3 holds the summary
    common.assert_three_runs_like_our_loop(pipeline, middleware.bridge, bodies, tmp_path / "chat.jsonl",
                                           DATA / "langchain.jsonl", tmp_path, monkeypatch)


def test_a_system_prompt_given_to_create_agent_follows_the_profiles(tmp_path):
    with LoopbackServer(["Short answer."]) as server:
        middleware = ProfileMiddleware.create("default", tmp_path / "chat.jsonl", context_window=common.WINDOW,
                                              cwd=str(tmp_path))
        model = ChatOpenAI(model="loopback-model", base_url=server.openai_base_url, api_key="dummy", max_retries=0)
        agent = create_agent(model, tools=[lookup], system_prompt="Answer in one line.", middleware=[middleware])
        state = agent.invoke({"messages": [HumanMessage("hi")]})
        [body] = server.bodies
    assert state["messages"][-1].text == "Short answer."
    assert common.system_text(body) == middleware.bridge.system_prompt(["lookup"]) + "\n\nAnswer in one line."


def _start(server, pipeline, path, asynchronous=False):
    middleware = ProfileMiddleware.create(pipeline, path, context_window=common.WINDOW, model="loopback-model",
                                          cwd=str(path.parent))
    model = ChatOpenAI(model="loopback-model", base_url=server.openai_base_url, api_key="dummy", max_retries=0)
    agent, messages = create_agent(model, tools=[read, lookup], middleware=[middleware]), []
    loop = common.run_loop() if asynchronous else None  # one loop: the async client is bound to it

    def run(prompt):
        state = {"messages": [*messages, HumanMessage(prompt)]}
        state = loop.run_until_complete(agent.ainvoke(state)) if loop else agent.invoke(state)
        messages[:] = state["messages"]
        return messages[-1].text

    run.messages = messages
    return middleware.bridge, run


class TestOverflowRecovery(common.OverflowRecoveryTests):
    start = staticmethod(_start)
    error = openai.BadRequestError


class TestOverflowRecoveryAsync(common.OverflowRecoveryTests):
    """``ainvoke``: the same through ``awrap_model_call``."""

    start = staticmethod(functools.partial(_start, asynchronous=True))
    error = openai.BadRequestError


def test_after_an_overflow_recovery_the_state_holds_the_compacted_context(tmp_path, monkeypatch):
    pipeline, _, run = common.recovered_run(_start, tmp_path, monkeypatch)
    # the command replaced the state: the summary, the kept run-2 prompt, the retried answer
    assert [type(m).__name__ for m in run.messages] == ["HumanMessage", "HumanMessage", "AIMessage"]
    assert [m.text for m in run.messages] == [common.summary_message(pipeline), common.PROMPTS[1],
                                              "They differ in size."]
