"""Summaries in the OpenAI Responses and Gemini wire formats: the real `pipeline proxy` between a client
and a recording upstream that answers in the format (the loopback servers' answer builders).

As for Anthropic Messages and chat (test_summary.py): the request that crosses the trigger makes one
summary call upstream in the request's own format, with the client's model and key; it is forwarded
as the summary (the user's request kept) and the recent items, every call with its output (by
`call_id`; Gemini's `functionCall` content with its `functionResponse`), reasoning items and thought
signatures whole; the next request reuses the stored summary byte for byte; streaming passes through.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import httpx
import pytest

from pipeline.loopback.gemini import gemini_response
from pipeline.loopback.responses import response_events, response_object

from .proxyrun import ProxyProcess
from .test_summary import OUTPUT, PROFILE, SUMMARY
from .upstream import RecordingUpstream

DEVELOPER = {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "sandbox rules"}]}
ASK = "Read every file and fix the bug in f3."


def _responses(turns: int) -> dict:
    items: list[dict] = [DEVELOPER, {"type": "message", "role": "user", "content": [{"type": "input_text", "text": ASK}]}]
    for i in range(turns):
        items.append({"type": "reasoning", "id": f"rs{i}", "summary": [{"type": "summary_text", "text": f"think {i}"}],
                      "encrypted_content": f"opaque-{i}"})
        calls = [f"c{i}a", f"c{i}b"] if i % 3 == 2 else [f"c{i}"]  # parallel calls now and then
        items += [{"type": "function_call", "call_id": c, "name": "read", "arguments": json.dumps({"path": c})}
                  for c in calls]
        items += [{"type": "function_call_output", "call_id": c, "output": OUTPUT + c} for c in calls]
    return {"model": "gpt-x", "instructions": "own", "input": items, "stream": False}


def _gemini(turns: int) -> dict:
    contents: list[dict] = [{"role": "user", "parts": [{"text": ASK}]}]
    for i in range(turns):
        contents.append({"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {"path": f"f{i}"}},
                                                     "thoughtSignature": f"sig-{i}"}]})
        contents.append({"role": "user", "parts": [{"functionResponse": {"name": "read_file",
                                                                         "response": {"output": OUTPUT + str(i)}}}]})
    return {"contents": contents, "systemInstruction": {"parts": [{"text": "own"}]}}


def _answer(build: Callable[[str], Any], stream: Callable[[str], bytes]):
    def answer(handler, seen):
        text = SUMMARY if b"<conversation>" in seen.raw else "ok"
        streaming = json.loads(seen.raw).get("stream") is True or "streamGenerateContent" in seen.path
        data = stream(text) if streaming else json.dumps(build(text)).encode()
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream" if streaming else "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
    return answer


def _responses_sse(text: str) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in response_events(text, "gpt-x", 0)).encode()


FORMATS = {
    "responses": ("--openai-url", "/v1", "/v1/responses", {"authorization": "Bearer sk-client-key"}, _responses,
                  _answer(lambda t: response_object(t, "gpt-x", 0), _responses_sse)),
    "gemini": ("--gemini-url", "", "/v1beta/models/gemini-x:generateContent", {"x-goog-api-key": "sk-client-key"},
               _gemini, _answer(lambda t: gemini_response(t, "gemini-x"),
                                lambda t: f"data: {json.dumps(gemini_response(t, 'gemini-x'))}\r\n\r\n".encode())),
}


def _run(tmp_path: Path, wire: str, bodies: list[dict], path: str | None = None) -> tuple[list, dict, list[bytes]]:
    flag, suffix, route, headers, _, answer = FORMATS[wire]
    (tmp_path / "p.yaml").write_text(PROFILE)
    replies = []
    with RecordingUpstream() as upstream:
        upstream.recorder.answer = answer
        with ProxyProcess(str(tmp_path / "p.yaml"), flag, upstream.url + suffix, store=tmp_path / "s.db") as proxy:
            for body in bodies:
                reply = httpx.post(proxy.url + (path or route), content=json.dumps(body), timeout=60, headers=headers)
                assert reply.status_code == 200, reply.text
                replies.append(reply.content)
            stats = httpx.get(proxy.url + "/_pipeline/stats", timeout=30).json()
    return list(upstream.recorder.seen), stats, replies


def test_responses_one_summary_then_reused_pairs_and_reasoning_whole(tmp_path):
    later = {**_responses(13), "stream": True}
    seen, stats, replies = _run(tmp_path, "responses", [_responses(2), _responses(12), later])
    small, call, crossed, again = seen
    assert small.raw == json.dumps(_responses(2)).encode()  # below the trigger: byte for byte
    request = json.loads(call.raw)
    assert call.path == "/v1/responses" and call.headers["authorization"] == "Bearer sk-client-key"
    assert request["model"] == "gpt-x" and request["store"] is False and "think 0" in json.dumps(request)
    assert "sandbox rules" not in json.dumps(request)  # the developer message is kept whole, not summarized
    sent = json.loads(crossed.raw)
    original = _responses(12)
    assert sent["instructions"] == "own" and sent["input"][0] == DEVELOPER
    summary = sent["input"][1]
    assert summary["role"] == "user" and summary["content"][0]["text"].count(SUMMARY) == 1
    assert summary["content"][1:] == [{"type": "input_text", "text": ASK}]  # the user's request kept
    kept = sent["input"][2:]
    assert kept == original["input"][-len(kept):] and len(kept) < len(original["input"]) - 2
    assert kept[0]["type"] == "reasoning"  # a turn's reasoning stays with its calls, encrypted content whole
    calls = [i["call_id"] for i in kept if i["type"] == "function_call"]
    assert calls and calls == [i["call_id"] for i in kept if i["type"] == "function_call_output"]
    reused = json.loads(again.raw)["input"]
    assert json.dumps(reused[:len(sent["input"])]) == json.dumps(sent["input"])  # byte-stable prefix
    assert b"response.completed" in replies[2] and b"output_text.delta" in replies[2]  # the stream passed through
    assert stats["compactions"] == 1 and stats["summaries_reused"] == 1 and stats["summary_failures"] == 0


@pytest.mark.parametrize("stream", [False, True])
def test_gemini_one_summary_then_reused_calls_with_their_responses(tmp_path, stream):
    path = "/v1beta/models/gemini-x:streamGenerateContent?alt=sse" if stream else None
    seen, stats, replies = _run(tmp_path, "gemini", [_gemini(2), _gemini(12), _gemini(13)], path)
    small, call, crossed, again = seen
    assert small.raw == json.dumps(_gemini(2)).encode()
    request = json.loads(call.raw)
    assert call.path == "/v1beta/models/gemini-x:generateContent" and call.headers["x-goog-api-key"] == "sk-client-key"
    assert "<conversation>" in json.dumps(request["contents"]) and "read_file" in json.dumps(request["contents"])
    assert crossed.path == (path or FORMATS["gemini"][2])
    sent = json.loads(crossed.raw)
    original = _gemini(12)["contents"]
    assert sent["systemInstruction"] == {"parts": [{"text": "own"}]}
    first = sent["contents"][0]
    assert first["role"] == "user" and first["parts"][0]["text"].count(SUMMARY) == 1 and first["parts"][1:] == [
        {"text": ASK}]
    kept = sent["contents"][1:]
    assert kept == original[-len(kept):] and len(kept) < len(original) - 1
    assert kept[0]["role"] == "model" and kept[0]["parts"][0]["thoughtSignature"]  # a call with its response
    roles = [c["role"] for c in sent["contents"]]
    assert roles == (["user", "model"] * len(roles))[:len(roles)]  # the turns keep alternating
    reused = json.loads(again.raw)["contents"]
    assert json.dumps(reused[:len(sent["contents"])]) == json.dumps(sent["contents"])
    assert (b"data: " in replies[2]) == stream and b"ok" in replies[2]
    assert stats["compactions"] == 1 and stats["summaries_reused"] == 1 and stats["summary_failures"] == 0


def test_a_responses_cut_never_orphans_an_output_or_splits_reasoning_from_its_call():
    from pipeline.proxy.turns import TURNS

    items = _responses(9)["input"]
    boundary = TURNS["responses"].boundary
    for at in range(1, len(items)):
        kept = items[at:]
        if boundary(items, at):
            calls = {i["call_id"] for i in kept if i["type"] == "function_call"}
            assert all(i["call_id"] in calls for i in kept if i["type"] == "function_call_output"), at
            assert items[at - 1]["type"] != "reasoning", at
    starts = [at for at in range(1, len(items)) if boundary(items, at)]
    assert starts and all(items[at]["type"] in ("reasoning", "message") for at in starts)


def test_the_summary_call_carries_the_clients_key_as_the_client_sent_it():
    from pipeline.proxy.routes import Upstreams, route
    from pipeline.proxy.turns import client_key

    gemini = route("/v1beta/models/g:generateContent", "key=sk-in-query", {}, Upstreams())
    assert client_key(gemini, {}) == "sk-in-query"
    assert client_key(gemini, {"x-goog-api-key": "sk-header"}) == "sk-header"
    responses = route("/v1/responses", "", {}, Upstreams())
    assert client_key(responses, {"authorization": "Bearer sk-bearer"}) == "sk-bearer"
    assert client_key(responses, {}) == ""


@pytest.mark.parametrize("summarizer, thinking", [
    ("", {"thinkingBudget": 0}),  # the profile asks for no reasoning: a thinking model is told not to think
    ("summarizer: {reasoning: true, reasoning_effort: low}\n", {"includeThoughts": True, "thinkingBudget": 2048}),
])
def test_a_gemini_summary_call_asks_for_the_profiles_thinking(tmp_path, summarizer, thinking):
    """The summary call to a thinking Gemini model carries the profile's reasoning as pi would send it
    (pipeline.llm.gemini.thinking_config), never the model's default thinking unasked."""
    (tmp_path / "p.yaml").write_text(PROFILE + summarizer)
    path = "/v1beta/models/gemini-2.5-flash:generateContent"
    with RecordingUpstream() as upstream:
        upstream.recorder.answer = FORMATS["gemini"][5]
        with ProxyProcess(str(tmp_path / "p.yaml"), "--gemini-url", upstream.url, store=tmp_path / "s.db") as proxy:
            reply = httpx.post(proxy.url + path, content=json.dumps(_gemini(12)), timeout=60,
                               headers={"x-goog-api-key": "sk-client-key"})
            assert reply.status_code == 200, reply.text
        calls = [json.loads(s.raw) for s in upstream.recorder.seen if b"<conversation>" in s.raw]
    assert calls and all(c["generationConfig"]["thinkingConfig"] == thinking for c in calls)
