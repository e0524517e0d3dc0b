"""Old tool results masked on the wire (`compaction.strategy: mask_tool_results`), in recorded steps:
the real `pipeline proxy` between a client and a recording upstream on 127.0.0.1.

Below the trigger the client's bytes pass; the request that crosses it masks every tool result
before the kept recent messages (calls and results stay paired); the next requests, which repeat
that prefix, are masked the same way, byte for byte (the provider's prompt cache holds), also after
a restart on the same store; a later crossing makes one more step.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from .proxyrun import ProxyProcess
from .upstream import RecordingUpstream

PROFILE = """extends: builtin:default
name: masking
compaction:
  strategy: mask_tool_results
  trigger: {tokens: 3000}
  keep_recent_tokens: 600
"""
OUTPUT = "line of a long file\n" * 120  # about 2,400 characters: 600 tokens


@pytest.fixture()
def upstream():
    with RecordingUpstream() as server:
        yield server


def _proxy(tmp_path: Path, upstream: RecordingUpstream) -> ProxyProcess:
    (tmp_path / "p.yaml").write_text(PROFILE)
    return ProxyProcess(str(tmp_path / "p.yaml"), "--anthropic-url", upstream.url, "--openai-url", upstream.url + "/v1",
                        store=tmp_path / "store.db")


def _anthropic(turns: int) -> dict:
    messages: list[dict] = [{"role": "user", "content": "Read the files."}]
    for i in range(turns):
        messages.append({"role": "assistant", "content": [
            {"type": "text", "text": f"Reading f{i}."},
            {"type": "tool_use", "id": f"t{i}", "name": "read", "input": {"path": f"f{i}"}}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                                      "content": OUTPUT + str(i)}]})
    return {"model": "claude-x", "max_tokens": 5, "system": "own", "messages": messages}


def _post(proxy: ProxyProcess, path: str, body: dict) -> None:
    answer = httpx.post(proxy.url + path, content=json.dumps(body), headers={"x-api-key": "k"}, timeout=30)
    assert answer.status_code == 200, answer.text


def _results(sent: dict) -> list[str]:
    return [b["content"] for m in sent["messages"] if isinstance(m["content"], list) for b in m["content"]
            if b.get("type") == "tool_result"]


def test_steps_are_recorded_and_repeated_byte_for_byte(tmp_path, upstream):
    with _proxy(tmp_path, upstream) as proxy:
        _post(proxy, "/v1/messages", _anthropic(2))   # ~1,300 tokens: below the trigger
        _post(proxy, "/v1/messages", _anthropic(6))   # ~3,700: crosses it
        _post(proxy, "/v1/messages", _anthropic(7))   # the same prefix, one more turn
        stats = httpx.get(proxy.url + "/_pipeline/stats", timeout=30).json()
    small, crossed, after = upstream.recorder.seen
    assert small.raw == json.dumps(_anthropic(2)).encode()  # untouched: the client's bytes
    sent = json.loads(crossed.raw)
    results = _results(sent)
    placeholder = f"(output of read left out to save room: {len(OUTPUT) + 1} characters; run the tool again if it is needed)"
    assert results[:5] == [placeholder] * 5 and results[5] == OUTPUT + "5"
    assert [m["role"] for m in sent["messages"]] == [m["role"] for m in _anthropic(6)["messages"]]
    assert sent["messages"][1]["content"][1]["id"] == "t0"  # the call stays, paired with its masked result
    later = json.loads(after.raw)
    prefix = len(sent["messages"])
    dump = lambda ms: json.dumps(ms, ensure_ascii=False, separators=(",", ":"))  # noqa: E731
    assert dump(later["messages"][:prefix - 1]) == dump(sent["messages"][:prefix - 1])
    assert stats["compactions"] >= 1 and stats["masked_results"] >= 5 and stats["tokens_saved"] > 0


def test_a_restart_on_the_same_store_masks_the_same_way(tmp_path, upstream):
    with _proxy(tmp_path, upstream) as proxy:
        _post(proxy, "/v1/messages", _anthropic(6))
    with _proxy(tmp_path, upstream) as proxy:
        _post(proxy, "/v1/messages", _anthropic(6))
        stats = httpx.get(proxy.url + "/_pipeline/stats", timeout=30).json()
    first, second = upstream.recorder.seen
    assert first.raw == second.raw
    assert stats["compactions"] == 1  # the step was found again, not made twice


def test_openai_tool_messages_are_masked_with_their_tools_name(tmp_path, upstream):
    messages: list[dict] = [{"role": "system", "content": "own"}, {"role": "user", "content": "Read."}]
    for i in range(6):
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "grep", "arguments": "{}"}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": OUTPUT})
    with _proxy(tmp_path, upstream) as proxy:
        _post(proxy, "/v1/chat/completions", {"model": "gpt-x", "messages": messages})
    sent = json.loads(upstream.recorder.seen[0].raw)["messages"]
    tools = [m["content"] for m in sent if m["role"] == "tool"]
    assert tools[0].startswith("(output of grep left out") and tools[-1] == OUTPUT
    assert [m.get("tool_call_id") for m in sent] == [m.get("tool_call_id") for m in messages]
