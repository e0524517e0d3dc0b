"""`pipeline proxy` as a transport: the real command on a free loopback port, real upstreams on 127.0.0.1.

Routes as each client expects them, bytes and credentials passed through, streaming chunk by
chunk, a client that goes away cancelling the upstream call, every failure in the client's
provider shape, the token beyond loopback, start and stop.
"""

from __future__ import annotations

import json
import signal
import socket
import sqlite3
import threading
import time
from pathlib import Path

import httpx
import pytest

from pipeline.llm.wire import sse
from pipeline.proxy.shapes import error_event

from .proxyrun import ProxyProcess
from .rawservers import serve_each
from .upstream import RecordingUpstream, json_answer

ANTHROPIC_BODY = b'{"model":"claude-x","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}'
OPENAI_BODY = b'{"model":"gpt-x",  "messages":[{"role":"user","content":"hi"}]}'


@pytest.fixture()
def upstream():
    with RecordingUpstream() as server:
        yield server


def _proxy(tmp_path: Path, upstream: RecordingUpstream, *extra: str) -> ProxyProcess:
    return ProxyProcess("--anthropic-url", upstream.url, "--openai-url", upstream.url + "/v1",
                        "--gemini-url", upstream.url, *extra, store=tmp_path / "store.sqlite3")


def test_routes_reach_each_providers_path_with_the_clients_bytes_and_credentials(tmp_path, upstream):
    calls = [
        ("POST", "/v1/messages", ANTHROPIC_BODY, {"x-api-key": "sk-ant-secret", "anthropic-version": "2023-06-01"},
         "/v1/messages"),
        ("POST", "/v1/messages/count_tokens", ANTHROPIC_BODY, {"x-api-key": "k"}, "/v1/messages/count_tokens"),
        ("POST", "/v1/chat/completions", OPENAI_BODY, {"authorization": "Bearer sk-live-1"}, "/v1/chat/completions"),
        ("POST", "/v1/responses", b'{"model":"m","input":"hi"}', {"authorization": "Bearer t"}, "/v1/responses"),
        ("POST", "/v1beta/models/gemini-x:streamGenerateContent?alt=sse", b'{"contents":[]}',
         {"x-goog-api-key": "g"}, "/v1beta/models/gemini-x:streamGenerateContent?alt=sse"),
        ("GET", "/v1/models", b"", {"authorization": "Bearer t"}, "/v1/models"),
        ("GET", "/v1beta/models", b"", {"x-goog-api-key": "g"}, "/v1beta/models"),
    ]
    with _proxy(tmp_path, upstream) as proxy:
        for method, path, body, headers, _ in calls:
            answer = httpx.request(method, proxy.url + path, content=body, headers=headers, timeout=30)
            assert answer.status_code == 200, answer.text
            assert answer.headers["x-upstream"] == "recording"
    seen = upstream.recorder.seen
    assert [(s.method, s.path) for s in seen] == [(c[0], c[4]) for c in calls]
    for (_, _, body, headers, _), got in zip(calls, seen):
        assert got.raw == body  # byte for byte: spacing and key order kept
        for name, value in headers.items():
            assert got.headers[name] == value


def test_stats_count_requests_and_survive_a_restart(tmp_path, upstream):
    for _ in range(2):
        with _proxy(tmp_path, upstream) as proxy:
            httpx.post(proxy.url + "/v1/chat/completions", content=OPENAI_BODY, timeout=30)
            stats = httpx.get(proxy.url + "/_pipeline/stats", timeout=30).json()
    assert stats["requests"] == 2 and stats["unchanged"] == 2
    assert {"requests", "unchanged", "compactions", "summaries_reused"} <= set(stats)
    assert all(isinstance(v, int) for v in stats.values())


def test_the_proxy_runs_on_uvloop_and_httptools_where_installed(tmp_path, upstream):
    """The [proxy] extra installs both (tests install it); the serving process has them loaded."""
    with _proxy(tmp_path, upstream) as proxy:
        assert httpx.post(proxy.url + "/v1/chat/completions", content=OPENAI_BODY, timeout=30).status_code == 200
        assert proxy.proc is not None
        loaded = Path(f"/proc/{proxy.proc.pid}/maps").read_text()
    assert "/uvloop/" in loaded and "/httptools/" in loaded


def _streaming_upstream(release: threading.Event, gone: threading.Event):
    """First chunk, then a comment line every 50 ms until ``release`` (then the second chunk) or until
    writing fails because the proxy closed its side (then ``gone``); at most 20 s."""
    def answer(handler, seen) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("connection", "close")
        handler.end_headers()
        try:
            handler.wfile.write(b"data: first\n\n")
            handler.wfile.flush()
            for _ in range(400):
                if release.is_set():
                    handler.wfile.write(b"data: second\n\n")
                    handler.wfile.flush()
                    return
                time.sleep(0.05)
                handler.wfile.write(b": ping\n\n")
                handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            gone.set()
    return answer


def test_streaming_passes_each_chunk_as_it_comes(tmp_path, upstream):
    release, gone = threading.Event(), threading.Event()
    upstream.recorder.answer = _streaming_upstream(release, gone)
    with _proxy(tmp_path, upstream) as proxy:
        with httpx.stream("POST", proxy.url + "/v1/chat/completions", content=OPENAI_BODY, timeout=30) as answer:
            chunks = answer.iter_raw()
            first = next(chunks)
            assert first == b"data: first\n\n"  # arrived while the upstream still holds the rest back
            release.set()
            rest = b"".join(chunks)
            assert rest.endswith(b"data: second\n\n")
            assert set(rest[: -len(b"data: second\n\n")].split(b"\n\n")) <= {b": ping", b""}
    assert not gone.is_set()


def test_a_client_that_goes_away_cancels_the_upstream_call(tmp_path, upstream):
    release, gone = threading.Event(), threading.Event()
    upstream.recorder.answer = _streaming_upstream(release, gone)
    with _proxy(tmp_path, upstream) as proxy:
        with httpx.stream("POST", proxy.url + "/v1/messages", content=ANTHROPIC_BODY, timeout=30) as answer:
            assert next(answer.iter_raw()) == b"data: first\n\n"
        # the client closed its connection; the proxy must close its upstream connection
        assert gone.wait(20), "the upstream kept streaming to the proxy after the client left"
        assert httpx.get(proxy.url + "/_pipeline/stats", timeout=30).status_code == 200  # still serving


@pytest.mark.parametrize("path,shape", [
    ("/v1/messages", lambda b: b["type"] == "error" and b["error"]["type"] == "invalid_request_error"),
    ("/v1/chat/completions", lambda b: b["error"]["type"] == "invalid_request_error"),
    ("/v1beta/models/g:generateContent", lambda b: b["error"]["status"] == "INVALID_ARGUMENT"),
])
def test_malformed_json_is_answered_in_the_providers_shape(tmp_path, upstream, path, shape):
    with _proxy(tmp_path, upstream) as proxy:
        answer = httpx.post(proxy.url + path, content=b'{"model": "m",\n "messages": [', timeout=30)
        assert answer.status_code == 400
        body = answer.json()
        assert shape(body)
        assert "line 2" in json.dumps(body)
        assert httpx.post(proxy.url + path, content=b"[1, 2]", timeout=30).status_code == 400
    assert upstream.recorder.seen == []  # nothing forwarded


def test_oversized_bodies_are_refused_without_reaching_the_upstream(tmp_path, upstream):
    with _proxy(tmp_path, upstream, "--max-body", "1000") as proxy:
        answer = httpx.post(proxy.url + "/v1/messages", content=b"x" * 5000, timeout=30)
        assert answer.status_code == 413
        assert answer.json()["error"]["type"] == "request_too_large"
        assert httpx.post(proxy.url + "/v1/messages", content=ANTHROPIC_BODY, timeout=30).status_code == 200
    assert len(upstream.recorder.seen) == 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_upstream_that_is_down_is_a_502_in_the_providers_shape(tmp_path):
    dead = f"http://127.0.0.1:{_free_port()}"
    with ProxyProcess("--anthropic-url", dead, "--openai-url", dead + "/v1", store=tmp_path / "s.sqlite3") as proxy:
        answer = httpx.post(proxy.url + "/v1/messages", content=ANTHROPIC_BODY,
                            headers={"x-api-key": "sk-ant-do-not-print"}, timeout=30)
        assert answer.status_code == 502
        assert answer.json()["type"] == "error" and "cannot reach the upstream" in answer.json()["error"]["message"]
        openai = httpx.post(proxy.url + "/v1/chat/completions", content=OPENAI_BODY, timeout=30)
        assert openai.status_code == 502 and openai.json()["error"]["type"] == "server_error"
        stats = httpx.get(proxy.url + "/_pipeline/stats", timeout=30).json()
        assert stats["upstream_errors"] == 2
    assert not any("sk-ant-do-not-print" in line for line in proxy.stderr_lines)


def test_a_silent_upstream_is_a_504_after_the_profiles_timeout(tmp_path, upstream):
    profile = tmp_path / "quick.yaml"
    profile.write_text("extends: builtin:default\nsummarizer:\n  timeout_s: 1\n")

    def silent(handler, seen) -> None:
        time.sleep(4)

    upstream.recorder.answer = silent
    with _proxy(tmp_path, upstream, str(profile)) as proxy:
        answer = httpx.post(proxy.url + "/v1/chat/completions", content=OPENAI_BODY, timeout=30)
        assert answer.status_code == 504
        assert "did not answer in time" in answer.json()["error"]["message"]


def _deadline_profile(tmp_path: Path) -> Path:
    """Silent for 1 s at most, whole within 2 s."""
    profile = tmp_path / "deadlines.yaml"
    profile.write_text("extends: builtin:default\nsummarizer:\n  timeout_s: 1\n  call_deadline_s: 2\n")
    return profile


def _chunk(handler, data: bytes) -> None:
    handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
    handler.wfile.flush()


def _trickle(kind: str):
    """An answer of content-type ``kind`` in chunks every half second for 6 s: never silent for
    the idle deadline, never done within the call deadline."""
    def answer(handler, seen) -> None:
        handler.send_response(200)
        handler.send_header("content-type", kind)
        handler.send_header("transfer-encoding", "chunked")
        handler.end_headers()
        try:
            for _ in range(12):
                _chunk(handler, b'event: ping\ndata: {"type": "ping"}\n\n' if "event" in kind else b" ")
                time.sleep(0.5)
            handler.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass  # the proxy hung up at its deadline
    return answer


def test_a_stream_that_trickles_past_the_call_deadline_ends_with_an_error_event_in_the_providers_shape(
        tmp_path, upstream):
    upstream.recorder.answer = _trickle("text/event-stream")
    body = b'{"model":"claude-x","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}'
    with _proxy(tmp_path, upstream, str(_deadline_profile(tmp_path))) as proxy:
        started = time.monotonic()
        with httpx.stream("POST", proxy.url + "/v1/messages", content=body, timeout=30) as answer:
            assert answer.status_code == 200
            text = b"".join(answer.iter_bytes()).decode()
        took = time.monotonic() - started
        upstream.recorder.answer = None
        assert httpx.post(proxy.url + "/v1/messages", content=ANTHROPIC_BODY, timeout=30).status_code == 200
        stats = httpx.get(proxy.url + "/_pipeline/stats", timeout=30).json()
    frames = text.strip().split("\n\n")
    assert frames[:2] == ['event: ping\ndata: {"type": "ping"}'] * 2  # what came before the deadline, as it came
    name, data = frames[-1].split("\n", 1)
    error = json.loads(data.removeprefix("data: "))
    assert name == "event: error" and error["type"] == "error" and error["error"]["type"] == "timeout_error"
    assert "within 2 s" in error["error"]["message"] and "summarizer.call_deadline_s" in error["error"]["message"]
    assert 1.5 < took < 5
    assert stats["upstream_errors"] == 1
    assert not [line for line in proxy.stderr_lines if "ERROR" in line or "Traceback" in line]


def test_an_answer_cut_after_its_head_reaches_the_client_short_never_whole_looking(tmp_path, upstream):
    """A JSON answer framed by its length that the upstream breaks off, and one sent in chunks that
    trickles past the call deadline: the client's library sees a body that ended early; the
    proxy prints no traceback and keeps serving."""
    def broken(handler, seen) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", "100")
        handler.end_headers()
        handler.wfile.write(b'{"id":')
        handler.close_connection = True

    with _proxy(tmp_path, upstream, str(_deadline_profile(tmp_path))) as proxy:
        for answer in (broken, _trickle("application/json")):
            upstream.recorder.answer = answer
            with pytest.raises(httpx.RemoteProtocolError):
                httpx.post(proxy.url + "/v1/chat/completions", content=OPENAI_BODY, timeout=30)
        upstream.recorder.answer = None
        assert httpx.post(proxy.url + "/v1/chat/completions", content=OPENAI_BODY, timeout=30).status_code == 200
        stats = httpx.get(proxy.url + "/_pipeline/stats", timeout=30).json()
    assert stats["upstream_errors"] == 2
    assert not [line for line in proxy.stderr_lines if "ERROR" in line or "Traceback" in line]


def test_a_stream_the_upstream_breaks_off_ends_with_a_502_event_and_an_answer_too_slow_to_start_is_a_504(
        tmp_path, upstream):
    """An event stream whose upstream closes the connection mid-chunk: the client's last event is
    the error (502, naming the break); with a call deadline shorter than the silence allowed, an
    upstream that says nothing is a 504 naming the call deadline, not the silence."""
    def broken(handler, seen) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("transfer-encoding", "chunked")
        handler.end_headers()
        _chunk(handler, b'event: ping\ndata: {"type": "ping"}\n\n')
        handler.wfile.write(b"40\r\nevent: ping")  # a chunk cut short, then the connection ends
        handler.close_connection = True

    def silent(handler, seen) -> None:
        time.sleep(3)

    profile = tmp_path / "short-call.yaml"
    profile.write_text("extends: builtin:default\nsummarizer:\n  timeout_s: 30\n  call_deadline_s: 1\n")
    body = b'{"model":"claude-x","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}'
    with _proxy(tmp_path, upstream, str(profile)) as proxy:
        upstream.recorder.answer = broken
        with httpx.stream("POST", proxy.url + "/v1/messages", content=body, timeout=30) as answer:
            text = b"".join(answer.iter_bytes()).decode()
        upstream.recorder.answer = silent
        late = httpx.post(proxy.url + "/v1/messages", content=ANTHROPIC_BODY, timeout=30)
    name, data = text.strip().split("\n\n")[-1].split("\n", 1)
    error = json.loads(data.removeprefix("data: "))
    assert name == "event: error" and error["error"]["type"] == "api_error"
    assert "broke off its answer" in error["error"]["message"]
    assert late.status_code == 504 and late.json()["error"]["type"] == "timeout_error"
    assert "within 1 s" in late.json()["error"]["message"]
    assert not [line for line in proxy.stderr_lines if "ERROR" in line or "Traceback" in line]


def test_a_cookie_the_upstream_sets_goes_to_that_client_and_never_with_another_request(tmp_path, upstream):
    """The proxy's one upstream client is shared by every agent: it keeps no cookie jar."""
    def with_cookie(handler, seen) -> None:
        json_answer(handler, 200, b'{"ok":true}', ("set-cookie", "__cf_bm=first-clients; Path=/"))

    upstream.recorder.answer = with_cookie
    with _proxy(tmp_path, upstream) as proxy:
        first = httpx.post(proxy.url + "/v1/chat/completions", content=OPENAI_BODY, timeout=30)
        httpx.post(proxy.url + "/v1/chat/completions", content=OPENAI_BODY, timeout=30)
    assert first.headers["set-cookie"].startswith("__cf_bm=first-clients")
    assert [seen.headers.get("cookie") for seen in upstream.recorder.seen] == [None, None]


def test_upstream_errors_pass_through_as_they_came(tmp_path, upstream):
    def overloaded(handler, seen) -> None:
        json_answer(handler, 529, b'{"type":"error","error":{"type":"overloaded_error","message":"busy"}}')

    upstream.recorder.answer = overloaded
    with _proxy(tmp_path, upstream) as proxy:
        answer = httpx.post(proxy.url + "/v1/messages", content=ANTHROPIC_BODY, timeout=30)
        assert answer.status_code == 529
        assert answer.json()["error"]["type"] == "overloaded_error"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_one_line_when_ready_and_exit_0_on_a_signal(tmp_path, upstream, sig):
    proxy = _proxy(tmp_path, upstream).start()
    assert proxy.stderr_lines == [f"pipeline proxy: listening on {proxy.url}"]
    assert httpx.get(proxy.url + "/_pipeline/stats", timeout=30).status_code == 200
    assert proxy.stop(sig) == 0
    assert len(proxy.stderr_lines) == 1, proxy.stderr_lines


def test_beyond_loopback_the_proxy_needs_a_token(tmp_path, upstream, monkeypatch):
    refused = _proxy(tmp_path, upstream, "--listen", "0.0.0.0:0")
    with pytest.raises(AssertionError):
        refused.start()
    assert any("--token-env" in line for line in refused.stderr_lines)
    assert refused.proc is not None and refused.proc.returncode == 1

    env = {**__import__("os").environ, "PROXY_TOKEN": "tok-123"}
    proxy = ProxyProcess("--anthropic-url", upstream.url, "--listen", "0.0.0.0:0", "--token-env", "PROXY_TOKEN",
                         store=tmp_path / "t.sqlite3", env=env).start()
    try:
        url = proxy.url.replace("0.0.0.0", "127.0.0.1")
        denied = httpx.post(url + "/v1/messages", content=ANTHROPIC_BODY, timeout=30)
        assert denied.status_code == 401 and denied.json()["type"] == "error"
        allowed = httpx.post(url + "/v1/messages", content=ANTHROPIC_BODY, timeout=30,
                             headers={"x-pipeline-token": "tok-123"})
        assert allowed.status_code == 200
    finally:
        assert proxy.stop() == 0
    assert len(upstream.recorder.seen) == 1
    assert "x-pipeline-token" not in upstream.recorder.seen[0].headers
    assert not any("tok-123" in line for line in proxy.stderr_lines)


def test_a_store_that_is_not_the_proxys_is_a_located_error(tmp_path, upstream):
    foreign = tmp_path / "other.sqlite3"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        db.execute("INSERT INTO meta VALUES ('schema', '99')")
    proxy = ProxyProcess("--anthropic-url", upstream.url, store=foreign)
    with pytest.raises(AssertionError):
        proxy.start()
    assert any(str(foreign) in line and "schema 99" in line for line in proxy.stderr_lines), proxy.stderr_lines
    garbage = tmp_path / "garbage.sqlite3"
    garbage.write_bytes(b"not a database at all" * 100)
    proxy = ProxyProcess("--anthropic-url", upstream.url, store=garbage)
    with pytest.raises(AssertionError):
        proxy.start()
    assert any("not a proxy store" in line for line in proxy.stderr_lines), proxy.stderr_lines
    assert not any("Traceback" in line for line in proxy.stderr_lines)


class _DroppingUpstream:
    """A raw HTTP/1.1 upstream on 127.0.0.1 that keeps connections alive and, for the requests
    named in ``drop`` (1-based, counted over all connections), reads the request whole and then
    closes the connection without a byte of answer: what a kept-alive connection the upstream
    closed as the request went out looks like from the proxy."""

    def __init__(self, drop: set[int]) -> None:
        self.drop, self.count, self.connections = drop, 0, 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        serve_each(self.sock, self._serve, self._count)

    def _count(self) -> None:
        self.connections += 1

    def _serve(self, conn: socket.socket) -> None:
        reader = conn.makefile("rb")
        with conn:
            while True:
                head = b""
                while not head.endswith(b"\r\n\r\n"):
                    line = reader.readline()
                    if not line:
                        return
                    head += line
                length = int(next((l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")), b"0"))
                reader.read(length)
                self.count += 1
                if self.count in self.drop:
                    return  # closed, nothing answered
                answer = b'{"ok":true}'
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
                             % (len(answer), answer))

    def close(self) -> None:
        self.sock.close()


def test_a_kept_alive_connection_the_upstream_dropped_is_retried_once_on_a_new_one(tmp_path):
    upstream = _DroppingUpstream(drop={2})
    try:
        with ProxyProcess("--anthropic-url", upstream.url, store=tmp_path / "store.sqlite3") as proxy:
            with httpx.Client(timeout=30) as client:
                answers = [client.post(proxy.url + "/v1/messages", content=ANTHROPIC_BODY, headers={"x-api-key": "k"})
                           for _ in range(3)]
        assert [a.status_code for a in answers] == [200, 200, 200]
        assert upstream.count == 4 and upstream.connections == 2  # the dropped one sent again, on a new connection
    finally:
        upstream.close()


def test_an_upstream_that_drops_the_request_twice_is_a_502_in_the_clients_shape(tmp_path):
    upstream = _DroppingUpstream(drop={1, 2})
    try:
        with ProxyProcess("--anthropic-url", upstream.url, store=tmp_path / "store.sqlite3") as proxy:
            answer = httpx.post(proxy.url + "/v1/messages", content=ANTHROPIC_BODY, headers={"x-api-key": "k"}, timeout=30)
        assert answer.status_code == 502
        assert answer.json()["type"] == "error" and "RemoteProtocolError" in answer.json()["error"]["message"]
        assert upstream.count == 2  # sent twice, never more
    finally:
        upstream.close()


@pytest.mark.parametrize("provider, shape", [
    ("anthropic", lambda data: data["type"] == "error" and data["error"]["type"] == "timeout_error"),
    ("openai", lambda data: data["error"]["type"] == "server_error" and data["error"]["message"]),
    ("gemini", lambda data: data["error"]["status"] == "DEADLINE_EXCEEDED" and data["error"]["code"] == 504),
])
def test_a_streams_last_event_carries_the_error_as_the_providers_sdks_read_it(provider, shape):
    """Anthropic's SDKs raise on ``event: error``; OpenAI's and Google's on a payload holding ``error``."""
    frame = error_event(provider, 504, "too slow").decode()
    assert frame.startswith("event: error\ndata: ") and frame.endswith("\n\n") and frame.count("\n") == 3
    [data] = list(sse.frames(frame.splitlines()))
    assert shape(data)
    assert "too slow" in json.dumps(data)
