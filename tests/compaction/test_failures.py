"""Never a half-written entry: failing summarizers, interrupts, a killed process, real HTTP servers."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pipeline.cli import main
from pipeline.compaction.engine import branch_session, compact_session
from pipeline.compaction.summarize import SummaryFailed
from pipeline.llm.errors import LLMConnectionError
from pipeline.session import SessionFile

from .conftest import ROOT, ScriptedClient, default_profile

KEY_ENV = "CP_COMPACTION_TEST_KEY"
LONG = "tests/data/sessions/real/long-coding.jsonl"


class _Server(ThreadingHTTPServer):
    """Answers each POST with the next scripted ``(status, body, headers)``; the last one repeats."""

    daemon_threads = True

    def __init__(self, replies: list[tuple[int, dict, dict]]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.replies, self.seen = replies, []

    def next_reply(self) -> tuple[int, dict, dict]:
        return self.replies[min(len(self.seen), len(self.replies)) - 1]


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("content-length", 0))
        self.server.seen.append((self.path, self.headers.get("authorization"), json.loads(self.rfile.read(length))))
        status, body, headers = self.server.next_reply()
        payload = json.dumps(body).encode()
        self.send_response(status)
        for name, value in {"content-type": "application/json", **headers}.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def http_server():
    servers = []

    def start(status: int, body: dict, *then: tuple[int, dict, dict], headers: dict | None = None) -> _Server:
        server = _Server([(status, body, headers or {}), *then])
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _url(server: _Server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


def _openai_reply(text: str) -> dict:
    return {
        "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1200, "completion_tokens": 80, "total_tokens": 1280,
                  "prompt_tokens_details": {"cached_tokens": 200}},
    }


def test_openai_server_end_to_end_appends_exactly_one_valid_entry(capsys, copy_session, http_server, monkeypatch):
    server = http_server(200, _openai_reply("## Goal\nShip it\n\n## Next Steps\n1. test"))
    monkeypatch.setenv(KEY_ENV, "sk-test-123")
    path = copy_session(LONG)
    before = path.read_bytes()
    code = main(["compact", str(path), "--llm", "openai", "--model", "gpt-x", "--base-url", _url(server),
                 "--api-key-env", KEY_ENV, "--profile", str(_no_retry_profile(path.parent, "warn"))])
    out, err = capsys.readouterr()
    assert code == 0, err
    added = path.read_bytes()[len(before):]
    assert path.read_bytes().startswith(before) and added.count(b"\n") == 1
    entry = json.loads(added)
    assert [k for k in entry] == ["type", "id", "parentId", "timestamp", "summary", "firstKeptEntryId", "tokensBefore",
                                  "details", "usage", "fromHook"]
    assert entry["summary"].startswith("## Goal\nShip it") and "producedBy" not in entry["details"]
    assert entry["usage"]["input"] == 2000 and entry["usage"]["cacheRead"] == 400  # two calls (history + prefix), summed
    assert [(p, auth) for p, auth, _ in server.seen] == [("/v1/chat/completions", "Bearer sk-test-123")] * 2
    assert server.seen[0][2]["model"] == "gpt-x" and server.seen[0][2]["messages"][0]["role"] == "system"
    assert "sk-test-123" not in out + err
    reopened = SessionFile.open(path)
    assert reopened.leaf_id == entry["id"] and not reopened.problems


def _no_retry_profile(directory, mode="retry", retries=0):
    profile = directory / "no-retry.yaml"
    profile.write_text(
        f"extends: builtin:default\nname: no-retry\nsummary:\n  on_schema_violation: {mode}\n"
        f"summarizer:\n  max_retries: {retries}\n", encoding="utf-8")
    return profile


def test_retries_and_corrective_calls_show_as_progress(capsys, copy_session, http_server, monkeypatch):
    """A 429 (Retry-After: 0) is retried and said so on stderr; so is the corrective call for a missing section."""
    partial = _openai_reply("## Goal\nShip it")
    server = http_server(429, {"error": {"message": "slow down"}}, (200, partial, {}), headers={"retry-after": "0"})
    monkeypatch.setenv(KEY_ENV, "sk-test-123")
    path = copy_session(LONG)
    code = main(["compact", str(path), "--llm", "openai", "--model", "gpt-x", "--base-url", _url(server),
                 "--api-key-env", KEY_ENV, "--profile", str(_no_retry_profile(path.parent, "retry", retries=2))])
    _, err = capsys.readouterr()
    lines = err.splitlines()
    assert code == 0, err
    assert lines[0] == "summarizing history (1/2)…"
    assert lines[1].startswith("  retry 1/2 in 0s after: openai: HTTP 429: slow down")
    assert lines[2].startswith("  the summary lacks ## Constraints & Preferences, ") and lines[2].endswith("asking once more…")
    assert lines[3] == "summarizing the split turn's prefix (2/2)…" and len(server.seen) == 4


def test_a_summary_with_a_lone_surrogate_is_printed_not_a_traceback(capsys, copy_session, http_server, monkeypatch):
    """A model's JSON may escape half an emoji ("\\ud83d"): stored as pi would, shown escaped on the terminal."""
    text = "## Goal\nShip it \ud83d\n\n## Constraints & Preferences\n-\n\n## Progress\n-\n\n## Key Decisions\n-\n\n" \
           "## Next Steps\n-"
    server = http_server(200, _openai_reply(text))
    monkeypatch.setenv(KEY_ENV, "sk-test-123")
    path = copy_session(LONG)
    code = main(["compact", str(path), "--llm", "openai", "--model", "gpt-x", "--base-url", _url(server),
                 "--api-key-env", KEY_ENV, "--profile", str(_no_retry_profile(path.parent, "warn"))])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith("## Goal\nShip it \\ud83d\n") and "Traceback" not in err
    assert b'"summary":"## Goal\\nShip it \\ud83d\\n' in path.read_bytes().splitlines()[-1]  # JSON escape on disk


@pytest.mark.parametrize("key, flags, needle", [
    (None, ["--model", "gpt-x"], f"no API key: environment variable {KEY_ENV} is not set"),
    ("sk-test-123", [], "openai: no model given"),
])
def test_a_missing_key_or_model_stops_before_any_call(capsys, copy_session, http_server, monkeypatch, key, flags,
                                                     needle):
    server = http_server(200, _openai_reply("## Goal\nShip it"))
    if key is None:
        monkeypatch.delenv(KEY_ENV, raising=False)
    else:
        monkeypatch.setenv(KEY_ENV, key)
    path = copy_session(LONG)
    before = path.read_bytes()
    code = main(["compact", str(path), "--llm", "openai", "--base-url", _url(server), "--api-key-env", KEY_ENV,
                 *flags])
    out, err = capsys.readouterr()
    assert (code, out) == (1, "") and path.read_bytes() == before and server.seen == []
    assert err.count("\n") == 1 and needle in err  # no progress line: nothing was started


def test_a_failing_server_leaves_the_file_unchanged_and_says_so_in_one_line(capsys, copy_session, http_server,
                                                                            monkeypatch):
    server = http_server(500, {"error": {"message": "upstream exploded"}})
    monkeypatch.setenv(KEY_ENV, "sk-test-123")
    path = copy_session(LONG)
    before = path.read_bytes()
    code = main(["compact", str(path), "--llm", "openai", "--model", "gpt-x", "--base-url", _url(server),
                 "--api-key-env", KEY_ENV, "--profile", str(_no_retry_profile(path.parent))])
    out, err = capsys.readouterr()
    assert code == 3 and out == "" and path.read_bytes() == before  # 3: the provider failed
    errors = [line for line in err.splitlines() if not line.endswith("…")]
    assert len(errors) == 1 and errors[0].startswith("summarizing history failed: openai: ")
    assert "HTTP 500: upstream exploded" in errors[0]
    assert "Traceback" not in err and len(server.seen) == 1


def test_a_failing_summarizer_leaves_the_file_unchanged(copy_session):
    path = copy_session(LONG)
    before = path.read_bytes()
    session = SessionFile.open(path)
    good = "\n\n".join("## " + s.heading for s in default_profile().summary.schema_)
    client = ScriptedClient([good, LLMConnectionError("openai: connection refused")])
    with pytest.raises(SummaryFailed, match="split turn's prefix failed"):
        compact_session(session, default_profile(), client)
    assert len(client.requests) == 2 and path.read_bytes() == before
    assert session.leaf_id == SessionFile.open(path).leaf_id


@pytest.mark.parametrize("where", ["compact", "branch"])
def test_an_interrupt_leaves_the_file_unchanged(copy_session, where):
    path = copy_session("tests/data/sessions/real/compacted-branched.jsonl")
    before = path.read_bytes()
    session = SessionFile.open(path)
    client = ScriptedClient([KeyboardInterrupt()])
    with pytest.raises(KeyboardInterrupt):
        if where == "compact":
            compact_session(session, default_profile(), client, settings=default_profile().compaction.model_copy(
                update={"keep_recent_tokens": 1000}))
        else:
            branch_session(session, default_profile(), client, "ec085678")
    assert path.read_bytes() == before


def test_a_process_killed_while_summarizing_leaves_the_file_byte_identical(copy_session, tmp_path):
    """SIGKILL while the summarizer (a real HTTP call to a server that never answers) is blocked."""
    path = copy_session(LONG)
    before = path.read_bytes()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    env = dict(os.environ, **{KEY_ENV: "sk-test"})
    command = [sys.executable, "-m", "pipeline", "compact", str(path), "--llm", "openai", "--model", "m",
               "--base-url", f"http://127.0.0.1:{port}/v1", "--api-key-env", KEY_ENV]
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        listener.settimeout(30)
        conn, _ = listener.accept()
        conn.settimeout(30)
        assert b"POST /v1/chat/completions" in _read_some(conn)  # the request is in flight; never answered
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
        conn.close()
    finally:
        listener.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    assert path.read_bytes() == before
    reopened = SessionFile.open(path)
    assert not reopened.problems and len(reopened.entries) == before.count(b"\n") - 1


def _read_some(conn: socket.socket) -> bytes:
    data, deadline = b"", time.monotonic() + 30
    while b"\r\n\r\n" not in data and time.monotonic() < deadline:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def test_an_old_format_file_is_refused_before_any_call(copy_session):
    """pi migrates v1/v2 files with fresh ids, so the store cannot append to them: refuse before summarizing."""
    from pipeline.errors import PipelineError

    path = copy_session("tests/data/sessions/edge/v1.jsonl")
    before = path.read_bytes()
    session = SessionFile.open(path)
    client = ScriptedClient(["unused"])
    settings = default_profile().compaction.model_copy(update={"keep_recent_tokens": 0})
    with pytest.raises(PipelineError, match="version-1 session file"):
        compact_session(session, default_profile(), client, settings=settings)
    assert client.requests == [] and path.read_bytes() == before


def test_branching_to_an_unknown_entry_names_the_session_file(copy_session):
    from pipeline.errors import PipelineError

    path = copy_session("tests/data/sessions/real/compacted-branched.jsonl")
    before = path.read_bytes()
    with pytest.raises(PipelineError) as err:
        branch_session(SessionFile.open(path), default_profile(), ScriptedClient([]), "nope0000")
    assert str(err.value) == f"{path}: no entry 'nope0000'"
    assert path.read_bytes() == before
