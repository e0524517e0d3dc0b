"""Raw servers on 127.0.0.1 for the upstream client's tests: an HTTP/1.1 server whose every
answer a test writes byte by byte (optionally over TLS with a self-signed certificate), and an
HTTP proxy that tunnels ``CONNECT`` and forwards absolute-form requests, recording what it saw."""

from __future__ import annotations

import socket
import ssl
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional


@dataclass(frozen=True)
class Certificate:
    cert: Path
    key: Path


def self_signed(folder: Path) -> Certificate:
    """A certificate for 127.0.0.1 and localhost, made by the openssl command."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, capture_output=True)
    return Certificate(cert, key)


@dataclass
class Request:
    head: bytes
    body: bytes

    @property
    def line(self) -> str:
        return self.head.split(b"\r\n", 1)[0].decode("latin-1")

    def header(self, name: str) -> Optional[str]:
        for line in self.head.decode("latin-1").split("\r\n")[1:]:
            key, _, value = line.partition(":")
            if key.strip().lower() == name:
                return value.strip()
        return None

    @property
    def names(self) -> list[str]:
        return [line.partition(":")[0].lower() for line in self.head.decode("latin-1").split("\r\n")[1:] if line]


def read_request(reader) -> Optional[Request]:
    """One request's head and content-length body from a socket file, None at the end."""
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        line = reader.readline()
        if not line:
            return None
        head += line
    request = Request(head, b"")
    request.body = reader.read(int(request.header("content-length") or 0))
    return request


#: answers one request on a connection: (socket, its file, the request) -> keep the connection open?
Answerer = Callable[[socket.socket, object, Request], bool]


def serve_each(sock: socket.socket, serve: Callable[[socket.socket], None],
               accepted: Callable[[], None] = lambda: None) -> None:
    """Accept connections on ``sock`` until it is closed, each served by ``serve`` in a thread of
    its own (``accepted`` is told of each first)."""
    while True:
        try:
            conn, _ = sock.accept()
        except OSError:
            return
        accepted()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


@dataclass
class RawServer:
    """Serves each connection in a thread; ``answer`` writes each request's answer."""

    answer: Answerer
    tls: Optional[Certificate] = None
    requests: list[Request] = field(default_factory=list)
    connections: int = 0

    def __post_init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.context: Optional[ssl.SSLContext] = None
        if self.tls is not None:
            self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.context.load_cert_chain(self.tls.cert, self.tls.key)
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        serve_each(self.sock, self._serve, self._count)

    def _count(self) -> None:
        self.connections += 1

    def _serve(self, conn: socket.socket) -> None:
        try:
            if self.context is not None:
                conn = self.context.wrap_socket(conn, server_side=True)
            reader = conn.makefile("rb")
            with conn:
                while True:
                    request = read_request(reader)
                    if request is None:
                        return
                    self.requests.append(request)
                    if not self.answer(conn, reader, request):
                        return
        except (OSError, ssl.SSLError):
            return

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "RawServer":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def ok(conn: socket.socket, reader: object, request: Request) -> bool:
    """200 with a small JSON body and its content-length; the connection kept."""
    body = b'{"ok":true}'
    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
    return True


class ForwardProxy:
    """An HTTP proxy on 127.0.0.1: ``CONNECT host:port`` tunnels, an absolute-form request is
    sent on in origin form; each connection's first request head is kept in ``seen``."""

    def __init__(self, refuse: Optional[int] = None) -> None:
        """``refuse``: a status every ``CONNECT`` is answered with instead of a tunnel."""
        self.seen: list[Request] = []
        self.refuse = refuse
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        serve_each(self.sock, self._serve)

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            head = b""
            while not head.endswith(b"\r\n\r\n"):  # byte by byte: nothing past the head is read here
                byte = conn.recv(1)
                if not byte:
                    return
                head += byte
            request = Request(head, b"")
            self.seen.append(request)
            method, target, _ = request.line.split(" ")
            if method == "CONNECT" and self.refuse is not None:
                conn.sendall(b"HTTP/1.1 %d Refused\r\ncontent-length: 0\r\n\r\n" % self.refuse)
                return
            if method == "CONNECT":
                host, port = target.rsplit(":", 1)
                onward = socket.create_connection((host, int(port)))
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                authority, _, path = target.split("://", 1)[1].partition("/")
                host, port = authority.rsplit(":", 1)
                onward = socket.create_connection((host, int(port)))
                onward.sendall(head.replace(target.encode(), b"/" + path.encode(), 1))
            _relay(conn, onward)


def _relay(a: socket.socket, b: socket.socket) -> None:
    def pump(src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    other = threading.Thread(target=pump, args=(b, a), daemon=True)
    other.start()
    pump(a, b)
    other.join(30)
    b.close()
