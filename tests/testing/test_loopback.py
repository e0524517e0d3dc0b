"""The loopback scripted model server, hit over real HTTP with httpx in both wire formats."""

from __future__ import annotations

import json
import threading

import httpx
import pytest

from pipeline.testing.loopback import LoopbackServer, error_status, normalize_reply

OPENAI = "/v1/chat/completions"
ANTHROPIC = "/v1/messages"
CALL = {"toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}, "id": "c1"},
                      {"name": "ls", "arguments": {}}]}


@pytest.fixture
def server():
    with LoopbackServer() as s:
        yield s


_CLIENT = httpx.Client(timeout=5)  # one client: building one per call costs more than the calls


def post(server, path, body, **kw):
    return _CLIENT.post(server.url + path, json=body, **kw)


def sse(response) -> list[tuple[str | None, str]]:
    """(event, data) pairs of a server-sent-event body."""
    out = []
    for frame in response.text.split("\n\n"):
        if not frame.strip():
            continue
        fields = dict(line.split(": ", 1) for line in frame.splitlines())
        out.append((fields.get("event"), fields["data"]))
    return out


# ------------------------------------------------------------------ OpenAI


def test_openai_text_usage_and_recording(server):
    server.script({"text": "hi", "usage": {"input": 10, "output": 3, "cacheRead": 5, "cacheWrite": 2}})
    body = {"model": "m1", "messages": [{"role": "user", "content": "x"}]}
    data = post(server, OPENAI, body).json()
    assert data["choices"][0]["message"] == {"role": "assistant", "content": "hi"}
    assert data["choices"][0]["finish_reason"] == "stop"
    assert data["model"] == "m1"
    assert data["usage"] == {"prompt_tokens": 17, "completion_tokens": 3, "total_tokens": 20,
                             "prompt_tokens_details": {"cached_tokens": 5, "cache_write_tokens": 2}}
    assert server.bodies == [body]
    assert server.received[0].path == OPENAI


def test_openai_tool_calls_have_json_string_arguments(server):
    server.script(CALL)
    message = post(server, OPENAI, {"model": "m"}).json()["choices"][0]
    assert message["finish_reason"] == "tool_calls"
    calls = message["message"]["tool_calls"]
    assert [c["id"] for c in calls] == ["c1", "call_0_1"]
    assert json.loads(calls[0]["function"]["arguments"]) == {"path": "a.txt"}
    assert calls[1]["function"] == {"name": "ls", "arguments": "{}"}


def test_openai_length_and_thinking(server):
    server.script({"text": "cut", "thinking": "hmm", "stopReason": "length"})
    choice = post(server, OPENAI, {"model": "m"}).json()["choices"][0]
    assert choice["finish_reason"] == "length"
    assert choice["message"]["reasoning_content"] == "hmm"


def test_openai_stream(server):
    server.script({"text": "hello", "thinking": "t", **CALL, "usage": {"input": 4, "output": 2}})
    r = post(server, OPENAI, {"model": "m", "stream": True, "stream_options": {"include_usage": True}})
    assert r.headers["content-type"] == "text/event-stream"
    frames = [data for _, data in sse(r)]
    assert frames[-1] == "[DONE]"
    chunks = [json.loads(f) for f in frames[:-1]]
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert "".join(d.get("content") or "" for d in deltas) == "hello"
    assert "".join(d.get("reasoning_content") or "" for d in deltas) == "t"
    calls = [tc for d in deltas for tc in d.get("tool_calls", [])]
    assert [(tc["index"], tc["function"]["name"]) for tc in calls] == [(0, "read"), (1, "ls")]
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "tool_calls"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["prompt_tokens"] == 4


def test_openai_stream_without_usage_option_has_no_usage_chunk(server):
    server.script("x")
    frames = [json.loads(d) for _, d in sse(post(server, OPENAI, {"model": "m", "stream": True}))[:-1]]
    assert all("usage" not in f for f in frames)


# ------------------------------------------------------------------ Anthropic


def test_anthropic_message_blocks_and_usage(server):
    server.script({"thinking": "plan", "thinkingSignature": "sig", "text": "ok", **CALL,
                   "usage": {"input": 7, "output": 9, "cacheRead": 100, "cacheWrite": 20}})
    data = post(server, ANTHROPIC, {"model": "claude-x", "max_tokens": 10, "messages": []}).json()
    assert [b["type"] for b in data["content"]] == ["thinking", "text", "tool_use", "tool_use"]
    assert data["content"][0]["signature"] == "sig"
    assert data["content"][2] == {"type": "tool_use", "id": "c1", "name": "read", "input": {"path": "a.txt"}}
    assert data["stop_reason"] == "tool_use"
    assert data["usage"] == {"input_tokens": 7, "output_tokens": 9, "cache_read_input_tokens": 100,
                             "cache_creation_input_tokens": 20}


@pytest.mark.parametrize(("stop", "wire"), [("stop", "end_turn"), ("length", "max_tokens")])
def test_anthropic_stop_reasons(server, stop, wire):
    server.script({"text": "x", "stopReason": stop})
    assert post(server, ANTHROPIC, {"model": "m"}).json()["stop_reason"] == wire


def test_anthropic_stream(server):
    server.script({"thinking": "p", "thinkingSignature": "s1", "text": "done", **CALL, "usage": {"output": 5}})
    events = sse(post(server, ANTHROPIC, {"model": "m", "stream": True}))
    names = [e for e, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    data = [json.loads(d) for _, d in events]
    deltas = [d["delta"] for d in data if d["type"] == "content_block_delta"]
    assert [d["type"] for d in deltas] == ["thinking_delta", "signature_delta", "text_delta",
                                           "input_json_delta", "input_json_delta"]
    assert json.loads(deltas[3]["partial_json"]) == {"path": "a.txt"}
    assert data[-2]["delta"]["stop_reason"] == "tool_use" and data[-2]["usage"] == {"output_tokens": 5}


# ------------------------------------------------------------------ errors, script, abort


@pytest.mark.parametrize(("message", "openai", "anthropic"), [
    ("prompt is too long: 213456 tokens > 200000 maximum", 400, 400),
    ("429 rate limit exceeded", 429, 429),
    ("overloaded_error", 503, 529),
    ("503 service unavailable", 503, 503),
    ("401 invalid api key", 401, 401),
    ("something odd", 500, 500),
])
def test_error_status_from_text(message, openai, anthropic):
    reply = normalize_reply({"stopReason": "error", "errorMessage": message})
    assert (error_status(reply, "openai"), error_status(reply, "anthropic")) == (openai, anthropic)


def test_errors_carry_the_providers_error_body(server):
    overflow = {"stopReason": "error", "errorMessage": "maximum context length is 128000 tokens"}
    server.script(overflow, overflow, {"stopReason": "error", "errorMessage": "x", "status": 418})
    r = post(server, OPENAI, {"model": "m"})
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "context_length_exceeded"
    assert r.json()["error"]["message"] == overflow["errorMessage"]
    r = post(server, ANTHROPIC, {"model": "m"})
    assert r.status_code == 400
    assert r.json() == {"type": "error", "error": {"type": "invalid_request_error",
                                                   "message": overflow["errorMessage"]}}
    assert post(server, ANTHROPIC, {"model": "m"}).status_code == 418


def test_last_reply_repeats_and_total_tokens_become_input(server):
    server.script({"text": "a", "usage": {"totalTokens": 190000, "output": 10}})
    for _ in range(2):
        usage = post(server, OPENAI, {"model": "m"}).json()["usage"]
        assert usage["prompt_tokens"] == 189990 and usage["completion_tokens"] == 10
    assert len(server.received) == 2


def test_aside_answers_side_requests_without_taking_from_the_script():
    """A side request arriving before the main one leaves the main one its scripted reply."""
    def title(body):
        return "A title" if body["messages"][0]["content"] == "name this chat" else None

    with LoopbackServer(["the answer"], aside=title) as server:
        side = post(server, OPENAI, {"model": "m", "messages": [{"role": "system", "content": "name this chat"}]})
        main = post(server, OPENAI, {"model": "m", "messages": [{"role": "system", "content": "work"}]})
        assert side.json()["choices"][0]["message"]["content"] == "A title"
        assert main.json()["choices"][0]["message"]["content"] == "the answer"
        assert len(server.received) == 2


def test_no_script_and_unknown_route(server):
    assert post(server, OPENAI, {"model": "m"}).status_code == 500
    server.script("x")
    assert post(server, "/v2/other", {}).status_code == 404


def test_aborted_reply_is_held_until_released(server):
    server.script({"text": "partial", "stopReason": "aborted"})
    received = []

    def consume():
        with httpx.stream("POST", server.url + ANTHROPIC, json={"model": "m", "stream": True}, timeout=5) as r:
            for line in r.iter_lines():
                received.append(line)
                if "text_delta" in line:
                    server.release()

    worker = threading.Thread(target=consume)
    worker.start()
    worker.join(5)
    assert not worker.is_alive()
    assert any("partial" in line for line in received)
    assert not any("message_stop" in line for line in received)


def test_server_address_is_loopback_and_stops():
    s = LoopbackServer(["x"]).start()
    assert s.url.startswith("http://127.0.0.1:")
    url = s.url
    s.stop()
    with pytest.raises(httpx.TransportError):
        httpx.post(url + OPENAI, json={}, timeout=1)
    with pytest.raises(RuntimeError):
        s.url
