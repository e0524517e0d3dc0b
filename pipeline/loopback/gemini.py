"""A scripted Gemini API server on 127.0.0.1 (tests, `pipeline export --verify`): the wire Gemini CLI speaks.

::

    from pipeline.loopback.gemini import GeminiLoopbackServer

    with GeminiLoopbackServer(["hello"]) as server:
        env["GOOGLE_GEMINI_BASE_URL"] = server.url    # Gemini CLI's base-URL override
        ...
        server.bodies                                  # every generateContent request body

Routes: ``POST /v1beta/models/<model>:generateContent`` (one JSON response),
``:streamGenerateContent`` (server-sent events, one ``data:`` chunk per reply) and
``:countTokens`` (``{"totalTokens": …}``, an estimate, not scripted). Replies are the
scripted replies of :mod:`pipeline.loopback.chat` (a string, or ``{text?, toolCalls?,
usage?}``); each generate request takes the next, the last repeats. ``usage`` becomes
``usageMetadata`` (``promptTokenCount`` = input + cacheRead, ``candidatesTokenCount``).

Bounded: after ``max_requests`` generate requests, or once ``timeout`` seconds have passed
since start, every request gets a 500 (a runaway client ends instead of looping).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterable

from pipeline.loopback.chat import ReceivedRequest, normalize_reply

__all__ = ["GeminiLoopbackServer", "gemini_response"]

_ROUTE = re.compile(r"^/v1(?:beta|alpha)?/models/([^:/]+):(generateContent|streamGenerateContent|countTokens)$")
_FINISH = {"stop": "STOP", "length": "MAX_TOKENS", "toolUse": "STOP"}


def gemini_response(reply: Any, model: str) -> dict:
    """The ``GenerateContentResponse`` for a scripted reply."""
    r = normalize_reply(reply)
    parts: list[dict] = []
    if r.get("text"):
        parts.append({"text": r["text"]})
    for call in r.get("toolCalls") or []:
        parts.append({"functionCall": {"name": call["name"], "args": call.get("arguments") or {}}})
    u = r["usage"]
    prompt = u["input"] + u["cacheRead"]
    return {
        "candidates": [{"content": {"role": "model", "parts": parts or [{"text": ""}]},
                        "finishReason": _FINISH.get(r["stopReason"], "STOP"), "index": 0}],
        "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": u["output"],
                          "totalTokenCount": prompt + u["output"], "cachedContentTokenCount": u["cacheRead"]},
        "modelVersion": model,
    }


class GeminiLoopbackServer:
    """The scripted server; a context manager."""

    def __init__(self, replies: Iterable[Any] = (), *, max_requests: int = 50, timeout: float = 300.0) -> None:
        self._replies: deque[Any] = deque(replies)
        self._last: Any = None
        self._lock = threading.Lock()
        self.max_requests = max_requests
        self.timeout = timeout
        self.received: list[ReceivedRequest] = []
        self._started = 0.0
        self._httpd: _HTTPServer | None = None

    def __enter__(self) -> "GeminiLoopbackServer":
        self._httpd = _HTTPServer(self)
        self._started = time.monotonic()
        threading.Thread(target=self._httpd.serve_forever, args=(0.01,), name="loopback-gemini", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the loopback server is not running")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def bodies(self) -> list[Any]:
        """The bodies of the generate requests (countTokens left out)."""
        return [r.body for r in self.received if "enerateContent" in r.path]

    def _take(self, received: ReceivedRequest, generate: bool) -> tuple[bool, Any]:
        with self._lock:
            self.received.append(received)
            if not generate:
                return True, None
            count = sum(1 for r in self.received if "enerateContent" in r.path)
            if count > self.max_requests or time.monotonic() - self._started > self.timeout:
                return False, None
            if self._replies:
                self._last = self._replies.popleft()
            return True, self._last


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, owner: GeminiLoopbackServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.owner = owner


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        path = self.path.split("?")[0]
        received = ReceivedRequest("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, raw, body)
        match = _ROUTE.match(path)
        if match is None:
            self.server.owner.received.append(received)
            return self._json(404, {"error": {"code": 404, "message": f"no route {path}", "status": "NOT_FOUND"}})
        model, method = match.groups()
        within, reply = self.server.owner._take(received, method != "countTokens")
        if method == "countTokens":
            return self._json(200, {"totalTokens": max(1, len(raw) // 4)})
        if not within or reply is None:
            return self._json(500, {"error": {"code": 500, "message": "the loopback server has no reply for this "
                                                                     "request (script or bounds)", "status": "INTERNAL"}})
        response = gemini_response(reply, model)
        if method == "generateContent":
            return self._json(200, response)
        data = f"data: {json.dumps(response)}\r\n\r\n".encode("utf-8")
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
