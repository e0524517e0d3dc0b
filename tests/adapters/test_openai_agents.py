"""The OpenAI Agents SDK adapter with the real openai-agents against the loopback model server."""

from __future__ import annotations

import functools

import pytest

pytest.importorskip("agents", reason="the openai-agents extra (part of the test extra)")

from agents import Agent, ModelSettings, OpenAIChatCompletionsModel, Runner, function_tool  # noqa: E402
import openai  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402

from pipeline.adapters.openai_agents import ProfileSession  # noqa: E402
from pipeline.testing.loopback import LoopbackServer  # noqa: E402
from . import adapter_common as common  # noqa: E402
from .test_pi_sessions import DATA  # noqa: E402


@function_tool
def read(path: str) -> str:
    """Read a file."""
    return "unused"


@function_tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    return common.TOOL_RESULT


def test_three_runs_compact_where_our_loop_does(tmp_path, monkeypatch):
    with LoopbackServer(common.REPLIES) as server:
        pipeline = common.profile(server, monkeypatch)
        session = ProfileSession.create(pipeline, tmp_path / "chat.jsonl", context_window=common.WINDOW,
                                        model="loopback-model", cwd=str(tmp_path))
        client = AsyncOpenAI(base_url=server.openai_base_url, api_key="dummy", max_retries=0)
        model = OpenAIChatCompletionsModel(model="loopback-model", openai_client=client)
        agent = Agent(name="coder", instructions=session.instructions, tools=[read, lookup], model=model)
        answers = []
        for prompt in common.PROMPTS:
            result = Runner.run_sync(agent, prompt, session=session,
                                     run_config=session.run_config(tracing_disabled=True))
            answers.append(result.final_output)
        bodies = common.model_bodies(server)
        common.assert_summarized_by_profile(pipeline, server.bodies)

    assert answers == ["The fixture is small.", "They differ in size.", "Nothing is left."]
    common.assert_three_runs_like_our_loop(pipeline, session.bridge, bodies, tmp_path / "chat.jsonl",
                                           DATA / "openai_agents.jsonl", tmp_path, monkeypatch)


def test_the_input_filter_puts_the_profile_first_before_an_agents_own_instructions(tmp_path):
    with LoopbackServer(["Short answer."]) as server:
        session = ProfileSession.create("default", tmp_path / "chat.jsonl", context_window=common.WINDOW,
                                        cwd=str(tmp_path))
        client = AsyncOpenAI(base_url=server.openai_base_url, api_key="dummy", max_retries=0)
        model = OpenAIChatCompletionsModel(model="loopback-model", openai_client=client)
        agent = Agent(name="coder", instructions="Answer in one line.", tools=[lookup], model=model)
        result = Runner.run_sync(agent, "hi", run_config=session.run_config(tracing_disabled=True))
        [body] = server.bodies
    assert result.final_output == "Short answer."
    assert common.system_text(body) == session.bridge.system_prompt(["lookup"]) + "\n\nAnswer in one line."


def _start(server, pipeline, path, streamed=False):
    session = ProfileSession.create(pipeline, path, context_window=common.WINDOW, model="loopback-model",
                                    cwd=str(path.parent))
    client = AsyncOpenAI(base_url=server.openai_base_url, api_key="dummy", max_retries=0)
    model = session.model(OpenAIChatCompletionsModel(model="loopback-model", openai_client=client))
    settings = ModelSettings(include_usage=True)  # a streamed answer reports its usage only when asked to
    agent = Agent(name="coder", instructions=session.instructions, tools=[read, lookup], model=model,
                  model_settings=settings)

    loop = common.run_loop() if streamed else None  # one loop: the async client is bound to it

    async def stream(prompt):
        result = Runner.run_streamed(agent, prompt, session=session, run_config=session.run_config(tracing_disabled=True))
        async for _ in result.stream_events():
            pass
        return result.final_output

    def run(prompt):
        if loop is not None:
            return loop.run_until_complete(stream(prompt))
        result = Runner.run_sync(agent, prompt, session=session, run_config=session.run_config(tracing_disabled=True))
        return result.final_output

    return session.bridge, run


class TestOverflowRecovery(common.OverflowRecoveryTests):
    start = staticmethod(_start)
    error = openai.BadRequestError


class TestOverflowRecoveryStreamed(common.OverflowRecoveryTests):
    """``Runner.run_streamed``: the same through ``ProfileModel.stream_response``."""

    start = staticmethod(functools.partial(_start, streamed=True))
    error = openai.BadRequestError
