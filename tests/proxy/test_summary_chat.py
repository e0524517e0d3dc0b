"""Summaries on an OpenAI chat completions body, through the real `pipeline proxy`: the leading
system message is set apart and kept, the crossing request sends the profile's summary request
upstream (`/chat/completions`, the client's model and bearer key) and is forwarded as the system
message, the summary (the user's request after it) and the kept messages, every `role: tool`
result with its call; the next request reuses the summary, byte for byte."""

from __future__ import annotations

import json

import httpx

from .proxyrun import ProxyProcess
from .test_summary import OUTPUT, PROFILE, SUMMARY
from .upstream import RecordingUpstream, json_answer

SYSTEM = {"role": "system", "content": "the agent's own prompt"}
ASK = "Read every file and fix the bug in f3."


def _chat(turns: int) -> dict:
    messages: list[dict] = [SYSTEM, {"role": "user", "content": ASK}]
    for i in range(turns):
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "read", "arguments": json.dumps({"path": f"f{i}"})}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": OUTPUT + str(i)})
    return {"model": "gpt-x", "messages": messages}


def _answer(handler, seen) -> None:
    text = SUMMARY if b"<conversation>" in seen.raw else "ok"
    json_answer(handler, 200, json.dumps({
        "id": "c", "object": "chat.completion", "model": "gpt-x",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": len(seen.raw) // 4, "completion_tokens": 5}}).encode())  # as estimated


def test_a_chat_conversation_is_summarized_once_then_reused(tmp_path):
    (tmp_path / "p.yaml").write_text(PROFILE)
    with RecordingUpstream() as upstream:
        upstream.recorder.answer = _answer
        with ProxyProcess(str(tmp_path / "p.yaml"), "--openai-url", upstream.url + "/v1",
                          store=tmp_path / "s.db") as proxy:
            for body in (_chat(2), _chat(12), _chat(13)):
                reply = httpx.post(proxy.url + "/v1/chat/completions", content=json.dumps(body), timeout=60,
                                   headers={"authorization": "Bearer sk-client-key"})
                assert reply.status_code == 200, reply.text
            stats = httpx.get(proxy.url + "/_pipeline/stats", timeout=30).json()
        small, call, crossed, later = upstream.recorder.seen
    assert small.raw == json.dumps(_chat(2)).encode()
    request = json.loads(call.raw)
    assert call.path == "/v1/chat/completions" and call.headers["authorization"] == "Bearer sk-client-key"
    assert request["model"] == "gpt-x" and "<conversation>" in json.dumps(request)
    assert SYSTEM["content"] not in json.dumps(request)  # set apart, never summarized
    sent = json.loads(crossed.raw)["messages"]
    assert sent[0] == SYSTEM and sent[1]["role"] == "user"
    assert sent[1]["content"][0]["text"].count(SUMMARY) == 1 and sent[1]["content"][1:] == [{"type": "text", "text": ASK}]
    assert sent[2]["role"] == "assistant" and len(sent) < len(_chat(12)["messages"])
    calls = [c["id"] for m in sent for c in m.get("tool_calls") or []]
    results = [m["tool_call_id"] for m in sent if m["role"] == "tool"]
    assert calls == results and calls[-1] == "c11"  # pairs whole, the latest kept
    again = json.loads(later.raw)["messages"]
    assert json.dumps(again[:len(sent)]) == json.dumps(sent)  # reused: the same bytes, no second call
    assert stats["compactions"] == 1 and stats["summaries_reused"] == 1 and stats["summary_failures"] == 0
