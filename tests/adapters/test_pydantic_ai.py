"""The pydantic-ai adapter with the real pydantic-ai against the loopback model server."""

from __future__ import annotations

import functools

import pytest

pytest.importorskip("pydantic_ai", reason="the pydantic-ai extra (part of the test extra)")

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai import messages as pm  # noqa: E402
from pydantic_ai.exceptions import ModelHTTPError  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

from pipeline.adapters.pydantic_ai import ProfileCapability  # noqa: E402
from pipeline.testing.loopback import LoopbackServer  # noqa: E402
from . import adapter_common as common  # noqa: E402
from .test_pi_sessions import DATA, shape  # noqa: E402


def _agent(server, capability):
    model = OpenAIChatModel("loopback-model", provider=OpenAIProvider(base_url=server.openai_base_url, api_key="dummy"))
    agent = Agent(model, capabilities=[capability])

    @agent.tool_plain
    def read(path: str) -> str:
        """Read a file."""
        return "unused"

    @agent.tool_plain
    def lookup(topic: str) -> str:
        """Look a topic up."""
        return common.TOOL_RESULT

    return agent


def test_three_runs_compact_where_our_loop_does(tmp_path, monkeypatch):
    with LoopbackServer(common.REPLIES) as server:
        pipeline = common.profile(server, monkeypatch)
        capability = ProfileCapability.create(pipeline, tmp_path / "chat.jsonl", context_window=common.WINDOW,
                                              model="loopback-model", cwd=str(tmp_path))
        agent = _agent(server, capability)
        history = None
        answers = []
        for prompt in common.PROMPTS:
            result = agent.run_sync(prompt, message_history=history)
            answers.append(result.output)
            history = result.all_messages()
        bodies = common.model_bodies(server)
        common.assert_summarized_by_profile(pipeline, server.bodies)

    assert answers == ["The fixture is small.", "They differ in size.", "Nothing is left."]
    # one compaction, after run 2's reply: after 6 messages (prompt, call, result, answer, prompt, answer)
    common.assert_three_runs_like_our_loop(pipeline, capability.bridge, bodies, tmp_path / "chat.jsonl",
                                           DATA / "pydantic_ai.jsonl", tmp_path, monkeypatch)


def test_an_agents_own_instructions_follow_the_profiles(tmp_path):
    with LoopbackServer(["Short answer."]) as server:
        capability = ProfileCapability.create("default", tmp_path / "chat.jsonl", context_window=common.WINDOW,
                                              cwd=str(tmp_path))
        model = OpenAIChatModel("loopback-model",
                                provider=OpenAIProvider(base_url=server.openai_base_url, api_key="dummy"))
        agent = Agent(model, instructions="Answer in one line.", capabilities=[capability])
        result = agent.run_sync("hi")
        [body] = server.bodies
    assert result.output == "Short answer."
    system = common.system_text(body)
    assert system.startswith(capability.bridge.system_prompt([]))
    assert system.endswith("Answer in one line.")


def test_a_reply_beyond_the_threshold_in_the_middle_of_a_run_waits_for_the_run_to_end(tmp_path, monkeypatch):
    with LoopbackServer(common.MID_RUN_REPLIES) as server:
        pipeline = common.profile(server, monkeypatch)
        capability = ProfileCapability.create(pipeline, tmp_path / "chat.jsonl", context_window=common.WINDOW,
                                              model="loopback-model", cwd=str(tmp_path))
        agent = _agent(server, capability)
        history = None
        for prompt in common.MID_RUN_PROMPTS:
            history = agent.run_sync(prompt, message_history=history).all_messages()
    # run 1 (2 messages), run 2's prompt, call (3520 tokens: no compaction inside the run), result, answer
    assert common.compaction_positions(tmp_path / "chat.jsonl") == [6]
    ours = common.our_loop_session(tmp_path, monkeypatch, common.MID_RUN_PROMPTS, common.MID_RUN_REPLIES)
    assert shape(tmp_path / "chat.jsonl") == shape(ours)
    assert common.adapter_compactions(tmp_path / "chat.jsonl") == common.adapter_compactions(ours)


def _start(server, pipeline, path, streamed=False):
    capability = ProfileCapability.create(pipeline, path, context_window=common.WINDOW, model="loopback-model",
                                          cwd=str(path.parent))
    agent, history = _agent(server, capability), []
    loop = common.run_loop() if streamed else None  # one loop: the async client is bound to it

    async def stream(prompt):
        async with agent.run_stream(prompt, message_history=history or None) as result:
            output = await result.get_output()
        history[:] = result.all_messages()
        return output

    def run(prompt):
        if loop is not None:
            return loop.run_until_complete(stream(prompt))
        result = agent.run_sync(prompt, message_history=history or None)
        history[:] = result.all_messages()
        return result.output

    run.history = history
    return capability.bridge, run


class TestOverflowRecovery(common.OverflowRecoveryTests):
    start = staticmethod(_start)
    error = ModelHTTPError


class TestOverflowRecoveryStreamed(common.OverflowRecoveryTests):
    """``Agent.run_stream``: an overflow is refused before the stream starts, so the same hook recovers it."""

    start = staticmethod(functools.partial(_start, streamed=True))
    error = ModelHTTPError


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_stream"])
def test_after_an_overflow_recovery_the_history_holds_the_compacted_context(tmp_path, monkeypatch, streamed):
    pipeline, _, run = common.recovered_run(functools.partial(_start, streamed=streamed), tmp_path, monkeypatch)
    # RunContext.messages was replaced: the summary, the kept run-2 prompt, the retried answer
    assert [type(m).__name__ for m in run.history] == ["ModelRequest", "ModelRequest", "ModelResponse"]
    texts = [p.content for m in run.history for p in m.parts if isinstance(p, (pm.UserPromptPart, pm.TextPart))]
    assert texts == [common.summary_message(pipeline), common.PROMPTS[1], "They differ in size."]


def test_a_streamed_run_makes_its_retry_streamed_too(tmp_path, monkeypatch):
    """The recovery reopens the stream (the wrapped model's ``request_stream``): the retry
    is a streamed request with the compacted history, its answer the run's output."""
    with LoopbackServer(common.OVERFLOW_REPLIES) as server:
        pipeline = common.profile(server, monkeypatch)
        bridge, run = _start(server, pipeline, tmp_path / "chat.jsonl", streamed=True)
        answers = [run(prompt) for prompt in common.OVERFLOW_PROMPTS]
        bodies = common.model_bodies(server)
    assert len(bridge.compactions) == 1 and answers[-1] == "They differ in size."
    *_, failed, retry = bodies
    assert failed["stream"] is True and retry["stream"] is True
    summary = common.summary_message(pipeline)
    assert summary in [m["content"] for m in retry["messages"]]
    assert summary not in [m["content"] for m in failed["messages"]]
