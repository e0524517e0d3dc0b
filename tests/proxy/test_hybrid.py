"""`compaction.strategy: hybrid` on the wire, as the runtime's driver does it for a session: old
tool results masked at the trigger; when the context after masking still fires it, the runtime's
summary request made of the *masked* history; between two steps the forwarded bytes are the
same (the provider's prompt cache keeps hitting) and no second summary is made."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.proxy.wire import Request

from .policyrun import HEADERS, policies
from .upstream import RecordingUpstream

PROFILE = """extends: builtin:default
name: hybrid
compaction:
  strategy: hybrid
  trigger: {tokens: 3000}
  keep_recent_tokens: 600
"""
OUTPUT = "raw tool output line\n" * 60


def _body(turns: int, said: str = "") -> dict:
    messages: list[dict] = []
    for i in range(turns):
        messages.append({"role": "user", "content": f"request {i}: " + said})
        messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": "read",
                                                           "input": {"path": f"f{i}.py"}}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                                      "content": OUTPUT + str(i)}]})
        messages.append({"role": "assistant", "content": [{"type": "text", "text": f"read f{i}.py"}]})
    return {"model": "claude-x", "max_tokens": 64, "system": "own", "messages": messages}


def test_masking_is_enough_no_summary(tmp_path: Path) -> None:
    with RecordingUpstream() as upstream:
        run = policies(tmp_path, PROFILE, upstream)
        out = run.send(_body(10))
        assert out is not None and "left out to save room" in json.dumps(out)
        assert run.calls == [] and run.store.counters()["compactions"] == 1  # one masking step, no summary


def test_the_summary_is_of_the_masked_history_and_steps_are_byte_stable(tmp_path: Path) -> None:
    said = "please keep this long explanation in mind. " * 40  # text masking cannot shrink
    with RecordingUpstream() as upstream:
        run = policies(tmp_path, PROFILE, upstream)
        first = run.send(_body(10, said))
        assert first is not None and run.calls, "masking was not enough: a summary is made"
        conversation = run.calls[0]["messages"][0]["content"][0]["text"]
        assert "(output of read left out to save room" in conversation  # the masked history...
        assert "raw tool output line" not in conversation.split("request 9:")[0]  # ...not the raw results
        assert run.store.counters()["compactions"] == 2  # the masking step, then the summary
        calls = len(run.calls)

        body = _body(10, said)
        body["messages"].append({"role": "user", "content": "and one more thing"})
        again = run.send(body)
        assert again is not None and len(run.calls) == calls  # reused: no second summary
        sent, resent = first["messages"], again["messages"]
        assert json.dumps(resent[:len(sent)]) == json.dumps(sent)  # the forwarded prefix, byte for byte
        assert resent[len(sent):] == [{"role": "user", "content": "and one more thing"}]
        assert run.store.counters()["compactions"] == 2


def test_within_one_request_the_stored_summary_is_looked_up_and_applied_once(tmp_path: Path, monkeypatch) -> None:
    """Masking measures the body as the summary would forward it, then the summary forwards it:
    one store lookup and one rewritten copy a request (the app builds one ``Request`` the policies share)."""
    said = "please keep this long explanation in mind. " * 40
    with RecordingUpstream() as upstream:
        run = policies(tmp_path, PROFILE, upstream)
        run.send(_body(10, said))  # masks, then summarizes: a summary is stored
        body = _body(10, said)
        body["messages"].append({"role": "user", "content": "and one more thing"})
        expected = run.send(body)
        lookups = []
        real = run.store.summary_for
        monkeypatch.setattr(run.store, "summary_for", lambda keys: lookups.append(keys) or real(keys))
        data = json.loads(json.dumps(body))
        out = run.policy.apply(Request(run.where, data, HEADERS), data)
    assert out is not None and json.dumps(out) == json.dumps(expected)
    assert len(lookups) == 1
