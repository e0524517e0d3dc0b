"""The core the loopback servers share: a threaded HTTP server on a free 127.0.0.1 port, the
script of replies, the record of requests, and the handler's reading and JSON answers.

A wire format is a subclass of :class:`ScriptedServer` (its bounds, which requests take a
reply) and of :class:`Handler` (its routes and answers); everything else is here.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterable, Mapping, Optional


@dataclass(frozen=True)
class ReceivedRequest:
    """One request as the server saw it (header names lower-case; ``body`` parsed JSON or None)."""

    method: str
    path: str
    headers: Mapping[str, str]
    raw: bytes
    body: Any


class ScriptedServer:
    """A scripted server; a context manager (``start``/``stop`` by hand also work).

    Each request that takes a reply gets the next one of the script; the last one repeats.
    ``aside``, a function of the request body, answers the requests it returns a reply for
    without taking from the script (side requests: a title, a proxy's summary call).
    ``max_requests`` and ``timeout`` bound a run (past them :meth:`next_reply` gives None); a
    kind of server that bounds every run names its own in ``default_max_requests`` and
    ``default_timeout``, which a run's own values replace."""

    handler: type[BaseHTTPRequestHandler]
    name = "loopback"
    #: the port to listen on (0: a free one)
    port = 0
    default_max_requests: Optional[int] = None
    default_timeout: Optional[float] = None

    def __init__(self, replies: Iterable[Any] = (), *, max_requests: Optional[int] = None,
                 timeout: Optional[float] = None, aside: Optional[Callable[[Any], Any]] = None) -> None:
        self._replies: deque[Any] = deque(replies)
        self._aside = aside
        self._last: Any = None
        self._lock = threading.Lock()
        self.max_requests = self.default_max_requests if max_requests is None else max_requests
        self.timeout = self.default_timeout if timeout is None else timeout
        self.received: list[ReceivedRequest] = []
        self._started = 0.0
        self._httpd: Optional[_HTTPServer] = None

    def start(self) -> Any:
        self._httpd = _HTTPServer(self)
        self._started = time.monotonic()
        threading.Thread(target=self._httpd.serve_forever, args=(0.01,), name=self.name, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the loopback server is not running")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def record(self, received: ReceivedRequest) -> None:
        with self._lock:
            self.received.append(received)

    def aside_reply(self, body: Any) -> Any:
        """``aside``'s reply for a request ``body`` (None: the request takes the script's next)."""
        return self._aside(body) if self._aside is not None else None

    def next_reply(self, taken: int) -> Any:
        """The reply for the ``taken``-th request that takes one (call with the lock held)."""
        if self.max_requests is not None and taken > self.max_requests:
            return None
        if self.timeout is not None and time.monotonic() - self._started > self.timeout:
            return None
        if self._replies:
            self._last = self._replies.popleft()
        return self._last


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, owner: ScriptedServer) -> None:
        super().__init__(("127.0.0.1", owner.port), owner.handler)
        self.owner = owner


class Handler(BaseHTTPRequestHandler):
    """HTTP/1.1, silent; reads a request into a :class:`ReceivedRequest` and answers JSON."""

    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: object) -> None:
        pass

    def received(self, method: str = "POST") -> ReceivedRequest:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0)) if method == "POST" else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        return ReceivedRequest(method, self.path, {k.lower(): v for k, v in self.headers.items()}, raw, body)

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

    def _event_stream(self) -> None:
        """The head of a server-sent event stream the server closes when done."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
