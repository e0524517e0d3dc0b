"""Test helpers for tests/llm: a real HTTP server on 127.0.0.1 that speaks both wire formats with scripted replies.

``llm_server.script(Reply(...), ...)`` queues replies; each POST takes the next one
(a server with an empty queue answers 500 "no scripted reply"). A reply with ``body=None``
is a successful completion of ``text`` rendered in the format of the path that was hit
(``/v1/chat/completions`` → OpenAI, ``/v1/messages`` → Anthropic), so one script serves
both providers. ``body`` may also be a dict (sent as JSON), bytes/str (sent raw) or a
callable taking the :class:`Received` request. ``delay`` makes the handler wait before
answering (released when the test ends). Every request is recorded in ``.requests``.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Union

FAKE_KEY = "sk-test-FAKEKEY-7f3a9c2e51d04b86"
KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"
PROVIDERS = ["openai", "anthropic"]


@dataclass(frozen=True)
class Received:
    """One request as the server saw it; header names are lower-case."""

    method: str
    path: str
    headers: dict[str, str]
    raw: bytes

    @property
    def json(self):
        return json.loads(self.raw)


Body = Union[None, dict, list, str, bytes, Callable[[Received], object]]


@dataclass(frozen=True)
class Reply:
    """A scripted answer; see the module docstring."""

    status: int = 200
    text: str = "summary text"
    stop: str = "stop"  # "stop" | "length" (rendered per wire format)
    thinking: str | None = None
    usage: tuple[int, int, int, int] = (100, 20, 0, 0)  # input, output, cache read, cache write
    body: Body = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def openai_success(reply: Reply, request: dict) -> dict:
    """A chat.completion object for ``reply``."""
    uncached, output, cache_read, cache_write = reply.usage
    message = {"role": "assistant", "content": reply.text}
    if reply.thinking is not None:
        message["reasoning_content"] = reply.thinking
    prompt = uncached + cache_read + cache_write
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": request.get("model"),
        "choices": [{"index": 0, "message": message, "finish_reason": reply.stop}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": output,
            "total_tokens": prompt + output,
            "prompt_tokens_details": {"cached_tokens": cache_read, "cache_write_tokens": cache_write},
        },
    }


def anthropic_success(reply: Reply, request: dict) -> dict:
    """A messages API ``message`` object for ``reply``."""
    uncached, output, cache_read, cache_write = reply.usage
    content = []
    if reply.thinking is not None:
        content.append({"type": "thinking", "thinking": reply.thinking, "signature": "sig"})
    content.append({"type": "text", "text": reply.text})
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": request.get("model"),
        "content": content,
        "stop_reason": {"stop": "end_turn", "length": "max_tokens"}.get(reply.stop, reply.stop),
        "stop_sequence": None,
        "usage": {
            "input_tokens": uncached,
            "output_tokens": output,
            "cache_read_input_tokens": cache_read,
            "cache_creation_input_tokens": cache_write,
        },
    }


SUCCESS = {OPENAI_PATH: openai_success, ANTHROPIC_PATH: anthropic_success}


class FakeLLMServer(ThreadingHTTPServer):
    """The server; handler threads never block ``server_close``."""

    daemon_threads = True
    block_on_close = False

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.replies: deque[Reply] = deque()
        self.requests: list[Received] = []
        self.released = threading.Event()
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def base_url(self, provider: str) -> str:
        """The base URL a client of ``provider`` should be given."""
        return self.url + "/v1" if provider == "openai" else self.url

    def reset(self) -> None:
        """Forget replies and requests; release handlers still hanging from earlier tests."""
        self.released.set()
        with self.lock:
            self.released = threading.Event()
            self.replies.clear()
            self.requests = []

    def script(self, *replies: Reply) -> None:
        with self.lock:
            self.replies.extend(replies)

    def take(self, received: Received) -> Reply:
        with self.lock:
            self.requests.append(received)
            if self.replies:
                return self.replies.popleft()
        return Reply(status=500, body={"error": {"message": "no scripted reply"}})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 5
    wbufsize = -1  # buffered: headers and body leave in one write (no delayed-ACK stalls)
    server: FakeLLMServer

    def log_message(self, format, *args) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        received = Received("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, raw)
        released = self.server.released
        reply = self.server.take(received)
        if reply.delay and released.wait(reply.delay):
            return
        self._send(reply.status, self._payload(reply, received), reply.headers)

    def _payload(self, reply: Reply, received: Received) -> bytes:
        body = reply.body(received) if callable(reply.body) else reply.body
        if body is None:
            render = SUCCESS.get(self.path)
            if render is None:
                return json.dumps({"error": {"message": f"no route {self.path}"}}).encode()
            body = render(reply, received.json)
        if isinstance(body, str):
            return body.encode("utf-8")
        return body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")

    def _send(self, status: int, payload: bytes, headers: dict[str, str]) -> None:
        if self.path not in SUCCESS and status == 200:
            status = 404
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


class Sleeps(list):
    """An injectable ``sleep`` that records the requested delays instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


RNG_VALUE = 0.5
