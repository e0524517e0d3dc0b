"""A Redis host that takes connections and never answers (a blackholed address): the proxy's
event loop never waits for it, and once the store found it away no request touches it.

The blackhole is a real TCP listener on 127.0.0.1 that reads what the redis client sends and
answers nothing until the test lets it go (then it closes every connection, as a host that
comes back refusing would). The proxy app is called in process over ASGI.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any

from pipeline.proxy import redis_store
from pipeline.proxy.app import ProxyApp, ProxySettings
from pipeline.proxy.redis_store import RedisStore


class Blackhole:
    """A listener that reads and never answers; :meth:`release` closes every connection."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.received = bytearray()
        self.released = threading.Event()
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def _accept(self) -> None:
        while not self.released.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self._lock:
                self._conns.append(conn)
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn: socket.socket) -> None:
        while True:
            try:
                data = conn.recv(65536)
            except OSError:
                return
            if not data:
                return
            with self._lock:
                self.received += data

    def seen(self) -> bytes:
        with self._lock:
            return bytes(self.received)

    def release(self) -> None:
        self.released.set()
        with self._lock:
            for conn in self._conns:
                conn.close()
        self.sock.close()


def _call(app: ProxyApp, method: str, path: str, body: bytes, on_reply: Any) -> list[dict[str, Any]]:
    """One ASGI request to ``app``; ``on_reply()`` runs when the answer's last part is sent."""
    sent: list[dict[str, Any]] = []
    scope = {"type": "http", "method": method, "path": path, "query_string": b"",
             "headers": [(b"content-type", b"application/json")]}
    parts = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if parts:
            return parts.pop()
        await asyncio.Event().wait()  # the client stays
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body"):
            on_reply()

    asyncio.run(app(scope, receive, send))
    return sent


def test_a_refused_request_is_answered_while_its_count_waits_on_a_blackholed_redis():
    hole = Blackhole()
    # the redis client would wait 60 s; the blackhole lets go after 20 (only so a proxy that
    # waits on the event loop ends this test, failing it)
    store = RedisStore(hole.url, timeout_s=60)
    timer = threading.Timer(20, hole.release)
    timer.start()
    try:
        app = ProxyApp(ProxySettings(), store)
        released_at_reply: list[bool] = []
        sent = _call(app, "POST", "/v1/messages", b"{not json", lambda: released_at_reply.append(hole.released.is_set()))
        assert sent[0]["status"] == 400 and b"not valid JSON" in sent[-1]["body"]
        # answered while the blackhole still held the store: the event loop did not wait for it
        assert released_at_reply == [False]
        while not hole.seen():  # the count did go out, from the writer thread, and hangs there
            threading.Event().wait(0.01)
    finally:
        timer.cancel()
        hole.release()
    store.close()


def test_once_redis_is_found_away_no_request_waits_for_it(monkeypatch, capsys):
    monkeypatch.setattr(redis_store, "RETRY_S", 0.05)
    hole = Blackhole()
    store = RedisStore(hole.url, timeout_s=0.3)
    try:
        store.forwarded("unchanged", "c1", 1, 1)  # waits its timeout once: Redis is found away
        assert store.down()
        before = hole.seen()
        for _ in range(50):
            store.forwarded("unchanged", "c1", 1, 1)
            store.count("requests")
            assert store.summary_for(["", "h1", "h2"]) is None and store.mask_step(["", "h1"]) == 0
            assert store.claim("summary:h1", 30) == "unavailable" and not store.locked("summary:h1")
            store.record_summary("h1", "h2", 2, "dropped", 1, 1)
        assert store.counters()["requests"] == 0
        # only the prober's pings went out after it was found away, never a request's command
        after = hole.seen()[len(before):].upper()
        assert after.replace(b"*1\r\n$4\r\nPING\r\n", b"") == b""
        assert "cannot be reached" in capsys.readouterr().err
    finally:
        hole.release()
        store.close()
