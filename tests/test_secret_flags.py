"""No flag and no environment variable ever gets a key printed: the secret rule on input.

Every way a key can reach the program from outside, found by reading the CLI and the
llm package (api_key / env / base_url):

* ``pipeline compact --api-key-env NAME``: the NAME of a variable; a key or a non-name
  given there is refused, saying which flag, never echoing the value;
* ``pipeline compact --base-url URL``: a URL carrying ``user:password@`` or a key in its
  query is refused without being shown;
* a profile's ``summarizer.api_key_env`` / ``summarizer.base_url`` (same rules, located
  in the file);
* the environment variables that hold keys: ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``
  (the providers' defaults) and any variable ``--api-key-env`` names: their value is sent
  in a header and never printed, by ``--print-request``, an error, or a server that
  quotes the key back;
* ``make_client(api_key_env=...)`` for library callers.

Each case runs the real command (``pipeline.cli.main``) on a real session file; servers
are real HTTP servers on 127.0.0.1.
"""

from __future__ import annotations

import json
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.errors import PipelineError

ROOT = Path(__file__).resolve().parents[1]
SESSION = ROOT / "tests" / "data" / "sessions" / "real" / "long-coding.jsonl"
KEY = "sk-live-ABC123xyz789SECRET"
PARTS = ("sk-live", "ABC123", "xyz789", "SECRET")
HINT = "give the name of the environment variable that holds the key"
MODES = ([], ["--plan"], ["--print-request"], ["--branch-to", "zzzz"])


@pytest.fixture
def session(tmp_path) -> Path:
    path = tmp_path / "s.jsonl"
    shutil.copyfile(SESSION, path)
    return path


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out + err


def assert_no_key(text: str, key: str = KEY) -> None:
    shown = [part for part in (*PARTS, key) if part in text]
    assert not shown, f"key material {shown} printed:\n{text}"


# --------------------------------------------------------------------------- flags


@pytest.mark.parametrize("mode", MODES, ids=["run", "plan", "print-request", "branch-to"])
def test_a_key_given_to_api_key_env_is_refused_and_never_printed(capsys, session, mode):
    before = session.read_bytes()
    code, text = run(capsys, "compact", str(session), "--llm", "openai", "--model", "m", "--api-key-env", KEY, *mode)
    assert code == 1
    assert_no_key(text)
    assert text.startswith("--api-key-env: summarizer.api_key_env: ") and HINT in text
    assert session.read_bytes() == before


@pytest.mark.parametrize("value", ["my key", "1ABC", "OPENAI-API-KEY", "$OPENAI_API_KEY", "Bearer abcdef"])
def test_a_value_that_is_not_a_variable_name_is_refused_without_echo(capsys, session, value):
    code, text = run(capsys, "compact", str(session), "--print-request", "--llm", "anthropic", "--model", "m",
                     "--api-key-env", value)
    assert code == 1 and "--api-key-env: summarizer.api_key_env: " in text and HINT in text
    assert value not in text


def test_the_reproduction_from_the_issue(capsys, session):
    code, text = run(capsys, "compact", str(session), "--llm", "openai", "--model", "m", "--api-key-env",
                     "sk-live-ABC123")
    assert code == 1 and "ABC123" not in text and "sk-live" not in text
    assert "is not set" not in text


@pytest.mark.parametrize("url", [
    f"https://user:{KEY}@127.0.0.1:9/v1",
    f"http://{KEY}@127.0.0.1:9/v1",
    f"http://127.0.0.1:9/v1?api_key={KEY}",
    f"http://127.0.0.1:9/v1?x={KEY}",
])
@pytest.mark.parametrize("mode", MODES[:3], ids=["run", "plan", "print-request"])
def test_a_base_url_carrying_a_key_is_refused_and_never_printed(capsys, session, url, mode):
    code, text = run(capsys, "compact", str(session), "--llm", "openai", "--model", "m", "--base-url", url, *mode)
    assert code == 1 and text.startswith("--base-url: summarizer.base_url: `base_url` must not carry")
    assert_no_key(text)


def test_a_base_url_without_credentials_still_works(capsys, session):
    code, text = run(capsys, "compact", str(session), "--print-request", "--llm", "openai", "--model", "m",
                     "--base-url", "http://127.0.0.1:9/v1?api-version=2024-06-01")
    assert code == 0, text


def test_profile_values_follow_the_same_rule(tmp_path, capsys, session):
    for key, value in (("api_key_env", KEY), ("base_url", f"https://u:{KEY}@example.invalid/v1")):
        profile = tmp_path / "p.yaml"
        profile.write_text(f"extends: builtin:default\nname: p\nsummarizer:\n  {key}: {json.dumps(value)}\n")
        for argv in (["validate", str(profile)], ["compact", str(session), "--plan", "--profile", str(profile)]):
            code, text = run(capsys, *argv)
            assert code == 1 and f"summarizer.{key}" in text, text
            assert_no_key(text)


def test_library_overrides_and_clients_never_show_the_value():
    from pipeline import compile_profile
    from pipeline.llm.errors import LLMConfigError
    from pipeline.llm.factory import make_client

    with pytest.raises(PipelineError) as failed:
        compile_profile("default", {"summarizer.api_key_env": KEY})
    assert_no_key(str(failed.value) + repr(failed.value.problems))
    with pytest.raises(PipelineError) as failed:  # a wrong type is named, its value not shown
        compile_profile("default", {"summarizer.api_key_env": 12345678}, {"summarizer.api_key_env": "--api-key-env"})
    assert "12345678" not in str(failed.value) and str(failed.value).startswith("--api-key-env: ")
    with pytest.raises(LLMConfigError) as refused:
        make_client("openai", model="m", api_key_env=KEY)
    assert_no_key(str(refused.value) + repr(refused.value))
    assert HINT in str(refused.value)


# --------------------------------------------------------------------------- environment


class _EchoServer(ThreadingHTTPServer):
    """Answers 401 quoting the key it received, as some real APIs quote part of a bad key."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _EchoHandler)
        self.keys: list[str] = []


class _EchoHandler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        self.rfile.read(int(self.headers.get("content-length", 0)))
        key = self.headers.get("x-api-key") or self.headers.get("authorization", "").removeprefix("Bearer ")
        self.server.keys.append(key)
        body = json.dumps({"error": {"message": f"Incorrect API key provided: {key}", "type": "invalid_request_error"}})
        self.send_response(401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def echo_server():
    server = _EchoServer()
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(("provider", "variable", "flags"), [
    ("openai", "OPENAI_API_KEY", []),
    ("anthropic", "ANTHROPIC_API_KEY", []),
    ("openai", "CP_TEAM_KEY", ["--api-key-env", "CP_TEAM_KEY"]),
])
def test_a_key_from_the_environment_is_sent_but_never_printed(capsys, monkeypatch, session, echo_server,
                                                              provider, variable, flags):
    monkeypatch.setenv(variable, KEY)
    url = f"http://127.0.0.1:{echo_server.server_address[1]}" + ("/v1" if provider == "openai" else "")
    argv = ["compact", str(session), "--llm", provider, "--model", "m", "--base-url", url, *flags]
    code = main([*argv, "--print-request"])
    out, err = capsys.readouterr()
    assert code == 0 and len(json.loads(out)) == 2, err
    assert_no_key(out + err)
    before = session.read_bytes()
    code, text = run(capsys, *argv)
    assert code != 0 and echo_server.keys and set(echo_server.keys) == {KEY}  # the key was really sent
    assert_no_key(text)
    assert session.read_bytes() == before


# --------------------------------------------------------------------------- run and chat


@pytest.mark.parametrize("command", ["run", "chat"])
def test_run_and_chat_refuse_a_key_given_as_a_name_or_in_a_url(capsys, tmp_path, command):
    """`run` and `chat` set the same profile values through the same override path."""
    session = tmp_path / "new.jsonl"
    tail = ["hi"] if command == "run" else []
    for flag, value, problem in (("--api-key-env", KEY, "summarizer.api_key_env: "),
                                 ("--base-url", f"http://user:{KEY}@127.0.0.1:9/v1", "summarizer.base_url: ")):
        code, text = run(capsys, command, "--session", str(session), "--new", "--model", "m", flag, value, *tail)
        assert code == 1 and text.startswith(f"{flag}: {problem}"), text
        assert_no_key(text)
        assert not session.exists()  # refused before anything is written


def test_a_chat_client_built_directly_refuses_a_key_as_the_name():
    from pipeline.llm.errors import LLMConfigError
    from pipeline.llm.chat import ChatClient
    from pipeline.runtime.host import ModelInfo

    model = ModelInfo(id="m", provider="openai", api="openai-completions", context_window=1000, max_tokens=10)
    with pytest.raises(LLMConfigError) as refused:
        ChatClient("openai", model=model.target(), aborted_text="x", api_key_env=KEY)
    assert_no_key(str(refused.value) + repr(refused.value)) and HINT in str(refused.value)


def test_run_sends_a_key_from_the_environment_but_never_prints_it(capsys, monkeypatch, tmp_path, echo_server):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    session = tmp_path / "new.jsonl"
    url = f"http://127.0.0.1:{echo_server.server_address[1]}/v1"
    code, text = run(capsys, "run", "--session", str(session), "--new", "--model", "m", "--base-url", url, "hi")
    assert code == 3 and echo_server.keys and set(echo_server.keys) == {KEY}, text
    assert_no_key(text + session.read_text())
