"""The proxy's summary requests are the runtime's: for the same conversation, `pipeline proxy`
(the body read as a session path, planned and summarized by the runtime's functions) and a
session compacted by `pipeline run`'s driver send the same requests (system prompt, user text,
budget): a split turn's prefix summarized apart, the file lists appended, and a second
compaction updating the first summary with the files of both."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.compaction.engine import compact_session, plan_session, planned_requests
from pipeline.llm.factory import make_client
from pipeline.session.store import SessionFile

from .policyrun import policies
from .upstream import RecordingUpstream

PROFILE = "extends: builtin:default\nname: requests\ncompaction: {trigger: {tokens: 2500}, keep_recent_tokens: 700}\n"
OUTPUT = "a line of the file\n" * 80

#: (kind, ...): ("user", text), ("tool", id, name, path), ("text", text)
TURN_1 = [("user", "Fix the parser in a.py."), ("tool", "t1", "read", "a.py"), ("tool", "t2", "edit", "a.py"),
          ("text", "Fixed.")]
TURN_2 = [("user", "Now split b.py and run the tests."), ("tool", "t3", "read", "b.py"),
          ("tool", "t4", "write", "c.py"), ("tool", "t5", "read", "d.py"), ("tool", "t6", "read", "e.py"),
          ("tool", "t7", "read", "f.py")]
TURN_3 = [("user", "And document c.py."), *[("tool", f"u{i}", "read", f"g{i}.py") for i in range(6)]]


def _anthropic(steps: list[tuple]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for step in steps:
        if step[0] == "user":
            messages.append({"role": "user", "content": step[1]})
        elif step[0] == "text":
            messages.append({"role": "assistant", "content": [{"type": "text", "text": step[1]}]})
        else:
            _, call, name, path = step
            messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": call, "name": name,
                                                               "input": {"path": path}}]})
            messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": call,
                                                          "content": OUTPUT + path}]})
    return {"model": "claude-x", "max_tokens": 64, "system": "own", "messages": messages}


def _pi(steps: list[tuple]) -> list[dict[str, Any]]:
    """The same conversation as pi's messages, as `pipeline run` writes them to a session."""
    out: list[dict[str, Any]] = []
    assistant = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-x", "stopReason": "stop",
                 "timestamp": 0}
    for step in steps:
        if step[0] == "user":
            out.append({"role": "user", "content": [{"type": "text", "text": step[1]}], "timestamp": 0})
        elif step[0] == "text":
            out.append({"role": "assistant", "content": [{"type": "text", "text": step[1]}], **assistant})
        else:
            _, call, name, path = step
            out.append({"role": "assistant", "content": [{"type": "toolCall", "id": call, "name": name,
                                                          "arguments": {"path": path}}], **assistant})
            out.append({"role": "toolResult", "toolCallId": call, "toolName": name, "isError": False, "timestamp": 0,
                        "content": [{"type": "text", "text": OUTPUT + path}]})
    return out


def _sent(call: dict[str, Any]) -> tuple[str, str, int]:
    return call["system"], call["messages"][0]["content"][0]["text"], call["max_tokens"]


def _expected(requests: list[Any]) -> list[tuple[str, str, int]]:
    return [(r.system_prompt, r.user_text, r.max_tokens) for r in requests]


def test_the_proxy_and_the_runtime_send_the_same_summary_requests(tmp_path: Path) -> None:
    with RecordingUpstream() as upstream:
        run = policies(tmp_path, PROFILE, upstream)
        settings = run.pipeline.profile.compaction
        assert run.send(_anthropic(TURN_1 + TURN_2)) is not None
        first = [_sent(c) for c in run.calls]
        assert len(first) == 2

        session = SessionFile.create(tmp_path / "run.jsonl", cwd="/w")
        session.append_messages(_pi(TURN_1 + TURN_2))
        plan = plan_session(session, settings)
        assert plan.is_split_turn and plan.summarize and plan.turn_prefix  # history, then the turn's prefix
        assert first == _expected(planned_requests(plan, run.pipeline.profile, run.pipeline.profile.summarizer))
        assert "<previous-summary>" not in first[0][1] and "Fix the parser" in first[0][1]

        # the runtime compacts too (the same answers), then both go on: the second summary updates the first
        client = make_client("anthropic", model="claude-x", base_url=upstream.url, api_key_env="K", env={"K": "k"})
        with client:
            done = compact_session(session, run.pipeline.profile, client)
        assert "c.py" in done.entry.summary and "a.py" in done.entry.summary  # the file lists, as the proxy's
        upstream.recorder.seen.clear()
        forwarded = run.send(_anthropic(TURN_1 + TURN_2 + TURN_3))
        second = [_sent(c) for c in run.calls]
        session.append_messages(_pi(TURN_3))
        again = plan_session(session, settings)
        assert again.previous_summary == done.entry.summary
        assert second == _expected(planned_requests(again, run.pipeline.profile, run.pipeline.profile.summarizer))
        assert done.entry.summary in second[0][1]  # the update of the previous summary
        summary = json.dumps(forwarded)
        assert "a.py" in summary and "g0.py" in summary  # the files of both summaries' tool calls
        assert run.store.counters()["compactions"] == 2
