"""Anthropic thinking blocks with their signatures, and `cache_control` markers, in a summarized
conversation: the kept messages reach the upstream exactly as the client sent them (issue 31:
"thinking blocks with their signatures and cache_control markers stay valid")."""

from __future__ import annotations

import json

from .policyrun import policies
from .test_summary import OUTPUT, PROFILE
from .upstream import RecordingUpstream


def _thinking_conversation(turns: int) -> dict:
    messages: list[dict] = [{"role": "user", "content": "Read every file and fix the bug in f3."}]
    for i in range(turns):
        messages.append({"role": "assistant", "content": [
            {"type": "thinking", "thinking": f"I should read f{i}.", "signature": f"sig-{i}-" + "A" * 40},
            {"type": "tool_use", "id": f"t{i}", "name": "read", "input": {"path": f"f{i}"}}]})
        result = {"type": "tool_result", "tool_use_id": f"t{i}", "content": OUTPUT + str(i)}
        if i == turns - 1:
            result["cache_control"] = {"type": "ephemeral"}
        messages.append({"role": "user", "content": [result]})
    return {"model": "claude-x", "max_tokens": 64, "system": [{"type": "text", "text": "own",
                                                             "cache_control": {"type": "ephemeral"}}],
            "messages": messages}


def test_kept_thinking_blocks_signatures_and_cache_markers_are_the_clients(tmp_path):
    body = _thinking_conversation(12)
    with RecordingUpstream() as upstream:
        run = policies(tmp_path, PROFILE, upstream)
        out = run.send(body)
    assert out is not None and len(run.calls) == 1
    sent = out["messages"]
    kept = sent[1:]  # after the summary message
    assert kept == body["messages"][len(body["messages"]) - len(kept):]  # the kept part, as the client sent it
    assert kept[0]["role"] == "assistant" and kept[0]["content"][0]["type"] == "thinking"  # a turn's call, whole
    assert kept[0]["content"][0]["signature"].startswith("sig-")
    assert kept[-1]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert out["system"] == body["system"]  # the system blocks and their marker untouched
    assert "sig-0-" not in json.dumps(sent)  # the summarized turns' thinking is not forwarded
