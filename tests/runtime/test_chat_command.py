"""`pipeline chat` against the loopback server: prompts, /compact with its status line, /tree, /templates, Ctrl-C."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from pipeline.cli import main
from pipeline.session import CompactionEntry, MessageEntry, SessionFile

from .routed import RoutedServer

LONG = "please look at the project and explain every part of it in detail " * 8
OVERLAY = "extends: builtin:default\nname: small\ncompaction: {keep_recent_tokens: 50, reserve_tokens: 1000}\n" \
          "summary: {on_schema_violation: warn}\n"
ROOT = Path(__file__).resolve().parents[2]


def _setup(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "loopback-key")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    proj = tmp_path / "proj"
    (proj / ".pi" / "prompts").mkdir(parents=True)
    (proj / ".pi" / "prompts" / "fix.md").write_text("---\ndescription: Fix a file\n---\nFix $1 please.\n")
    (tmp_path / "small.yaml").write_text(OVERLAY)
    return proj


def _chat(tmp_path, server, lines, monkeypatch, *extra):
    monkeypatch.setattr(sys, "stdin", io.StringIO("".join(line + "\n" for line in lines)))
    argv = ["chat", str(tmp_path / "small.yaml"), "--session", str(tmp_path / "s.jsonl"), "--new",
            "--base-url", server.openai_base_url, "--model", "m", "--cwd", str(tmp_path / "proj"), *extra]
    return main(argv)


def test_chat_answers_expands_templates_and_compacts_on_request(tmp_path, monkeypatch, capsys):
    _setup(tmp_path, monkeypatch)
    with RoutedServer([LONG, LONG, "fixed it"], ["## Goal\nsummary"]) as server:
        code = _chat(tmp_path, server, [LONG, "again: " + LONG, "/templates", "/fix app.py", "/compact keep the file names", "/tree",
                                        "/quit"], monkeypatch)
    assert code == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == LONG.rstrip() or LONG.strip() in out
    assert "/fix  Fix a file" in out and "fixed it" in out
    assert "compacting (manual)…" in err and "compacted: " in err and " → " in err
    user_texts = [m["content"][0]["text"] for m in server.bodies[2]["messages"] if m["role"] == "user"]
    assert user_texts[-1] == "Fix app.py please."
    summaries = [b for b, kind in zip(server.bodies, server.kinds) if kind == "summary"]
    assert any("keep the file names" in b["messages"][-1]["content"] for b in summaries)  # the focus
    entries = SessionFile.open(tmp_path / "s.jsonl").entries
    assert any(isinstance(e, CompactionEntry) for e in entries)
    assert entries[-1].id in out  # /tree shows the leaf


def test_chat_moves_in_the_tree(tmp_path, monkeypatch, capsys):
    _setup(tmp_path, monkeypatch)
    with RoutedServer(["one", "two", "three"], ["x"]) as server:
        session_path = tmp_path / "s.jsonl"
        monkeypatch.setattr(sys, "stdin", io.StringIO("first\nsecond\n"))
        argv = ["chat", "--session", str(session_path), "--new", "--base-url", server.openai_base_url,
                "--model", "m", "--cwd", str(tmp_path / "proj")]
        assert main(argv) == 0
        first = next(e for e in SessionFile.open(session_path).entries if isinstance(e, MessageEntry))
        monkeypatch.setattr(sys, "stdin", io.StringIO(f"/tree {first.id[:6]}\nagain\n/tree nosuch\n"))
        assert main(argv[:3] + argv[4:]) == 0
    err = capsys.readouterr().err
    assert "no such entry" in err
    again = [m for m in server.bodies[-1]["messages"] if m["role"] == "user"]
    assert [m["content"][0]["text"] for m in again] == ["again"]  # back before the first prompt


def test_ctrl_c_cancels_the_run_not_the_session(tmp_path, monkeypatch):
    _setup(tmp_path, monkeypatch)
    with RoutedServer([{"text": "partial", "stopReason": "aborted"}, "after"], ["x"]) as server:
        env = {**os.environ, "OPENAI_API_KEY": "k", "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
        proc = subprocess.Popen(
            [sys.executable, "-m", "pipeline", "chat", "--session", str(tmp_path / "s.jsonl"), "--new", "--base-url",
             server.openai_base_url, "--model", "m", "--cwd", str(tmp_path / "proj")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
        proc.stdin.write("tell me a long story\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 20
        while len(server.received) < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.6)  # the first part of the answer has arrived
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate("and now?\n/quit\n", timeout=30)
    assert proc.returncode == 0, err
    assert "(cancelled)" in err and "after" in out
    messages = [e.message for e in SessionFile.open(tmp_path / "s.jsonl").entries if isinstance(e, MessageEntry)]
    assert [getattr(m, "stop_reason", None) for m in messages if m.role == "assistant"] == ["aborted", "stop"]


def test_compact_with_nothing_to_compact_is_one_line(tmp_path, monkeypatch, capsys):
    _setup(tmp_path, monkeypatch)
    with RoutedServer(["short answer"], ["x"]) as server:
        assert _chat(tmp_path, server, ["/compact", "hi", "/compact", "/quit"], monkeypatch) == 0
    err = capsys.readouterr().err.splitlines()
    assert "compaction failed" not in "\n".join(err)
    assert [line for line in err if "compact" in line] == [err[0], err[1]]
    assert all(line.startswith("nothing to compact: ") for line in err), err
    assert "summary" not in server.kinds


def test_chat_shows_retries_and_a_summary_warning(tmp_path, monkeypatch, capsys):
    _setup(tmp_path, monkeypatch)
    (tmp_path / "quick.yaml").write_text(OVERLAY.replace("name: small", "name: quick")
                                         + "retry: {base_delay_ms: 1, max_retries: 2}\n")
    monkeypatch.setattr(sys, "stdin", io.StringIO("hi\n/quit\n"))
    argv = ["chat", str(tmp_path / "quick.yaml"), "--session", str(tmp_path / "dead.jsonl"), "--new",
            "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--cwd", str(tmp_path / "proj")]
    assert main(argv) == 0
    err = capsys.readouterr().err
    retries = [line for line in err.splitlines() if line.startswith("retrying in ")]
    assert ["(1/2)" in retries[0], "(2/2)" in retries[1], len(retries)] == [True, True, 2], err
    assert all("connection error" in line for line in retries)
    with RoutedServer([LONG, LONG, "done"], ["no headings here"]) as server:
        assert _chat(tmp_path, server, [LONG, "again: " + LONG, "/compact", "/quit"], monkeypatch) == 0
    err = capsys.readouterr().err
    assert "warning: summary.schema: " in err and "lacks required section(s)" in err


class _Both(io.StringIO):
    """stdout and stderr in one stream, to see what came first."""

    def isatty(self) -> bool:
        return False


def test_chat_shows_the_answer_before_the_threshold_compaction(tmp_path, monkeypatch):
    _setup(tmp_path, monkeypatch)
    both = _Both()
    monkeypatch.setattr(sys, "stdout", both)
    monkeypatch.setattr(sys, "stderr", both)
    big = {"text": "the streamed answer", "usage": {"input": 3500, "output": 10}}
    with RoutedServer([LONG, LONG, big], ["## Goal\nsummary"]) as server:
        assert _chat(tmp_path, server, [LONG, "again: " + LONG, "third", "/quit"], monkeypatch,
                     "--context-window", "4000") == 0
    text = both.getvalue()
    assert "the streamed answer\n" in text and "compacting (threshold)…" in text, text
    assert text.index("the streamed answer") < text.index("compacting (threshold)…")
    assert text.count("the streamed answer") == 1  # shown once, as it streamed
