"""Recorded system prompts (``runtime.record_system_prompt``) beyond pi's recorded scenarios:
the default profile untouched, tool changes inside a run, redefinitions, hooks threading
sections, forced prompts, compaction, and the pure record rules."""

from __future__ import annotations

import pytest

from pipeline import compile_profile
from pipeline.runtime.conversation import Conversation
from pipeline.runtime.host import HookResult, ModelInfo
from pipeline.runtime.loop import Agent, model_client
from pipeline.runtime.tools import builtin_tools
from pipeline.runtime.system import SystemLog, tool_changes
from pipeline.session.system import replay
from pipeline.session import SessionFile
from pipeline.testing.loopback import LoopbackServer
from pipeline.model.run_plan import RunPlan

PI1 = compile_profile("builtin:pi-1").profile
DEFAULT = compile_profile("default").profile


def _model(mid: bool) -> ModelInfo:
    return ModelInfo(id="m", provider="local", context_window=100000, max_tokens=4000, mid_conversation_system=mid)


def _conv(tmp_path, profile=PI1, mid=True, names=("read",), **options) -> Conversation:
    session = SessionFile.create(tmp_path / "s.jsonl", cwd=str(tmp_path))
    return Conversation(RunPlan.of(profile), session, model=_model(mid), tools=builtin_tools(list(names), tmp_path, RunPlan.of(profile)),
                        cwd=str(tmp_path), **options)


def _systems(conv) -> list[dict]:
    return [e.raw["message"] for e in conv.session.entries if e.type == "message" and e.raw["message"]["role"] == "system"]


def _agent(conv, server, wire="openai"):
    base = server.openai_base_url if wire == "openai" else server.anthropic_base_url
    client = model_client(conv.plan, conv.model, wire, base_url=base, env={"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"})
    return Agent(conv, client, wire=wire)


def test_the_default_profile_records_nothing_and_ignores_hook_sections(tmp_path):
    hook = lambda start: HookResult(sections={"extra": "E"}, guidelines=("G",))  # noqa: E731
    conv = _conv(tmp_path, DEFAULT, before_agent_start=[hook])
    with LoopbackServer(["a"]) as server:
        _agent(conv, server).run("one")
    assert _systems(conv) == []
    assert server.bodies[0]["messages"][0] == {"role": "system", "content": conv.base_prompt}
    assert "extra" not in conv.base_prompt and "G" not in server.bodies[0]["messages"][0]["content"].split("\n")


def test_a_tool_change_inside_a_run_is_recorded_before_the_next_request(tmp_path):
    (tmp_path / "a.txt").write_text("x", encoding="utf-8")
    conv = _conv(tmp_path)
    agent = None

    class Client:
        def __init__(self, inner):
            self.inner = inner

        def send(self, body, *, cancel=None):
            reply = self.inner.send(body, cancel=cancel)
            if len(server.bodies) == 1:  # the host adds a tool while the first call runs
                conv.set_tools(builtin_tools(["read", "ls"], tmp_path, RunPlan.of(PI1)))
            return reply

    script = [{"toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}]}, "done"]
    with LoopbackServer(script) as server:
        agent = _agent(conv, server)
        agent.client = Client(agent.client)
        agent.run("read a")
    first, patch = _systems(conv)
    assert [t["name"] for t in first["toolsAdded"]] == ["read"]
    assert list(patch["sections"]) == ["tools"] and [t["name"] for t in patch["toolsAdded"]] == ["ls"]
    roles = [m["role"] for m in server.bodies[1]["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "system"]  # after the tool result, in place
    assert [t["function"]["name"] for t in server.bodies[1]["tools"]] == ["read", "ls"]
    assert server.bodies[1]["messages"][0] == server.bodies[0]["messages"][0]


def test_a_redefined_tool_is_removed_and_added_again_and_moves_last():
    read = {"name": "read", "description": "r", "parameters": {}}
    ls = {"name": "ls", "description": "l", "parameters": {}}
    changed = {**read, "description": "r2"}
    added, removed = tool_changes({"read": read, "ls": ls}, [changed, ls])
    assert added == [changed] and removed == [{"name": "read"}]
    replayed = replay([{"role": "system", "toolsAdded": [read, ls]},
                       {"role": "system", "toolsAdded": added, "toolsRemoved": removed}])
    assert list(replayed.tools) == ["ls", "read"] and replayed.tools["read"]["description"] == "r2"
    extra = {**read, "constrainedSampling": {"type": "json_schema"}}  # another writer's key: the same tool
    assert tool_changes({"read": extra}, [read]) == ([], [])


def test_hooks_see_the_sections_earlier_hooks_set_and_the_changes_last_one_run(tmp_path):
    seen = []

    def first(start):
        return HookResult(sections={"todo": "- a"}) if start.prompt == "one" else None

    def second(start):
        seen.append(dict(start.sections))
        return HookResult(sections={"todo": None, "note": "N"}) if start.prompt == "one" else None

    conv = _conv(tmp_path, sections={"base": "B"}, before_agent_start=[first, second])
    with LoopbackServer(["a", "b"]) as server:
        agent = _agent(conv, server)
        agent.run("one")
        agent.run("two")
    assert seen == [{"base": "B", "todo": "- a"}, {"base": "B"}]
    lead, patch = _systems(conv)
    assert list(lead["sections"])[-2:] == ["base", "note"]
    assert patch["sections"] == {"note": None}


def test_a_forced_first_prompt_still_records_the_prompt(tmp_path):
    """pi 1.6.0 (``tests/data/pi16/loop/override-*``): a forced prompt is a projection of the
    run's requests; the structured sections are recorded as usual, before the first message."""
    hook = lambda start: HookResult(system_prompt="ONLY THIS") if start.prompt == "one" else None  # noqa: E731
    conv = _conv(tmp_path, before_agent_start=[hook])
    with LoopbackServer(["a", "b"]) as server:
        agent = _agent(conv, server, "anthropic")
        agent.run("one")
        agent.run("two")
    assert server.bodies[0]["system"][0]["text"] == "ONLY THIS"
    [recorded] = _systems(conv)
    assert "preamble" in recorded["sections"]
    roles = [e.raw["message"]["role"] for e in conv.session.entries if e.type == "message"]
    assert roles == ["system", "user", "assistant", "user", "assistant"]
    assert server.bodies[1]["system"][0]["text"] == conv.system_prompt != "ONLY THIS"  # the recorded prompt leads
    assert [m["role"] for m in server.bodies[1]["messages"]] == ["user", "assistant", "user"]


@pytest.mark.parametrize("mid", [False, True])
def test_after_a_compaction_the_recorded_prompt_still_holds(tmp_path, mid):
    profile = compile_profile("builtin:pi-1", overrides={"compaction.keep_recent_tokens": 1}).profile
    calls = iter(range(100))
    hook = lambda start: HookResult(sections={"turn": str(next(calls))})  # noqa: E731
    conv = _conv(tmp_path, profile, mid=mid, before_agent_start=[hook])
    with LoopbackServer(["a", "b", "c"]) as server:
        agent = _agent(conv, server)
        agent.run("one")
        agent.run("two")
        conv.compact()
        agent.run("three")
    replay = SystemLog(_systems(conv)).replay()
    assert replay.record["turn"] == "<turn>\n2\n</turn>"
    system = server.bodies[-1]["messages"][0]
    if mid:  # the messages the compaction summarised took their system messages into the leading prompt
        assert system["content"] != server.bodies[0]["messages"][0]["content"]
        assert [m["role"] for m in server.bodies[-1]["messages"]].count("system") >= 2
    else:
        assert system["content"] == replay.prompt(profile.system_prompt.join)


def test_recording_without_patch_words_is_a_located_profile_error(tmp_path):
    from pipeline.errors import PipelineError

    path = tmp_path / "rec.yaml"
    path.write_text("extends: builtin:default\nname: rec\nruntime: {record_system_prompt: true}\n", encoding="utf-8")
    with pytest.raises(PipelineError) as err:
        compile_profile(str(path))
    problem = err.value.problems[0]
    assert problem.key == "runtime.record_system_prompt" and problem.location.line == 3
    assert "system_prompt.patch" in problem.message


def test_switching_to_a_model_that_reads_system_messages_sends_the_record_in_place(tmp_path):
    from dataclasses import replace

    hook = lambda start: HookResult(sections={"turn": start.prompt})  # noqa: E731
    conv = _conv(tmp_path, mid=False, before_agent_start=[hook])
    with LoopbackServer(["a", "b", "c"]) as server:
        agent = _agent(conv, server)
        agent.run("one")
        agent.run("two")
        conv.model = replace(conv.model, mid_conversation_system=True)
        agent.run("three")
    first, second, third = (b["messages"] for b in server.bodies)
    assert "<turn>\ntwo\n</turn>" in second[0]["content"] and [m["role"] for m in second].count("system") == 1
    assert third[0] == first[0]  # back to the leading prompt, the patches in place
    assert [m["role"] for m in third] == ["system", "user", "assistant", "system", "user", "assistant", "system", "user"]


def test_the_recorded_prompt_is_a_collaborator_with_its_own_state():
    """``RecordedPrompt`` (held by the conversation) works on what it is handed: a record, the
    tool declarations, a clock value and a writer; it reads nothing of a conversation."""
    from pipeline.runtime.system import RecordedPrompt
    from pipeline.session import SystemMessage

    written: list[dict] = []
    recorded = RecordedPrompt(PI1.system_prompt.join, RunPlan.of(PI1).patch, recording=True)
    read = {"name": "read", "description": "r", "parameters": {}}
    first = recorded.record({"a": "A", "b": "B"}, [read], 1, written.append)
    assert first == {"role": "system", "content": "", "sections": {"a": "A", "b": "B"}, "timestamp": 1,
                     "toolsAdded": [read]}
    assert recorded.record({"a": "A", "b": "B"}, [read], 2, written.append) is None  # nothing changed
    patch = recorded.record({"b": "B2", "c": "C"}, [], 3, written.append)
    assert patch == {"role": "system", "content": "", "sections": {"b": "B2", "c": "C", "a": None}, "timestamp": 3,
                     "toolsRemoved": [{"name": "read"}]}
    assert written == [first, patch] and all(isinstance(m, SystemMessage) for m in recorded.log.messages)
    join = PI1.system_prompt.join
    prompt, tools = recorded.view(in_place=False, sent_in_place=0)
    assert prompt == (join if join is not None else "\n\n").join(["B2", "C"]) and tools == ()
    leading, _ = recorded.view(in_place=True, sent_in_place=1)  # the patch is sent where it was recorded
    assert leading == (join if join is not None else "\n\n").join(["A", "B"])
    assert recorded.update(in_place=False) is None and recorded.update(in_place=True) is not None
    assert recorded.in_place_for(True) and not recorded.in_place_for(False)
    off = RecordedPrompt(PI1.system_prompt.join, RunPlan.of(PI1).patch, recording=False)
    assert off.record({"a": "A"}, [], 1, written.append) is None and not off.in_place_for(True)
