"""The conversation facade and the agent loop on their own: state over time, bad input, cancellation."""

from __future__ import annotations

import json
import threading
import time

import pytest

from pipeline import compile_profile
from pipeline.runtime.conversation import Conversation
from pipeline.runtime.host import HookResult, ModelInfo, Tool
from pipeline.runtime.loop import Agent, model_client
from pipeline.runtime.tools import builtin_tools
from pipeline.runtime import events as ev
from pipeline.session import MessageEntry, SessionFile
from pipeline.testing.loopback import LoopbackServer
from pipeline.model.run_plan import RunPlan

from .agent_vectors import cancel_after_request

PROFILE = compile_profile("default").profile
MODEL = ModelInfo(id="m", provider="local", context_window=100000, max_tokens=4000)
SCHEMA = {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}


def _conv(tmp_path, tools=(), **options) -> Conversation:
    session = SessionFile.create(tmp_path / "s.jsonl", cwd=str(tmp_path))
    return Conversation(RunPlan.of(PROFILE), session, model=MODEL, tools=list(tools), cwd=str(tmp_path), **options)


def _agent(conv, server, wire="openai", events=None):
    base = server.openai_base_url if wire == "openai" else server.anthropic_base_url
    client = model_client(RunPlan.of(PROFILE), MODEL, wire, base_url=base, env={"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"})
    return Agent(conv, client, wire=wire, listener=(events.append if events is not None else None))


def _roles(session_path):
    return [e.message.role for e in SessionFile.open(session_path).entries if isinstance(e, MessageEntry)]


def test_the_system_prompt_is_rebuilt_only_when_tools_change(tmp_path):
    conv = _conv(tmp_path, builtin_tools(["read"], tmp_path, RunPlan.of(PROFILE)))
    first = conv.base_prompt
    assert conv.base_prompt is first  # cached
    assert "- read:" in first and "- ls:" not in first
    conv.set_tools(builtin_tools(["read", "ls"], tmp_path, RunPlan.of(PROFILE)))
    assert conv.base_prompt is not first and "- ls:" in conv.base_prompt
    assert [t.name for t in conv.next_request().tools] == ["read", "ls"]
    assert conv.next_request().tools[1].description == PROFILE.system_prompt.tools["ls"].description.render()


def test_an_override_holds_for_every_request_of_its_run_and_ends_with_it(tmp_path):
    seen = []

    def hook(start):
        seen.append(start.system_prompt)
        return HookResult(system_prompt="SHORT MODE") if start.prompt == "first" else None

    conv = _conv(tmp_path, builtin_tools(["read"], tmp_path, RunPlan.of(PROFILE)), before_agent_start=[hook])
    (tmp_path / "a.txt").write_text("x")
    script = [{"toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}]}, "done", "second answer"]
    with LoopbackServer(script) as server:
        agent = _agent(conv, server)
        agent.run("first")
        assert conv.system_prompt == conv.base_prompt  # the run ended: the override is gone
        agent.run("second")
    systems = [b["messages"][0]["content"] for b in server.bodies]
    assert systems == ["SHORT MODE", "SHORT MODE", conv.base_prompt]
    assert seen == [conv.base_prompt, conv.base_prompt]


def test_input_is_expanded_skill_then_template(tmp_path):
    from pipeline.prompt import Skill
    from pipeline.templates.files import PromptTemplate

    skill_file = tmp_path / "lint" / "SKILL.md"
    skill_file.parent.mkdir()
    skill_file.write_text("---\nname: lint\ndescription: d\n---\nRun the linter.\n")
    skill = Skill("lint", "d", str(skill_file), str(skill_file.parent))
    conv = _conv(tmp_path, skills=[skill], templates=[PromptTemplate("fix", "", "Fix $1 now")],
                 input_hooks=[lambda text: text.replace("@file", "src/a.py")])
    assert conv.expand("/fix @file") == "Fix src/a.py now"
    expected = PROFILE.runtime.skill.open.render(name="lint", location=str(skill_file), base_dir=str(skill_file.parent))
    assert conv.expand("/skill:lint a.py") == expected + "Run the linter." + PROFILE.runtime.skill.close.render() + \
        PROFILE.runtime.skill.args.render(args="a.py")
    assert conv.expand("/nothing here") == "/nothing here"


def test_a_tool_that_raises_gives_an_error_result_and_the_loop_goes_on(tmp_path):
    def broken(arguments):
        raise RuntimeError("disk on fire")

    conv = _conv(tmp_path, [Tool(name="probe", parameters=SCHEMA, function=broken)])
    script = [{"toolCalls": [{"name": "probe", "arguments": {"path": "x"}}, {"name": "probe", "arguments": {}},
                             {"name": "nope", "arguments": {}}]}, "sorry"]
    with LoopbackServer(script) as server:
        result = _agent(conv, server).run("go")
    assert result.answer == "sorry" and result.error is None
    tools = [m for m in server.bodies[1]["messages"] if m["role"] == "tool"]
    errors = PROFILE.runtime.tool_errors
    assert tools[0]["content"] == errors.failed.render(name="probe", error="RuntimeError: disk on fire")
    assert tools[1]["content"].startswith(errors.invalid_arguments.render(name="probe", problems="  - path: required",
                                                                         arguments="{}")[:40])
    assert tools[2]["content"] == errors.unknown.render(name="nope")


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_malformed_reply_is_recorded_as_an_error_and_ends_the_run(tmp_path, wire):
    conv = _conv(tmp_path)
    with LoopbackServer(["never"]) as server:
        server._replies.clear()
        server._last = {"text": "x", "status": 200, "stopReason": "error", "errorMessage": "not json"}
        result = _agent(conv, server, wire).run("hi")
    assert result.error is not None and "error" in result.stop_reason
    assert _roles(tmp_path / "s.jsonl") == ["user", "assistant"]


def test_an_answer_that_is_not_json_is_a_clear_error(tmp_path):
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Garbage(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers["content-length"]))
            body = b"data: {not json\n\n"
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Garbage)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        conv = _conv(tmp_path)
        client = model_client(RunPlan.of(PROFILE), MODEL, base_url=f"http://127.0.0.1:{httpd.server_address[1]}/v1",
                              env={"OPENAI_API_KEY": "k"})
        result = Agent(conv, client).run("hi")
    finally:
        httpd.shutdown()
    assert "malformed" in result.error
    assert SessionFile.open(tmp_path / "s.jsonl").problems == []


def test_cancelling_records_an_aborted_reply_with_what_arrived(tmp_path):
    conv = _conv(tmp_path)
    cancel = threading.Event()
    with LoopbackServer([{"text": "partial words", "stopReason": "aborted"}]) as server:
        cancel_after_request(server, 1, cancel)
        started = time.monotonic()
        result = _agent(conv, server).run("hi", cancel=cancel)
        assert time.monotonic() - started < 5
    assert result.stop_reason == "aborted" and result.error is None
    last = SessionFile.open(tmp_path / "s.jsonl").entries[-1].message
    assert last.stop_reason == "aborted" and last.error_message == PROFILE.runtime.aborted.render()
    assert [b.raw for b in last.content] == [{"type": "text", "text": "partial words"}]


def test_a_queued_message_is_sent_before_the_run_ends(tmp_path):
    conv = _conv(tmp_path)
    events = []
    with LoopbackServer(["first", "second"]) as server:
        agent = _agent(conv, server, events=events)
        conv.queue("and then this")
        result = agent.run("start")
    assert result.answer == "second"
    assert [m["content"][0]["text"] for m in server.bodies[1]["messages"] if m["role"] == "user"] == [
        "start", "and then this"]
    assert [e.kind for e in events].count("run_start") == 1


def test_appends_by_another_process_are_kept_and_ours_keep_their_parents(tmp_path):
    conv = _conv(tmp_path)
    other = SessionFile.open(tmp_path / "s.jsonl")
    with LoopbackServer(["one", "two"]) as server:
        agent = _agent(conv, server)
        agent.run("first")
        other.append_custom("note", {"by": "another process"})
        agent.run("second")
    session = SessionFile.open(tmp_path / "s.jsonl")
    assert session.problems == []
    kinds = [e.type for e in session.entries]
    assert "custom" in kinds and kinds.count("message") == 4
    second_user = [e for e in session.entries if isinstance(e, MessageEntry)][2]
    first_answer = [e for e in session.entries if isinstance(e, MessageEntry)][1]
    assert second_user.parent_id == first_answer.id


def test_navigate_moves_the_leaf_and_rebuilds_the_context(tmp_path):
    conv = _conv(tmp_path)
    with LoopbackServer(["one", "two"]) as server:
        agent = _agent(conv, server)
        agent.run("first")
        first_user = next(e for e in conv.session.entries if isinstance(e, MessageEntry))
        agent.run("second")
        assert conv.next_request().message_count == 4
        conv.navigate(first_user.id)
    assert conv.next_request().message_count == 0  # back before the first prompt


def test_events_are_frozen_and_serializable(tmp_path):
    conv = _conv(tmp_path)
    events = []
    with LoopbackServer(["hello"]) as server:
        _agent(conv, server, events=events).run("hi")
    with pytest.raises(Exception):
        events[0].text = "changed"
    assert [json.loads(json.dumps(ev.event_json(e)))["type"] for e in events] == [
        "run_start", "request", "text_delta", "reply", "run_end"]  # the text as it streamed
    assert events[-1].to_json() == {"type": "run_end", "answer": "hello", "stop_reason": "stop"}
    assert all(e.to_json() == ev.event_json(e) for e in events)


def test_a_profile_without_a_runtime_block_is_refused(tmp_path):
    from pipeline.errors import PipelineError

    bare = PROFILE.model_copy(update={"runtime": None})
    with pytest.raises(PipelineError, match="runtime"):
        Conversation(RunPlan.of(bare), SessionFile.create(tmp_path / "s.jsonl", cwd="."), model=MODEL, cwd=".")


def test_an_answer_over_the_size_limit_is_refused(tmp_path):
    from pipeline.llm.limits import Limits

    conv = _conv(tmp_path)
    with LoopbackServer(["x" * 5000]) as server:
        client = model_client(RunPlan.of(PROFILE), MODEL, base_url=server.openai_base_url, env={"OPENAI_API_KEY": "k"},
                              limits=Limits(max_response_bytes=1000))
        result = Agent(conv, client).run("hi")
    assert "larger than 1000 bytes" in result.error
    assert _roles(tmp_path / "s.jsonl") == ["user", "assistant"]


def test_threshold_compaction_goes_on_only_with_queued_messages(tmp_path):
    from .routed import RoutedServer

    profile = compile_profile("default", overrides={"compaction.keep_recent_tokens": 50,
                                                    "compaction.reserve_tokens": 1000,
                                                    "summary.on_schema_violation": "warn"}).profile
    long = "tell me everything about this project, every part of it " * 10
    big = {"text": "a long answer " * 40, "usage": {"input": 3500}}
    model = ModelInfo(id="m", provider="local", context_window=4000, max_tokens=1000)
    for queued, expected_agent_calls in ((False, 2), (True, 3)):
        session = SessionFile.create(tmp_path / f"s{queued}.jsonl", cwd=str(tmp_path))
        with RoutedServer(["first " * 50, big, "after the queue"], ["## Goal\nx"]) as server:
            summarizer = make_summary(server)
            conv = Conversation(RunPlan.of(profile), session, model=model, cwd=str(tmp_path), summarizer=summarizer)
            client = model_client(RunPlan.of(profile), model, base_url=server.openai_base_url, env={"OPENAI_API_KEY": "k"})
            agent = Agent(conv, client)
            agent.run(long)
            if queued:
                conv.queue("one more thing")
            result = agent.run("second " + long)
        assert server.kinds.count("agent") == expected_agent_calls
        assert "summary" in server.kinds
        assert result.answer == ("after the queue" if queued else big["text"])


def make_summary(server):
    from pipeline.llm.factory import make_client

    return make_client("openai", model="m", base_url=server.openai_base_url, env={"OPENAI_API_KEY": "k"},
                       max_retries=0)


def test_an_answer_that_never_completes_times_out(tmp_path):
    from pipeline.llm.limits import Limits

    profile = compile_profile("default", overrides={"retry.enabled": False}).profile
    session = SessionFile.create(tmp_path / "s.jsonl", cwd=str(tmp_path))
    conv = Conversation(RunPlan.of(profile), session, model=MODEL, cwd=str(tmp_path))
    with LoopbackServer([{"text": "late", "delay": 5}]) as server:
        client = model_client(RunPlan.of(profile), MODEL, base_url=server.openai_base_url, env={"OPENAI_API_KEY": "k"},
                              limits=Limits(call_deadline=0.5))
        started = time.monotonic()
        result = Agent(conv, client).run("hi")
        assert time.monotonic() - started < 4
    assert "timed out" in result.error
    assert _roles(tmp_path / "s.jsonl") == ["user", "assistant"]
