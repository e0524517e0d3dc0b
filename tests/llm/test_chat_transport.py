"""The agent-turn transport (``pipeline.llm.post`` under ``ChatClient``) against a real HTTP
server on 127.0.0.1: one connection kept between turns, a connection the server closed while
idle replaced, event-stream lines split as httpx split them, a URL's user info sent as Basic
credentials, and each timeout named."""

from __future__ import annotations

import base64
import json
import socket
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pipeline.llm.chat import ChatClient
from pipeline.runtime.host import ModelInfo

MODEL = ModelInfo(id="m", provider="openai", api="openai-completions", context_window=1000, max_tokens=10)
BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}


def _events(text: str) -> list[bytes]:
    """An OpenAI event stream answering ``text``, one piece per frame."""
    frames = [{"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]},
              {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]
    return [f"data: {json.dumps(f)}\n\n".encode() for f in frames] + [b"data: [DONE]\n\n"]


class Server(ThreadingHTTPServer):
    """Answers each POST with ``pieces`` (chunked, one chunk each; else as one body with its
    ``content-length``); records the connections
    (client ports) and headers it saw. ``close_after``: drop the connection after the answer
    without saying so (a server that closes idle connections)."""

    daemon_threads = True

    def __init__(self, pieces: list[bytes], *, close_after: bool = False, delay: float = 0.0,
                 chunked: bool = True, tls: ssl.SSLContext | None = None) -> None:
        self.pieces, self.close_after, self.delay, self.chunked = pieces, close_after, delay, chunked
        self.ports: list[int] = []
        self.headers: list[dict[str, str]] = []
        self.release = threading.Event()
        super().__init__(("127.0.0.1", 0), Handler)
        self.scheme = "http"
        if tls is not None:
            self.socket, self.scheme = tls.wrap_socket(self.socket, server_side=True), "https"
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def url(self, userinfo: str = "") -> str:
        return f"{self.scheme}://{userinfo}127.0.0.1:{self.server_address[1]}/v1"

    def stop(self) -> None:
        self.release.set()
        self.shutdown()
        self.server_close()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Server

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["content-length"]))
        self.server.ports.append(self.client_address[1])
        self.server.headers.append({k.lower(): v for k, v in self.headers.items()})
        if self.server.delay:
            self.server.release.wait(self.server.delay)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        if not self.server.chunked:
            body = b"".join(self.server.pieces)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = self.server.close_after
            return
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for piece in self.server.pieces:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.close_connection = self.server.close_after


@pytest.fixture
def serve():
    started: list[Server] = []

    def make(pieces: list[bytes], **options) -> Server:
        started.append(Server(pieces, **options))
        return started[-1]

    yield make
    for server in started:
        server.stop()


def _client(url: str, **options) -> ChatClient:
    return ChatClient("openai", model=MODEL.target(), aborted_text="aborted", base_url=url,
                      env={"OPENAI_API_KEY": "sk-test-key"}, **options)


def _text(reply: dict) -> str:
    assert reply["stopReason"] == "stop", reply.get("errorMessage")
    return "".join(block["text"] for block in reply["content"] if block["type"] == "text")


@pytest.mark.parametrize("chunked", [True, False], ids=["chunked", "content-length"])
def test_turns_share_one_connection(serve, chunked):
    server = serve(_events("hello"), chunked=chunked)
    client = _client(server.url())
    try:
        assert [_text(client.send(BODY)) for _ in range(3)] == ["hello"] * 3
    finally:
        client.close()
    assert len(server.ports) == 3 and len(set(server.ports)) == 1


def test_a_closed_client_keeps_no_connection(serve):
    server = serve(_events("one"))
    client = _client(server.url())
    assert _text(client.send(BODY)) == "one"
    client.close()
    assert _text(client.send(BODY)) == "one"  # a request after close opens a connection of its own
    client.close()
    assert len(set(server.ports)) == 2 and client._poster._idle is None


def test_a_connection_the_server_closed_is_replaced(serve):
    server = serve(_events("again"), close_after=True)
    client = _client(server.url())
    try:
        assert [_text(client.send(BODY)) for _ in range(2)] == ["again", "again"]
    finally:
        client.close()
    assert len(server.ports) == 2 and len(set(server.ports)) == 2


def test_lines_are_split_across_chunks_as_httpx_split_them(serve):
    frame = json.dumps({"choices": [{"index": 0, "delta": {"content": "split é"}, "finish_reason": None}]}, ensure_ascii=False).encode()
    stop = json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}).encode()
    encoded = "é".encode()
    head, tail = frame.split(encoded)
    pieces = [b"data: " + head + encoded[:1], encoded[1:] + tail + b"\r", b"\n\r", b"\ndata: " + stop + b"\r\r",
              b"data: [DONE]"]
    server = serve(pieces)
    client = _client(server.url())
    try:
        assert _text(client.send(BODY)) == "split é"  # a character and a \r\n cut in two; bare \r ends a line
    finally:
        client.close()


def test_user_info_in_the_url_is_sent_as_basic_credentials(serve):
    server = serve(_events("ok"))
    client = _client(server.url("alice:s%40cret@"))
    try:
        assert _text(client.send(BODY)) == "ok"
    finally:
        client.close()
    sent = server.headers[0]
    assert sent["authorization"] == "Basic " + base64.b64encode(b"alice:s@cret").decode()
    assert sent["accept-encoding"] == "identity" and sent["content-type"] == "application/json"
    assert sent["user-agent"].startswith("context-pipeline/")


def test_a_silent_server_is_a_read_timeout(serve):
    server = serve(_events("late"), delay=5)
    client = _client(server.url(), timeout=0.3)
    try:
        reply = client.send(BODY)
    finally:
        client.close()
    assert reply["stopReason"] == "error"
    assert reply["errorMessage"] == f"openai: timed out after 0.3s waiting for {server.url()}/chat/completions (ReadTimeout)"


def test_a_refused_connection_is_a_connection_error():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = _client(f"http://127.0.0.1:{port}/v1")
    try:
        reply = client.send(BODY)
    finally:
        client.close()
    assert reply["stopReason"] == "error"
    assert reply["errorMessage"].startswith(f"openai: connection error to http://127.0.0.1:{port}/v1/chat/completions: ")
    assert "refused" in reply["errorMessage"].lower()


def test_a_port_that_is_no_number_is_a_connection_error_of_the_turn():
    client = _client("http://127.0.0.1:12ab/v1")
    reply = client.send(BODY)
    assert reply["stopReason"] == "error" and "connection error to http://127.0.0.1:12ab/v1/chat/completions: " in (
        reply["errorMessage"]) and "12ab" in reply["errorMessage"]


def test_an_httpx_transport_is_refused():
    with pytest.raises(ValueError, match="http.client"):
        _client("http://127.0.0.1:9/v1", transport=object())


@pytest.fixture
def certificate(tmp_path):
    """A self-signed certificate for 127.0.0.1 (openssl), and the server's TLS context holding it."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return cert, context


def test_https_is_verified_against_ssl_cert_file(serve, certificate, monkeypatch):
    cert, context = certificate
    server = serve(_events("secure"), tls=context)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    client = _client(server.url())
    try:
        assert [_text(client.send(BODY)) for _ in range(2)] == ["secure", "secure"]
    finally:
        client.close()
    assert len(set(server.ports)) == 1  # the TLS connection is kept too


def test_an_untrusted_certificate_is_a_connection_error(serve, certificate, monkeypatch):
    server = serve(_events("never"), tls=certificate[1])
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)  # certifi's bundle: the self-signed one is not in it
    client = _client(server.url())
    try:
        reply = client.send(BODY)
    finally:
        client.close()
    assert reply["stopReason"] == "error" and "connection error to https://127.0.0.1" in reply["errorMessage"]
    assert "CERTIFICATE_VERIFY_FAILED" in reply["errorMessage"] and server.ports == []
