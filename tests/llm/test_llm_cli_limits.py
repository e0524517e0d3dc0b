"""The fault matrix through the command line: `pipeline compact` in a fresh process
against the loopback server, with a short deadline in the test profile.

Each run must end in bounded time with exit 3, print one error line (progress lines
end with "…"), nothing on stdout, no secret anywhere, and leave the session file byte
for byte as it was.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from llm_fakes import FAKE_KEY, Reply

ROOT = Path(__file__).resolve().parents[2]
LONG = ROOT / "tests" / "data" / "sessions" / "real" / "long-coding.jsonl"
KEY_ENV = "CP_LIMITS_TEST_KEY"
DEADLINE = 1
BOUND = DEADLINE + 28.0  # a hang guard: process start-up on a loaded machine; unbounded, the faults run for minutes
PASSWORD = "hunter2-Pa55word"


@pytest.fixture
def setup(tmp_path):
    session = tmp_path / "chat.jsonl"
    session.write_bytes(LONG.read_bytes())
    profile = tmp_path / "bounded.yaml"
    profile.write_text(
        "extends: builtin:default\nname: bounded\nsummary:\n  on_schema_violation: warn\n"
        f"summarizer:\n  max_retries: 0\n  call_deadline_s: {DEADLINE}\n", encoding="utf-8")
    return session, profile


def compact(session: Path, profile: Path, provider: str, base_url: str, *flags: str):
    env = {**os.environ, KEY_ENV: FAKE_KEY, "PYTHONIOENCODING": "utf-8"}
    command = [sys.executable, "-m", "pipeline", "compact", str(session), "--profile", str(profile),
               "--llm", provider, "--model", "test-model", "--base-url", base_url, "--api-key-env", KEY_ENV, *flags]
    start = time.monotonic()
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    return proc, time.monotonic() - start


def assert_failed_cleanly(proc, elapsed: float, session: Path, before: bytes, provider: str) -> str:
    assert elapsed < BOUND, elapsed
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if not line.endswith("…")]
    assert len(errors) == 1, proc.stderr
    assert errors[0].startswith(f"summarizing history failed: {provider}: ")
    basic = base64.b64encode(f"team:{PASSWORD}".encode()).decode()
    for secret in (FAKE_KEY, PASSWORD, basic):
        assert secret not in proc.stderr
    assert session.read_bytes() == before
    return errors[0]


CASES = {
    # name: (provider, reply, what the error line says)
    # The one deadline run here, on the real clock (a fresh process takes no injected one);
    # trickling servers are test_llm_limits.py's, on an injected clock.
    "silence": ("anthropic", Reply(fault="silence"),
                f"timed out: no complete answer within the deadline of {DEADLINE}s (summarizer.call_deadline_s)"),
    "5 MB summary": ("anthropic", Reply(fault="huge", size=5_000_000),
                     "summary refused: 5000000 characters for a budget of 13107 tokens"),
    "100 MB summary": ("openai", Reply(fault="huge", size=100_000_000, chunked=True),
                       "response refused: the body goes past 8388608 bytes"),
    "gzip bomb": ("anthropic", Reply(fault="bomb"), "response refused: the body goes past 8388608 bytes"),
    "key in a 500": ("openai", Reply(status=500, body=f"<html>\n<p>upstream failed for key {FAKE_KEY}</p>\n</html>"),
                     "HTTP 500: <html> <p>upstream failed for key ***</p> </html>"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_compact_against_a_hostile_server(case, setup, llm_server):
    provider, reply, needle = CASES[case]
    session, profile = setup
    before = session.read_bytes()
    llm_server.script(reply)
    proc, elapsed = compact(session, profile, provider, llm_server.base_url(provider))
    line = assert_failed_cleanly(proc, elapsed, session, before, provider)
    assert needle in line
    assert len(llm_server.requests) == 1


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_compact_against_a_server_echoing_the_credential_headers(provider, setup, llm_server):
    session, profile = setup
    before = session.read_bytes()

    def echo_credentials(request):
        sent = {name: request.headers.get(name) for name in ("authorization", "x-api-key")}
        return {"error": {"message": f"denied; you sent {sent}"}}

    llm_server.script(Reply(status=401, body=echo_credentials))
    proc, elapsed = compact(session, profile, provider, llm_server.base_url(provider))
    line = assert_failed_cleanly(proc, elapsed, session, before, provider)
    shown = "{'authorization': 'Bearer ***', 'x-api-key': None}" if provider == "openai" else \
        "{'authorization': None, 'x-api-key': '***'}"
    assert f"HTTP 401: denied; you sent {shown}" in line


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_password_in_the_base_url_is_refused_before_any_call_and_never_shown(provider, setup, llm_server):
    session, profile = setup
    before = session.read_bytes()
    llm_server.script(Reply(text="never asked"))
    base = llm_server.base_url(provider).replace("http://", f"http://team:{PASSWORD}@")
    proc, elapsed = compact(session, profile, provider, base)
    assert proc.returncode == 1 and proc.stdout == "" and elapsed < BOUND
    assert proc.stderr.count("\n") == 1 and "must not carry credentials" in proc.stderr
    assert PASSWORD not in proc.stderr and session.read_bytes() == before and llm_server.requests == []


def test_print_request_hides_a_key_that_is_in_the_conversation(setup):
    """The key pasted into the chat would be in the request body: --print-request shows *** instead."""
    session, profile = setup
    session.write_bytes(LONG.read_bytes().replace(b"I just cloned this repo.", f"my key is {FAKE_KEY}.".encode(), 1))
    proc, _ = compact(session, profile, "openai", "http://127.0.0.1:9/v1", "--print-request")
    assert proc.returncode == 0, proc.stderr
    assert "my key is ***." in proc.stdout and FAKE_KEY not in proc.stdout + proc.stderr
