"""What the three adapter tests share: one scripted conversation, the profile, and our own loop's answer.

The conversation has three runs. Run 1 calls a tool and answers; run 2's answer reports a
context beyond ``window - reserve``; so the compaction check our own loop runs after a run
(``pipeline.runtime.policy.check_compaction``) compacts after run 2, and the adapter must compact
at the same place: after run 2's reply, before run 3's prompt is appended. The summary call
goes to the same loopback server (the profile's summarizer points there).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Sequence

import pytest

from pipeline.facade import Pipeline, compile_profile
from pipeline.runtime.policy import CurrentModel, check_compaction, latest_compaction_time
from pipeline.session import CompactionEntry, MessageEntry, SessionFile
from pipeline.model.run_plan import RunPlan

WINDOW = 4000
RESERVE = 1000
KEY_ENV = "ADAPTER_LOOPBACK_KEY"
SUMMARY = "## Goal\nAnswer three questions about the fixture.\n\n## Progress\nLooked up the first one."
PROMPTS = (
    "First question: " + "describe the fixture in detail, " * 20,
    "Second question: " + "compare the two fixtures carefully, " * 30,
    "Third question: what is left?",
)
#: the scripted replies, in the order the framework and the summarizer ask for them
REPLIES = [
    {"toolCalls": [{"name": "lookup", "arguments": {"topic": "fixture"}, "id": "call_lookup_1"}],
     "usage": {"input": 300, "output": 20}},
    {"text": "The fixture is small.", "usage": {"input": 480, "output": 20}},
    {"text": "They differ in size.", "usage": {"input": 3400, "output": 100}},   # 3500 > 4000 - 1000
    SUMMARY,                                                                      # the summarizer's call
    {"text": "Nothing is left.", "usage": {"input": 900, "output": 10}},
]
TOOL_RESULT = "fixture: 3 files"


def profile(server: Any, monkeypatch: Any) -> Pipeline:
    """The default profile with small limits and its summarizer on the loopback server."""
    monkeypatch.setenv(KEY_ENV, "dummy-key")
    return compile_profile("default", {
        "summarizer.provider": "openai", "summarizer.base_url": server.openai_base_url,
        "summarizer.model": "loopback-summarizer", "summarizer.api_key_env": KEY_ENV,
        "compaction.reserve_tokens": RESERVE, "compaction.keep_recent_tokens": 200,
        "summary.on_schema_violation": "warn",
    })


def messages(session: SessionFile) -> list[Any]:
    return [e for e in session.path_to() if isinstance(e, (MessageEntry, CompactionEntry))]


def our_loop_decisions(pipeline: Pipeline, session_path: Path, model: CurrentModel) -> list[tuple]:
    """Replay the adapter's session through our own loop's check: the messages in order,
    ``check_compaction`` after each run (the reply before a user prompt, and the last one),
    and where it compacts, the facade's plan (``Pipeline.plan_compaction``) appended as the
    compaction. Returns ``(index of the reply, action)`` per run, and for a compaction
    ``(index of the reply, action, index of the first kept message, tokensBefore)``."""
    entries = [e for e in SessionFile.open(session_path).path_to() if isinstance(e, MessageEntry)]
    replay = SessionFile.create(session_path.with_name("replay.jsonl"), cwd="/")
    decisions = []
    for i, entry in enumerate(entries):
        replay.append_message(entry.message.raw)
        ends_run = entry.message.role == "assistant" and (i + 1 == len(entries) or entries[i + 1].message.role == "user")
        if not ends_run:
            continue
        branch = replay.path_to()
        decision = check_compaction(entry.message, phase="after_run", model=model,
                                    latest_compaction_ms=latest_compaction_time(branch),
                                    messages=pipeline.project(replay).agent_messages,
                                    settings=pipeline.run_plan.compaction)
        if decision.action != "compact":
            decisions.append((i, decision.action))
            continue
        plan = pipeline.plan_compaction(replay)
        kept = [e.id for e in replay.path_to() if isinstance(e, MessageEntry)].index(plan.first_kept_entry_id)
        decisions.append((i, decision.action, kept, plan.tokens_before))
        replay.append_compaction("(replayed)", plan.first_kept_entry_id, plan.tokens_before)
    return decisions


def adapter_compactions(session_path: Path) -> list[tuple]:
    """For each compaction entry the adapter wrote: ``(index of the reply before it,
    "compact", index of the first kept message, tokensBefore)``, as :func:`our_loop_decisions` gives them."""
    out, ids = [], []
    for entry in SessionFile.open(session_path).path_to():
        if isinstance(entry, MessageEntry):
            ids.append(entry.id)
        elif isinstance(entry, CompactionEntry):
            out.append((len(ids) - 1, "compact", ids.index(entry.raw["firstKeptEntryId"]), entry.raw["tokensBefore"]))
    return out


def compaction_positions(session_path: Path) -> list[int]:
    """For each compaction entry: how many message entries come before it on the branch."""
    out, count = [], 0
    for entry in SessionFile.open(session_path).path_to():
        if isinstance(entry, CompactionEntry):
            out.append(count)
        elif isinstance(entry, MessageEntry):
            count += 1
    return out


def summary_message(pipeline: Pipeline) -> str:
    """The user message the profile wraps a compaction summary in."""
    words = pipeline.profile.summary.projection.compaction
    return words.open.render({}) + SUMMARY + words.close.render({})


def user_texts(body: dict) -> list[str]:
    """The user messages' texts of an OpenAI chat request body."""
    out = []
    for m in body.get("messages") or ():
        if m.get("role") != "user":
            continue
        content = m.get("content")
        out.append(content if isinstance(content, str) else "".join(p.get("text", "") for p in content))
    return out


def system_text(body: dict) -> str:
    return "\n\n".join(m["content"] if isinstance(m["content"], str) else "".join(p.get("text", "") for p in m["content"])
                       for m in body.get("messages") or () if m.get("role") in ("system", "developer"))


def model_bodies(server: Any) -> list[dict]:
    """The framework's requests (the summarizer's call left out)."""
    return [b for b in server.bodies if b.get("model") != "loopback-summarizer"]


def assert_session_valid(path: Path, expected_roles: Sequence[str]) -> SessionFile:
    session = SessionFile.open(path)
    assert session.problems == []
    roles = [e.message.role if isinstance(e, MessageEntry) else "compaction" for e in messages(session)]
    assert roles == list(expected_roles)
    return session


#: a tool-call reply beyond the threshold in the middle of run 2: no compaction there (our
#: loop checks after a run), one after run 2 because its last reply is beyond it too
MID_RUN_PROMPTS = PROMPTS
MID_RUN_REPLIES = [
    {"text": "The fixture is small.", "usage": {"input": 480, "output": 20}},
    {"toolCalls": [{"name": "lookup", "arguments": {"topic": "fixture"}, "id": "call_lookup_1"}],
     "usage": {"input": 3500, "output": 20}},
    {"text": "They differ in size.", "usage": {"input": 3600, "output": 20}},
    SUMMARY,
    {"text": "Nothing is left.", "usage": {"input": 900, "output": 10}},
]


def our_loop_session(tmp_path: Path, monkeypatch: Any, prompts: Sequence[str] = PROMPTS,
                     replies: Sequence[Any] = REPLIES, last_answer: str = "Nothing is left.") -> Path:
    """The same three runs through our own agent loop (``pipeline.runtime.loop.Agent`` on
    ``Pipeline.conversation``) against a loopback server with the same script; the session
    file it leaves."""
    from pipeline.runtime.host import ModelInfo, Tool
    from pipeline.runtime.loop import Agent, model_client
    from pipeline.testing.loopback import LoopbackServer

    path = tmp_path / "our-loop.jsonl"
    with LoopbackServer(replies) as server:
        pipeline = profile(server, monkeypatch)
        model = ModelInfo(id="loopback-model", provider="openai", context_window=WINDOW)
        tools = [Tool(name=name, parameters={"type": "object", "properties": {}}, function=lambda args: TOOL_RESULT)
                 for name in ("read", "lookup")]
        conversation = pipeline.conversation(SessionFile.create(path, cwd=str(tmp_path)), model=model, tools=tools,
                                             cwd=str(tmp_path), summarizer=pipeline.summary_client())
        client = model_client(RunPlan.of(pipeline.profile), model, "openai", base_url=server.openai_base_url, api_key_env=KEY_ENV)
        agent = Agent(conversation, client, wire="openai")
        answers = [agent.run(prompt).answer for prompt in prompts]
    assert answers[-1] == last_answer
    return path


def assert_summarized_by_profile(pipeline: Pipeline, bodies: Sequence[dict]) -> None:
    """One summary call went to the profile's summarizer, with the profile's summary system prompt."""
    [call] = [b for b in bodies if b.get("model") == "loopback-summarizer"]
    assert system_text(call) == pipeline.profile.summary.system_prompt.render({})


#: The entries every adapter's three runs leave, in order.
THREE_RUN_ROLES = ("user", "assistant", "toolResult", "assistant", "user", "assistant", "compaction", "user", "assistant")


def assert_three_runs_like_our_loop(pipeline: Pipeline, bridge: Any, bodies: Sequence[dict], session_path: Path,
                                    fixture: Path, tmp_path: Path, monkeypatch: Any) -> None:
    """What every adapter's three scripted runs must show: one compaction after run 2's reply,
    where our own loop decides it; run 3's request opens with the profile's summary and carries
    the profile's prompt for its tools; the session is one pi 0.84.0 opened (``fixture``) and
    the one our own loop writes for the same script."""
    from .test_pi_sessions import shape

    assert len(bridge.compactions) == 1
    assert compaction_positions(session_path) == [6]
    [compaction] = adapter_compactions(session_path)
    assert compaction[:3] == (5, "compact", 4)  # kept from run 2's prompt
    assert our_loop_decisions(pipeline, session_path, bridge.model) == [(3, "none"), compaction, (7, "none")]
    third = bodies[-1]
    users = user_texts(third)
    assert (users[0], users[-1]) == (summary_message(pipeline), PROMPTS[2])
    assert PROMPTS[0] not in users
    tools = [t["function"]["name"] for t in third["tools"]]
    assert sorted(tools) == ["lookup", "read"]
    assert system_text(third) == system_text(bodies[0]) == bridge.system_prompt(tools)
    assert_session_valid(session_path, THREE_RUN_ROLES)
    assert shape(session_path) == shape(fixture)
    ours = our_loop_session(tmp_path, monkeypatch)
    assert shape(session_path) == shape(ours)
    assert adapter_compactions(session_path) == adapter_compactions(ours)


# --------------------------------------------------------------------------- overflow recovery

#: the provider's answer to a request beyond the window (an HTTP 400 with pi's overflow text)
OVERFLOW = {"stopReason": "error", "errorMessage": "prompt is too long: 5200 tokens > 4000 maximum"}
OVERFLOW_PROMPTS = PROMPTS[:2]
#: run 1 as above; run 2's first call overflows once: compact, then the retry answers
OVERFLOW_REPLIES = [REPLIES[0], REPLIES[1], OVERFLOW, SUMMARY, {"text": "They differ in size.", "usage": {"input": 900, "output": 20}}]
#: the retry after the compaction overflows too: pi's one retry is used up
PERSISTENT_REPLIES = [REPLIES[0], REPLIES[1], OVERFLOW, SUMMARY, OVERFLOW]
#: the failed reply stays in the session file, before the compaction (as our loop writes it)
OVERFLOW_ROLES = ("user", "assistant", "toolResult", "assistant", "user", "assistant", "compaction", "assistant")
#: run 2 calls the tool first; the call that sends its result overflows (mid-run recovery)
MID_RUN_OVERFLOW_REPLIES = [
    REPLIES[0], REPLIES[1],
    {"toolCalls": [{"name": "lookup", "arguments": {"topic": "sizes"}, "id": "call_lookup_2"}],
     "usage": {"input": 700, "output": 20}},
    OVERFLOW, SUMMARY, {"text": "They differ in size.", "usage": {"input": 900, "output": 20}},
]
MID_RUN_OVERFLOW_ROLES = OVERFLOW_ROLES[:5] + ("assistant", "toolResult") + OVERFLOW_ROLES[5:]
#: the retry answers with a tool call: the run's next call must send the compacted context too
TOOL_AFTER_OVERFLOW_REPLIES = [
    REPLIES[0], REPLIES[1], OVERFLOW, SUMMARY,
    {"toolCalls": [{"name": "lookup", "arguments": {"topic": "sizes"}, "id": "call_lookup_2"}],
     "usage": {"input": 700, "output": 20}},
    {"text": "They differ in size.", "usage": {"input": 900, "output": 20}},
]
TOOL_AFTER_OVERFLOW_ROLES = OVERFLOW_ROLES + ("toolResult", "assistant")
#: scenario name -> (replies, the session's roles, index of the failed call among the framework's calls)
OVERFLOW_SCENARIOS = {
    "first-call": (OVERFLOW_REPLIES, OVERFLOW_ROLES, 2),
    "after-a-tool-call": (MID_RUN_OVERFLOW_REPLIES, MID_RUN_OVERFLOW_ROLES, 3),
    "tool-call-after-the-retry": (TOOL_AFTER_OVERFLOW_REPLIES, TOOL_AFTER_OVERFLOW_ROLES, 2),
}

#: ``start(server, pipeline, session_path) -> (bridge, run)``: a framework agent with its
#: adapter on the loopback server; ``run(prompt)`` runs one prompt (keeping the framework's
#: history across runs) and returns the answer's text
Start = Any


def _overflow_run(start: Start, replies: Sequence[Any], tmp_path: Path, monkeypatch: Any, raises: Any = None) -> tuple:
    from pipeline.testing.loopback import LoopbackServer

    path = tmp_path / "chat.jsonl"
    with LoopbackServer(replies) as server:
        pipeline = profile(server, monkeypatch)
        bridge, run = start(server, pipeline, path)
        answers = [run(prompt) for prompt in OVERFLOW_PROMPTS[:-1]]
        if raises is None:
            answers.append(run(OVERFLOW_PROMPTS[-1]))
        else:
            with pytest.raises(raises) as caught:
                run(OVERFLOW_PROMPTS[-1])
            answers.append(caught.value)
        bodies, summaries = model_bodies(server), len(server.bodies) - len(model_bodies(server))
        if summaries:
            assert_summarized_by_profile(pipeline, server.bodies)
    return pipeline, bridge, path, answers, bodies


def recovered_run(start: Start, tmp_path: Path, monkeypatch: Any) -> tuple:
    """The first-call overflow scenario run through: ``(pipeline, bridge, run)``, for tests
    of the framework's own state afterwards (what ``run`` keeps of it)."""
    from pipeline.testing.loopback import LoopbackServer

    with LoopbackServer(OVERFLOW_REPLIES) as server:
        pipeline = profile(server, monkeypatch)
        bridge, run = start(server, pipeline, tmp_path / "chat.jsonl")
        for prompt in OVERFLOW_PROMPTS:
            run(prompt)
    assert len(bridge.compactions) == 1
    return pipeline, bridge, run


def _error_texts(path: Path) -> list[str]:
    return [e.message.raw["errorMessage"] for e in messages(SessionFile.open(path))
            if isinstance(e, MessageEntry) and e.message.raw.get("stopReason") == "error"]


def assert_recovers_from_overflow(start: Start, tmp_path: Path, monkeypatch: Any, scenario: str) -> None:
    """One call of run 2 overflows once (:data:`OVERFLOW_SCENARIOS`): the adapter records
    the failed reply, compacts where our own loop compacts on the same script, and retries
    with the summary instead of the summarized messages and without the failed reply (and
    the run's later calls too); the session is the one our loop writes."""
    from .test_pi_sessions import shape

    replies, roles, at = OVERFLOW_SCENARIOS[scenario]
    pipeline, bridge, path, answers, bodies = _overflow_run(start, replies, tmp_path, monkeypatch)
    assert answers == ["The fixture is small.", "They differ in size."]
    assert len(bodies) == len(replies) - 1  # every call once, the failed one twice (its retry), no summary
    [compaction] = bridge.compactions
    assert (compaction.decision.reason, compaction.decision.retry) == ("overflow", True)
    failed, retry = bodies[at], bodies[at + 1]
    assert PROMPTS[0] in user_texts(failed)
    assert retry["messages"][-1] == failed["messages"][-1]  # the pending prompt or tool result is sent again
    assert system_text(retry) == system_text(failed)
    for later in bodies[at + 1:]:  # the retry and the calls after it in the run: compacted
        assert PROMPTS[0] not in user_texts(later)
        assert (user_texts(later)[0], user_texts(later)[-1]) == (summary_message(pipeline), PROMPTS[1])
        assert all(m.get("content") or m.get("tool_calls") for m in later["messages"])  # no empty failed reply
    assert_session_valid(path, roles)
    ours = our_loop_session(tmp_path, monkeypatch, OVERFLOW_PROMPTS, replies, "They differ in size.")
    assert shape(path) == shape(ours)
    assert adapter_compactions(path) == adapter_compactions(ours)
    assert compaction_positions(path) == [roles.index("compaction")]
    assert _error_texts(path) == _error_texts(ours)


def assert_persistent_overflow_reaches_the_framework(start: Start, error: Any, tmp_path: Path, monkeypatch: Any,
                                                     ) -> Any:
    """The retry overflows too: no second compaction, no third call; the framework raises
    ``error``; the session holds both failed replies, as our loop's does. Returns the error."""
    from .test_pi_sessions import shape

    pipeline, bridge, path, answers, bodies = _overflow_run(start, PERSISTENT_REPLIES, tmp_path, monkeypatch, error)
    assert answers[0] == "The fixture is small."
    assert len(bodies) == 4 and len(bridge.compactions) == 1
    assert_session_valid(path, OVERFLOW_ROLES[:-1] + ("assistant",))
    ours = our_loop_session(tmp_path, monkeypatch, OVERFLOW_PROMPTS, PERSISTENT_REPLIES, "")
    assert shape(path) == shape(ours)
    assert adapter_compactions(path) == adapter_compactions(ours)
    assert _error_texts(path) == _error_texts(ours) and len(_error_texts(path)) == 2
    return answers[-1]


def assert_other_errors_reach_the_framework(start: Start, error: Any, tmp_path: Path, monkeypatch: Any) -> Any:
    """A provider error that is no overflow: no compaction, no retry by the adapter, nothing
    recorded for it; the framework raises ``error``. Returns the error."""
    replies = [REPLIES[0], REPLIES[1], {"stopReason": "error", "errorMessage": "unknown parameter: foo", "status": 400}]
    _, bridge, path, answers, bodies = _overflow_run(start, replies, tmp_path, monkeypatch, error)
    assert len(bodies) == 3 and bridge.compactions == []
    assert_session_valid(path, OVERFLOW_ROLES[:5])
    return answers[-1]


class OverflowRecoveryTests:
    """The overflow tests every adapter's file runs: a subclass named ``Test...`` sets
    ``start`` (see :data:`Start`) and ``error`` (the exception its framework raises for the
    provider's HTTP 400)."""

    start: Start = None
    error: Any = None

    @pytest.mark.parametrize("scenario", list(OVERFLOW_SCENARIOS))
    def test_an_overflow_error_compacts_and_retries_like_our_loop(self, tmp_path, monkeypatch, scenario):
        assert_recovers_from_overflow(self.start, tmp_path, monkeypatch, scenario)

    def test_an_overflow_that_persists_after_the_retry_reaches_the_caller(self, tmp_path, monkeypatch):
        error = assert_persistent_overflow_reaches_the_framework(self.start, self.error, tmp_path, monkeypatch)
        assert error.status_code == 400 and "prompt is too long" in str(error)

    def test_a_provider_error_that_is_no_overflow_reaches_the_caller_unrecorded(self, tmp_path, monkeypatch):
        error = assert_other_errors_reach_the_framework(self.start, self.error, tmp_path, monkeypatch)
        assert error.status_code == 400 and "unknown parameter" in str(error)


#: Event loops of the current test's asynchronous runs (closed by ``conftest.py`` when it ends).
LOOPS: list[asyncio.AbstractEventLoop] = []


def run_loop() -> asyncio.AbstractEventLoop:
    """A new event loop for one test's asynchronous runs, closed when the test ends (never by
    the garbage collector, which may run while another test's loop is running)."""
    loop = asyncio.new_event_loop()
    LOOPS.append(loop)
    return loop
