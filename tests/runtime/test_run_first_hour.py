"""`pipeline run` as a new user meets it: a local server without a key, an empty or missing
session file, a missing key named by its flag, retries shown (issue 21, items 5-7, 9, 10, 12)."""

from __future__ import annotations

import threading

import pytest

from pipeline.cli import main
from pipeline.session import CompactionEntry, MessageEntry, SessionFile
from pipeline.model.run_plan import RunPlan

from .routed import RoutedServer


@pytest.fixture
def project(tmp_path, monkeypatch):
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "LOCAL_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    (tmp_path / "proj").mkdir()
    return tmp_path


def _argv(project, server_url, text, *extra):
    return ["run", *extra, "--session", str(project / "s.jsonl"), "--base-url", server_url,
            "--model", "local-model", "--cwd", str(project / "proj"), text]


def test_a_base_url_without_a_key_sends_no_credentials(project, capsys):
    with RoutedServer(["hello from a local server"], ["unused"]) as server:
        assert main(_argv(project, server.openai_base_url, "hi", "--new")) == 0
    assert capsys.readouterr().out == "hello from a local server\n"
    headers = server.received[0].headers
    assert "authorization" not in headers and "x-api-key" not in headers


def test_a_set_key_is_still_sent_with_a_base_url(project, capsys, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "local-secret")
    with RoutedServer(["ok"], ["unused"]) as server:
        assert main(_argv(project, server.openai_base_url, "hi", "--new")) == 0
    assert server.received[0].headers["authorization"] == "Bearer local-secret"


def test_a_missing_key_names_the_flag_the_user_typed(project, capsys):
    with RoutedServer(["never"], ["unused"]) as server:
        code = main(_argv(project, server.openai_base_url, "hi", "--new", "--api-key-env", "LOCAL_KEY"))
    err = capsys.readouterr().err
    assert code == 1 and server.received == []
    assert "--api-key-env" in err and "LOCAL_KEY" in err and "summarizer.api_key_env" not in err
    assert not (project / "s.jsonl").exists()


def test_a_missing_session_file_comes_before_a_missing_key(project, capsys):
    with RoutedServer(["never"], ["unused"]) as server:
        code = main(_argv(project, server.openai_base_url, "hi", "--api-key-env", "LOCAL_KEY"))
    err = capsys.readouterr().err
    assert code == 1 and "no such session file" in err and "API key" not in err
    hint = next(line for line in err.splitlines() if "--new" in line)
    assert f"--session {project / 's.jsonl'} --new" in hint  # one line says how to start it


@pytest.mark.parametrize("new", [False, True])
def test_an_empty_session_file_starts_a_new_session(project, capsys, new):
    (project / "s.jsonl").write_bytes(b"")
    with RoutedServer(["first answer"], ["unused"]) as server:
        assert main(_argv(project, server.openai_base_url, "hi", *(["--new"] if new else []))) == 0
    session = SessionFile.open(project / "s.jsonl")
    assert session.problems == [] and session.header.cwd == str(project / "proj")
    assert [e.message.role for e in session.entries if isinstance(e, MessageEntry)] == ["user", "assistant"]
    # a second run continues it (an empty file no longer: --new refuses it)
    with RoutedServer(["second answer"], ["unused"]) as server:
        assert main(_argv(project, server.openai_base_url, "again", "--new")) == 1
        assert main(_argv(project, server.openai_base_url, "again")) == 0
    assert "file already exists" in capsys.readouterr().err


def test_agent_run_checks_the_key_before_writing(project, monkeypatch):
    """A missing key is a failed run (no exception), with nothing written; the next run sends one user message."""
    from pipeline import compile_profile
    from pipeline.runtime.host import ModelInfo
    from pipeline.runtime.loop import Agent, model_client

    pipeline = compile_profile("builtin:default")
    session = SessionFile.create(project / "lib.jsonl", cwd=str(project / "proj"))
    model = ModelInfo(id="m", provider="openai", api="openai-completions", context_window=100000, max_tokens=1000)
    with RoutedServer(["answered"], ["unused"]) as server:
        client = model_client(RunPlan.of(pipeline.profile), model, base_url=server.openai_base_url, api_key_env="LOCAL_KEY")
        agent = Agent(pipeline.conversation(session, model=model, cwd=str(project / "proj")), client)
        failed = agent.run("hi", cancel=threading.Event())
        assert failed.error is not None and "LOCAL_KEY" in failed.error and server.received == []
        assert [e for e in SessionFile.open(project / "lib.jsonl").entries if isinstance(e, MessageEntry)] == []
        monkeypatch.setenv("LOCAL_KEY", "k")
        assert agent.run("hi").answer == "answered"
    users = [m for m in server.bodies[0]["messages"] if m["role"] == "user"]
    assert len(users) == 1
    entries = SessionFile.open(project / "lib.jsonl").entries
    assert [e.message.role for e in entries if isinstance(e, MessageEntry)] == ["user", "assistant"]
def test_run_shows_each_retry_on_stderr(project, capsys, tmp_path):
    overlay = tmp_path / "quick.yaml"
    overlay.write_text("extends: builtin:default\nname: quick\nretry: {base_delay_ms: 1, max_retries: 2}\n")
    argv = ["run", str(overlay), "--session", str(project / "s.jsonl"), "--new", "--base-url",
            "http://127.0.0.1:9/v1", "--model", "m", "--cwd", str(project / "proj"), "hi"]
    assert main(argv) == 3
    err = capsys.readouterr().err.splitlines()
    retries = [line for line in err if line.startswith("retrying")]
    assert len(retries) == 2, err
    assert "1/2" in retries[0] and "2/2" in retries[1]
    assert all(" s " in line and "connection error" in line for line in retries)


def test_context_shows_the_error_text_of_failed_attempts(project, capsys, tmp_path):
    overlay = tmp_path / "quick.yaml"
    overlay.write_text("extends: builtin:default\nname: quick\nretry: {base_delay_ms: 1, max_retries: 1}\n")
    argv = ["run", str(overlay), "--session", str(project / "s.jsonl"), "--new", "--base-url",
            "http://127.0.0.1:9/v1", "--model", "m", "--cwd", str(project / "proj"), "hi"]
    assert main(argv) == 3
    capsys.readouterr()
    assert main(["context", str(project / "s.jsonl")]) == 0
    out = capsys.readouterr().out
    errors = [line for line in out.splitlines() if "[error]" in line]
    assert errors and all("connection error" in line for line in errors), out


OFF_SCHEMA = """\
extends: builtin:default
name: small
compaction: {keep_recent_tokens: 50, reserve_tokens: 1000}
summary: {on_schema_violation: warn}
"""
LONG = "please look at the project and explain every part of it in detail " * 8


def test_run_warns_about_a_summary_without_its_headings(project, capsys, tmp_path):
    (tmp_path / "small.yaml").write_text(OFF_SCHEMA, encoding="utf-8")
    with RoutedServer([LONG, LONG], ["unused"]) as server:  # two turns: the older one is summarized
        assert main(_argv(project, server.openai_base_url, LONG, str(tmp_path / "small.yaml"), "--new")) == 0
        assert main(_argv(project, server.openai_base_url, LONG, str(tmp_path / "small.yaml"))) == 0
    capsys.readouterr()
    big = {"text": "second answer", "usage": {"input": 3500, "output": 10}}
    with RoutedServer([big], ["no headings at all"]) as server:
        assert main(_argv(project, server.openai_base_url, "again", str(tmp_path / "small.yaml"),
                          "--context-window", "4000")) == 0
    err = capsys.readouterr().err
    assert "warning" in err and "lacks required section" in err, err
    compactions = [e for e in SessionFile.open(project / "s.jsonl").entries if isinstance(e, CompactionEntry)]
    assert len(compactions) == 1  # kept, as the profile says, but not silently


def test_run_takes_the_compaction_flags_of_compact(project, capsys):
    with RoutedServer([LONG], ["unused"]) as server:
        assert main(_argv(project, server.openai_base_url, LONG, "--new")) == 0
    capsys.readouterr()
    with RoutedServer(["after"], ["## Goal\nforced"]) as server:
        code = main(_argv(project, server.openai_base_url, "again", "--keep-recent", "50", "--reserve", "1000",
                          "--compact"))
    assert code == 0, capsys.readouterr().err
    assert "summary" in server.kinds and server.kinds[-1] == "agent"
    compactions = [e for e in SessionFile.open(project / "s.jsonl").entries if isinstance(e, CompactionEntry)]
    assert len(compactions) == 1


def test_a_compaction_flag_out_of_range_names_the_flag(project, capsys):
    with RoutedServer(["never"], ["unused"]) as server:
        code = main(_argv(project, server.openai_base_url, "hi", "--new", "--reserve", "1"))
    err = capsys.readouterr().err
    assert code == 1 and "--reserve" in err and server.received == []




def test_run_json_streams_text_before_the_reply(project, capsys):
    import json

    with RoutedServer(["streamed words"], ["unused"]) as server:
        assert main(_argv(project, server.openai_base_url, "hi", "--new", "--json")) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    kinds = [e["type"] for e in events]
    assert "".join(e["text"] for e in events if e["type"] == "text_delta") == "streamed words"
    assert kinds.index("text_delta") < kinds.index("reply")
