"""A recording upstream for the proxy's transport tests: every request kept, answers scripted per test."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Optional


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    raw: bytes


@dataclass
class Recorder:
    """What the upstream saw, and a hook that answers (default: 200 with a small JSON body)."""

    seen: list[Seen] = field(default_factory=list)
    answer: Optional[Callable[[BaseHTTPRequestHandler, Seen], None]] = None
    gone: threading.Event = field(default_factory=threading.Event)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "RecordingUpstream"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _handle(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        seen = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, raw)
        self.server.recorder.seen.append(seen)
        if self.server.recorder.answer is not None:
            self.server.recorder.answer(self, seen)
            return
        json_answer(self, 200, json.dumps({"ok": True, "path": self.path}).encode(), ("x-upstream", "recording"))

    do_GET = do_POST = do_PUT = do_DELETE = _handle


def json_answer(handler: BaseHTTPRequestHandler, status: int, data: bytes, *headers: tuple[str, str]) -> None:
    """An answer of ``status`` with the JSON ``data`` and ``headers`` besides its type and length."""
    handler.send_response(status)
    for name, value in (("content-type", "application/json"), *headers, ("content-length", str(len(data)))):
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(data)


class RecordingUpstream(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.recorder = Recorder()
        self._thread = threading.Thread(target=self.serve_forever, args=(0.01,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> "RecordingUpstream":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
