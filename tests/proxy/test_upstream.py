"""The proxy's upstream client (pipeline/proxy/upstream.py) against real servers on 127.0.0.1:
pooling, the one retry, the answer's three framings streamed piece by piece, deadlines, TLS
with a self-signed certificate the trust store is told of, and the environment's proxies.
The whole command over it is tests/proxy/test_transport.py's."""

from __future__ import annotations

import asyncio
import base64
import threading
import time
import httpx
import pytest

from pipeline.proxy.upstream import (AnswerTimeout, ConnectError, ProxyNotSupported, ProxyRefused, RemoteProtocolError,
                                     UpstreamPool, UpstreamTimeout)

from .proxyrun import ProxyProcess
from .rawservers import Certificate, ForwardProxy, RawServer, ok, self_signed

BODY = b'{"model":"m","messages":[]}'


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> Certificate:
    return self_signed(tmp_path_factory.mktemp("tls"))


def call(pool: UpstreamPool, url: str, headers=(), body: bytes = BODY, method: str = "POST") -> tuple[int, bytes]:
    """One request through ``pool``; its status and whole body."""
    async def run() -> tuple[int, bytes]:
        answer = await pool.request(method, url, list(headers), body)
        try:
            return answer.status, b"".join([piece async for piece in answer.chunks()])
        finally:
            answer.release()
    return asyncio.run(run())


def pool(environ=None, idle: float = 10.0, answer: float = float("inf")) -> UpstreamPool:
    return UpstreamPool(connect_timeout=5.0, idle_timeout=idle, environ={} if environ is None else environ,
                        answer_timeout=answer)


def test_the_clients_headers_go_out_as_they_came_with_only_host_and_length_added():
    with RawServer(ok) as server:
        headers = [("x-api-key", "sk-ant-secret"), ("authorization", "Bearer t"), ("anthropic-version", "2023-06-01")]
        assert call(pool(), server.url + "/v1/messages?beta=true", headers) == (200, b'{"ok":true}')
    seen = server.requests[0]
    assert seen.line == "POST /v1/messages?beta=true HTTP/1.1"
    assert seen.names == ["host", "x-api-key", "authorization", "anthropic-version", "content-length"]
    assert seen.header("x-api-key") == "sk-ant-secret" and seen.header("host") == f"127.0.0.1:{server.port}"
    assert seen.body == BODY


def test_one_connection_serves_requests_one_after_another():
    with RawServer(ok) as server:
        p = pool()

        async def three() -> list[int]:
            out = []
            for _ in range(3):
                answer = await p.request("POST", server.url + "/x", [], BODY)
                out.append(len(b"".join([c async for c in answer.chunks()])))
                answer.release()
            return out

        assert asyncio.run(three()) == [11, 11, 11]
    assert server.connections == 1 and len(server.requests) == 3


def test_a_kept_alive_connection_the_server_closed_is_not_used_again():
    def once(conn, reader, request) -> bool:
        ok(conn, reader, request)
        return False  # answered as keep-alive, then closed

    with RawServer(once) as server:
        p = pool()

        async def two() -> list[int]:
            out = []
            for _ in range(2):
                answer = await p.request("POST", server.url + "/x", [], BODY)
                [c async for c in answer.chunks()]
                answer.release()
                out.append(answer.status)
                await asyncio.sleep(0.2)  # the server's close arrives
            return out

        assert asyncio.run(two()) == [200, 200]
    assert server.connections == 2 and len(server.requests) == 2


def test_a_connection_that_ends_without_an_answer_twice_is_a_protocol_error_after_one_retry():
    with RawServer(lambda conn, reader, request: False) as server:
        with pytest.raises(RemoteProtocolError):
            call(pool(), server.url + "/x")
    assert len(server.requests) == 2


def test_an_answer_cut_after_its_first_bytes_is_not_sent_again():
    def half(conn, reader, request) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-le")
        return False

    with RawServer(half) as server:
        with pytest.raises(RemoteProtocolError):
            call(pool(), server.url + "/x")
    assert len(server.requests) == 1


def _chunked(release: threading.Event):
    def answer(conn, reader, request) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        conn.sendall(b"d\r\ndata: first\n\n\r\n")
        release.wait(20)
        conn.sendall(b"e\r\ndata: second\n\n\r\n0\r\nx-trailer: t\r\n\r\n")
        return True
    return answer


def test_a_chunked_answer_comes_piece_by_piece_as_the_server_sends_it_and_the_connection_is_kept():
    release = threading.Event()
    with RawServer(_chunked(release)) as server:
        p = pool()

        async def run() -> list[bytes]:
            answer = await p.request("POST", server.url + "/x", [], BODY)
            pieces = answer.chunks()
            first = await pieces.__anext__()  # arrives while the server holds the rest back
            release.set()
            rest = [piece async for piece in pieces]
            answer.release()
            again = await p.request("POST", server.url + "/x", [], BODY)
            [c async for c in again.chunks()]
            again.release()
            return [first, b"".join(rest)]

        assert asyncio.run(run()) == [b"data: first\n\n", b"data: second\n\n"]
        assert server.connections == 1


def test_an_answer_without_length_is_read_until_the_server_closes():
    def until_close(conn, reader, request) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\npart one, ")
        time.sleep(0.1)
        conn.sendall(b"part two")
        return False

    with RawServer(until_close) as server:
        assert call(pool(), server.url + "/x") == (200, b"part one, part two")


def test_a_server_that_trickles_within_the_idle_deadline_is_read_whole():
    def trickle(conn, reader, request) -> bool:
        body = b"0123456789"
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(body))
        for byte in body:  # 1.5 s in all, longer than the deadline; never 0.5 s silent
            time.sleep(0.15)
            conn.sendall(bytes([byte]))
        return True

    with RawServer(trickle) as server:
        assert call(pool(idle=0.5), server.url + "/x") == (200, b"0123456789")


@pytest.mark.parametrize("head, piece", [
    (b"transfer-encoding: chunked", b"1\r\nx\r\n"),
    (b"content-length: 20", b"x"),
], ids=["chunked", "sized"])
def test_a_server_that_trickles_past_the_answer_deadline_is_an_answer_timeout(head, piece):
    """Never silent for the idle deadline, but not done within the exchange's answer deadline
    (the head itself is one wait within the idle deadline)."""
    def trickle(conn, reader, request) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\n%s\r\n\r\n" % head)
        for _ in range(20):
            time.sleep(0.15)
            conn.sendall(piece)
        return False

    with RawServer(trickle) as server:
        started = time.monotonic()
        with pytest.raises(AnswerTimeout):
            call(pool(idle=0.5, answer=1.0), server.url + "/x")
        assert 0.9 < time.monotonic() - started < 2.5


def test_a_server_silent_past_the_idle_deadline_is_a_timeout_for_the_head_and_for_the_body():
    def silent_head(conn, reader, request) -> bool:
        time.sleep(2)
        return False

    def silent_body(conn, reader, request) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n01234")
        time.sleep(2)
        return False

    with RawServer(silent_head) as server:
        with pytest.raises(UpstreamTimeout):
            call(pool(idle=0.5), server.url + "/x")
    with RawServer(silent_body) as server:
        with pytest.raises(UpstreamTimeout):
            call(pool(idle=0.5), server.url + "/x")


def test_https_with_a_certificate_the_trust_store_holds(certificate, monkeypatch):
    with RawServer(ok, tls=certificate) as server:
        with pytest.raises(ConnectError):  # not trusted: the handshake fails
            call(pool(), server.url + "/x")
        monkeypatch.setenv("SSL_CERT_FILE", str(certificate.cert))  # OpenSSL's default paths read it
        assert call(pool(), server.url + "/v1/messages", [("x-api-key", "k")]) == (200, b'{"ok":true}')
    assert server.requests[-1].line == "POST /v1/messages HTTP/1.1"


def test_an_http_upstream_through_the_environments_proxy_is_asked_for_in_absolute_form():
    proxy = ForwardProxy()
    with RawServer(ok) as server:
        environ = {"HTTP_PROXY": proxy.url.replace("://", "://alice:s%40cret@")}
        assert call(pool(environ), server.url + "/v1/chat/completions", [("authorization", "Bearer t")])[0] == 200
    seen = proxy.seen[0]
    assert seen.line == f"POST {server.url}/v1/chat/completions HTTP/1.1"
    assert seen.header("proxy-authorization") == "Basic " + base64.b64encode(b"alice:s@cret").decode()
    assert server.requests[0].header("authorization") == "Bearer t"


def test_an_https_upstream_through_the_environments_proxy_is_tunnelled(certificate, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate.cert))
    proxy = ForwardProxy()
    with RawServer(ok, tls=certificate) as server:
        assert call(pool({"https_proxy": proxy.url}), server.url + "/v1/messages", [("x-api-key", "k")])[0] == 200
    assert proxy.seen[0].line == f"CONNECT 127.0.0.1:{server.port} HTTP/1.1"
    assert server.requests[0].header("x-api-key") == "k"  # inside the tunnel: the proxy never saw it
    assert "x-api-key" not in proxy.seen[0].names


def test_a_tunnel_the_proxy_refuses_is_named_with_its_status(certificate):
    proxy = ForwardProxy(refuse=407)
    with RawServer(ok, tls=certificate) as server:
        with pytest.raises(ProxyRefused) as caught:
            call(pool({"HTTPS_PROXY": proxy.url.replace("://", "://bob:pw@")}), server.url + "/x")
    assert f"refused to CONNECT to 127.0.0.1:{server.port}: status 407" in caught.value.reason()
    assert proxy.seen[0].header("proxy-authorization") == "Basic " + base64.b64encode(b"bob:pw").decode()
    assert server.requests == []


def test_no_proxy_names_hosts_that_are_reached_directly():
    proxy = ForwardProxy()
    with RawServer(ok) as server:
        for no_proxy in ("127.0.0.1", "localhost,127.0.0.0/8", "*", f"127.0.0.1:{server.port}"):
            assert call(pool({"HTTP_PROXY": proxy.url, "NO_PROXY": no_proxy}), server.url + "/x")[0] == 200
        assert call(pool({"HTTP_PROXY": proxy.url, "NO_PROXY": "127.0.0.1:1,example.com"}), server.url + "/x")[0] == 200
    assert len(proxy.seen) == 1 and len(server.requests) == 5


def test_a_proxy_it_cannot_use_is_refused_with_the_variable_named():
    with RawServer(ok) as server:
        with pytest.raises(ProxyNotSupported) as caught:
            call(pool({"ALL_PROXY": "socks5://127.0.0.1:1080"}), server.url + "/x")
    assert "ALL_PROXY names a socks5 proxy" in caught.value.reason() and "http://" in caught.value.reason()
    assert server.requests == []


def test_the_command_reaches_an_https_upstream_through_a_proxy_from_its_environment(tmp_path, certificate):
    proxy = ForwardProxy()
    with RawServer(ok, tls=certificate) as server:
        env = {**__import__("os").environ, "SSL_CERT_FILE": str(certificate.cert), "HTTPS_PROXY": proxy.url,
               "NO_PROXY": ""}
        with ProxyProcess("--anthropic-url", server.url, store=tmp_path / "s.sqlite3", env=env) as running:
            answer = httpx.post(running.url + "/v1/messages", content=BODY, headers={"x-api-key": "sk-ant-k"},
                                timeout=30)
        assert answer.status_code == 200 and answer.json() == {"ok": True}
    assert proxy.seen[0].line == f"CONNECT 127.0.0.1:{server.port} HTTP/1.1"
    assert server.requests[0].header("x-api-key") == "sk-ant-k"
    assert not any("sk-ant-k" in line for line in running.stderr_lines)


def test_the_command_names_an_unusable_proxy_in_the_clients_error_shape(tmp_path):
    with RawServer(ok) as server:
        env = {**__import__("os").environ, "HTTP_PROXY": "socks5://127.0.0.1:1080", "NO_PROXY": ""}
        with ProxyProcess("--anthropic-url", server.url, store=tmp_path / "s.sqlite3", env=env) as running:
            answer = httpx.post(running.url + "/v1/messages", content=BODY, timeout=30)
    assert answer.status_code == 502 and answer.json()["type"] == "error"
    assert "HTTP_PROXY names a socks5 proxy" in answer.json()["error"]["message"]
    assert server.requests == []


def test_a_target_is_escaped_where_it_must_be_and_a_bodiless_get_has_no_length():
    """Characters a request target may not hold raw are escaped; escapes already there are kept."""
    with RawServer(ok) as server:
        assert call(pool(), server.url + "/v1beta/models/a b:streamGenerateContent?alt=sse&k=%2F", method="GET",
                    body=b"")[0] == 200
    assert server.requests[0].line == "GET /v1beta/models/a%20b:streamGenerateContent?alt=sse&k=%2F HTTP/1.1"
    assert "content-length" not in server.requests[0].names
