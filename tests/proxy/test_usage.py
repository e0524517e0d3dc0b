"""What the upstream reports of each answer's input and cache, read on the way back by the real
`pipeline proxy`, kept per conversation in its store and totalled in its counters."""

from __future__ import annotations

import json
import sqlite3

import httpx

from .proxyrun import ProxyProcess
from .upstream import RecordingUpstream

ANTHROPIC = {"id": "m", "type": "message", "role": "assistant", "content": [{"type": "text", "text": "ok"}],
             "usage": {"input_tokens": 20, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 80,
                       "output_tokens": 3}}
OPENAI_STREAM = ("data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": "ok"}}]}) + "\n\n"
                 "data: " + json.dumps({"choices": [], "usage": {"prompt_tokens": 500, "completion_tokens": 2,
                                                                 "prompt_tokens_details": {"cached_tokens": 300}}})
                 + "\n\ndata: [DONE]\n\n")


def _answer(handler, seen):
    stream = seen.path.endswith("/chat/completions")
    data = OPENAI_STREAM.encode() if stream else json.dumps(ANTHROPIC).encode()
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream" if stream else "application/json")
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def test_input_and_cache_tokens_are_kept_per_conversation(tmp_path):
    with RecordingUpstream() as upstream:
        upstream.recorder.answer = _answer
        with ProxyProcess("--anthropic-url", upstream.url, "--openai-url", upstream.url + "/v1",
                          store=tmp_path / "s.db") as proxy:
            for _ in range(2):
                httpx.post(proxy.url + "/v1/messages", headers={"x-api-key": "k"}, timeout=30,
                           json={"model": "c", "max_tokens": 5, "messages": [{"role": "user", "content": "one"}]})
            streamed = httpx.post(proxy.url + "/v1/chat/completions", headers={"authorization": "Bearer k"},
                                  timeout=30, json={"model": "g", "stream": True,
                                                    "messages": [{"role": "user", "content": "two"}]})
            assert streamed.text == OPENAI_STREAM  # the client gets the stream as it came
            stats = httpx.get(proxy.url + "/_pipeline/stats", timeout=30).json()
    assert stats["input_tokens"] == 2 * 1000 + 500
    assert stats["cache_read_tokens"] == 2 * 900 + 300 and stats["cache_write_tokens"] == 2 * 80
    rows = sqlite3.connect(tmp_path / "s.db").execute(
        "SELECT requests, input_tokens, cache_read, cache_write FROM conversations ORDER BY input_tokens").fetchall()
    assert rows == [(1, 500, 300, 0), (2, 2000, 1800, 160)]
