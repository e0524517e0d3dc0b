"""Test helpers for tests/llm: a real HTTP server on 127.0.0.1 that speaks both wire formats with scripted replies.

``llm_server.script(Reply(...), ...)`` queues replies; each POST takes the next one
(a server with an empty queue answers 500 "no scripted reply"). A reply with ``body=None``
is a successful completion of ``text`` rendered in the format of the path that was hit
(``/v1/chat/completions`` → OpenAI, ``/v1/messages`` → Anthropic), so one script serves
both providers. ``body`` may also be a dict (sent as JSON), bytes/str (sent raw) or a
callable taking the :class:`Received` request. ``delay`` makes the handler wait before
answering (released when the test ends). Every request is recorded in ``.requests``.

``fault`` makes the reply hostile (see :data:`FAULTS`): ``trickle`` sends the whole
answer, status line first, one byte every ``interval`` seconds; ``trickle_body`` sends
the headers, then the body that way; ``silence`` reads the request and never answers;
``huge`` is a valid completion whose text is ``size`` bytes, generated in 1 MiB pieces
(announced in ``content-length``, or ``chunked``); ``endless`` a chunked body that never
ends (with ``status``); ``bomb`` a gzip body of zeros compressed on the fly (``size`` bytes inflated,
2 GiB by default). Hostile replies stop when the client hangs up or the test ends.
"""

from __future__ import annotations

import json
import sys
import threading
import zlib
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
    fault: str | None = None
    size: int = 0
    chunked: bool = False
    interval: float = 1.0


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

    def handle_error(self, request, client_address) -> None:
        """A client hanging up on a hostile reply is expected; anything else is reported."""
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)

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
        if reply.fault is not None:
            try:
                FAULTS[reply.fault](self, reply, released)
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
            return
        self._send(reply.status, self._payload(reply, received), reply.headers)

    def head(self, status: int, headers: dict[str, str]) -> bytes:
        lines = [f"HTTP/1.1 {status} Test", "content-type: application/json", *(f"{k}: {v}" for k, v in headers.items())]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def raw(self, data: bytes) -> None:
        self.wfile.write(data)
        self.wfile.flush()

    def chunk(self, data: bytes) -> None:
        self.raw(b"%x\r\n%s\r\n" % (len(data), data))

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


def _trickle(handler: _Handler, reply: Reply, released: threading.Event, *, body_only: bool = False) -> None:
    payload = json.dumps(SUCCESS[handler.path](reply, {"model": "m"})).encode()
    head = handler.head(200, {"content-length": str(len(payload))})
    if body_only:
        handler.raw(head)
    for byte in (payload if body_only else head + payload):
        handler.raw(bytes([byte]))
        if released.wait(reply.interval):
            return


def _huge(handler: _Handler, reply: Reply, released: threading.Event) -> None:
    """A completion whose text is ``reply.size`` bytes of ``a``, never held in memory whole."""
    marker = "\u0000MARK\u0000"
    template = json.dumps(SUCCESS[handler.path](Reply(text=marker), {"model": "m"})).encode()
    before, after = template.split(json.dumps(marker)[1:-1].encode())
    total = len(before) + reply.size + len(after)
    handler.raw(handler.head(200, {"transfer-encoding": "chunked"} if reply.chunked else {"content-length": str(total)}))
    send = handler.chunk if reply.chunked else handler.raw
    send(before)
    piece, left = b"a" * (1 << 20), reply.size
    while left > 0 and not released.is_set():
        send(piece[:left])
        left -= len(piece)
    send(after)
    if reply.chunked:
        handler.raw(b"0\r\n\r\n")


def _endless(handler: _Handler, reply: Reply, released: threading.Event) -> None:
    handler.raw(handler.head(reply.status, {"transfer-encoding": "chunked"}))
    handler.chunk(b'{"choices": [{"message": {"content": "')
    piece = b"endless " * 8192
    while not released.is_set():
        handler.chunk(piece)


def _bomb(handler: _Handler, reply: Reply, released: threading.Event) -> None:
    """gzip of ``size`` zero bytes (2 GiB by default), compressed as it is sent."""
    handler.raw(handler.head(200, {"transfer-encoding": "chunked", "content-encoding": "gzip"}))
    packer, zeros = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS), bytes(1 << 20)
    left = reply.size or (2 << 30)
    while left > 0 and not released.is_set():
        data = packer.compress(zeros[: min(left, len(zeros))])
        left -= len(zeros)
        if data:
            handler.chunk(data)
    handler.chunk(packer.flush())
    handler.raw(b"0\r\n\r\n")


FAULTS: dict[str, Callable[[_Handler, Reply, threading.Event], None]] = {
    "silence": lambda handler, reply, released: released.wait(60),
    "trickle": _trickle,
    "trickle_body": lambda handler, reply, released: _trickle(handler, reply, released, body_only=True),
    "huge": _huge,
    "endless": _endless,
    "bomb": _bomb,
}


class Sleeps(list):
    """An injectable ``sleep`` that records the requested delays instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


RNG_VALUE = 0.5


class TickingClock:
    """A monotonic clock for :func:`pipeline.llm.deadline.deadline_clock`: every reading moves it
    on by ``step`` seconds, so a deadline passes after a known number of the client's checks
    (each socket operation, each body chunk, each retry decision), without waiting for it."""

    def __init__(self, step: float, start: float = 1000.0) -> None:
        self.step, self.start, self.now, self.readings = step, start, start, 0

    def __call__(self) -> float:
        value = self.now
        self.now += self.step
        self.readings += 1
        return value

    @property
    def elapsed(self) -> float:
        return self.now - self.start
