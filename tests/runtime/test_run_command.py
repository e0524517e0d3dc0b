"""`pipeline run` against the loopback server: answers, compacts, recovers, leaves a readable session."""

from __future__ import annotations

import json

import pytest

from pipeline.cli import main
from pipeline.session import CompactionEntry, MessageEntry, SessionFile

from .routed import RoutedServer

OVERFLOW = {"stopReason": "error", "errorMessage": "prompt is too long: 213456 tokens > 200000 maximum"}
LONG = "please look at the project and explain every part of it in detail " * 8
OVERLAY = """\
extends: builtin:default
name: small
compaction: {keep_recent_tokens: 50, reserve_tokens: 1000}
summary: {on_schema_violation: warn}
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "loopback-key")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    (tmp_path / "small.yaml").write_text(OVERLAY, encoding="utf-8")
    return tmp_path


def _run(project, server, text, *extra, new=False):
    argv = ["run", *extra, "--session", str(project / "s.jsonl"), "--base-url", server.openai_base_url,
            "--model", "local-model", "--cwd", str(project / "proj"), text]
    return main(argv + (["--new"] if new else []))


def test_run_answers_with_a_tool(project, capsys):
    script = [{"toolCalls": [{"name": "read", "arguments": {"path": "notes.txt"}}]}, "two words: alpha, beta"]
    with RoutedServer(script, ["unused"]) as server:
        assert _run(project, server, "what is in notes.txt?", new=True) == 0
    assert capsys.readouterr().out == "two words: alpha, beta\n"
    tool_message = server.bodies[1]["messages"][-1]
    assert tool_message == {"role": "tool", "content": "alpha\nbeta\n", "tool_call_id": "call_0_0"}
    assert [t["function"]["name"] for t in server.bodies[0]["tools"]] == ["read", "ls", "find", "grep"]
    session = SessionFile.open(project / "s.jsonl")
    assert session.problems == []
    assert [e.type for e in session.entries] == ["model_change", "thinking_level_change"] + ["message"] * 4
    assert [e.message.role for e in session.entries if isinstance(e, MessageEntry)] == [
        "user", "assistant", "toolResult", "assistant"]


def test_run_compacts_when_the_threshold_is_crossed(project, capsys):
    with RoutedServer([LONG], ["unused"]) as server:
        assert _run(project, server, LONG, str(project / "small.yaml"), new=True) == 0
    big = {"text": "second answer", "usage": {"input": 3500, "output": 10}}
    with RoutedServer([big], ["## Goal\nthe summary"]) as server:
        code = _run(project, server, "a second question", str(project / "small.yaml"), "--json",
                    "--context-window", "4000")
    assert code == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    kinds = [e["type"] for e in events]
    assert kinds.index("compaction_start") > kinds.index("reply")
    end = next(e for e in events if e["type"] == "compaction_end")
    assert end["reason"] == "threshold" and end["error"] is None and end["will_retry"] is False
    assert "summary" in server.kinds
    compactions = [e for e in SessionFile.open(project / "s.jsonl").entries if isinstance(e, CompactionEntry)]
    assert len(compactions) == 1 and "## Goal\nthe summary" in compactions[0].summary


def test_run_recovers_from_one_overflow(project, capsys):
    with RoutedServer([LONG], ["unused"]) as server:
        assert _run(project, server, LONG, str(project / "small.yaml"), new=True) == 0
    capsys.readouterr()
    with RoutedServer([OVERFLOW, "recovered"], ["## Goal\nshort"]) as server:
        assert _run(project, server, "second", str(project / "small.yaml")) == 0
    assert capsys.readouterr().out == "recovered\n"
    assert server.kinds[0] == "agent" and server.kinds[-1] == "agent" and "summary" in server.kinds
    entries = SessionFile.open(project / "s.jsonl").entries
    kinds = [getattr(e.message, "stop_reason", e.message.role) if isinstance(e, MessageEntry) else e.type
             for e in entries]
    assert kinds[-3:] == ["error", "compaction", "stop"]  # the failed reply stays in the file
    retried = server.bodies[-1]["messages"]
    assert all(m.get("content") != OVERFLOW["errorMessage"] for m in retried)


def test_a_second_overflow_is_a_failure(project, capsys):
    with RoutedServer([LONG], ["unused"]) as server:
        assert _run(project, server, LONG, str(project / "small.yaml"), new=True) == 0
    capsys.readouterr()
    with RoutedServer([OVERFLOW], ["## Goal\nshort"]) as server:
        assert _run(project, server, "second", str(project / "small.yaml")) == 3
    err = capsys.readouterr().err
    assert "the run failed" in err and "overflows" in err and "loopback-key" not in err


def test_an_overflow_with_nothing_left_to_compact_is_a_failure_not_an_empty_answer(project, capsys):
    """Right after a compaction nothing is left to summarize: the run ends on the error
    reply (as pi's does), and the command says so with exit 3 instead of printing nothing."""
    with RoutedServer([LONG], ["unused"]) as server:
        assert _run(project, server, LONG, str(project / "small.yaml"), new=True) == 0
    with RoutedServer([OVERFLOW], ["## Goal\nshort"]) as server:
        assert _run(project, server, "second", str(project / "small.yaml")) == 3  # compacted, then fails again
    capsys.readouterr()
    before = (project / "s.jsonl").read_bytes()
    with RoutedServer([OVERFLOW], ["## Goal\nshort"]) as server:
        code = _run(project, server, "third", str(project / "small.yaml"))
    out, err = capsys.readouterr()
    assert code == 3 and out == "", (code, out, err)
    assert "the run failed" in err and "prompt is too long" in err
    assert (project / "s.jsonl").read_bytes().startswith(before)  # nothing lost


def test_an_unreachable_endpoint_is_a_clear_error_and_loses_nothing(project, capsys, tmp_path):
    overlay = tmp_path / "quick.yaml"
    overlay.write_text("extends: builtin:default\nname: quick\nretry: {base_delay_ms: 1, max_retries: 1}\n")
    argv = ["run", str(overlay), "--session", str(project / "s.jsonl"), "--new", "--base-url",
            "http://127.0.0.1:9/v1", "--model", "m", "--cwd", str(project / "proj"), "hi"]
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert "connection error" in err and "127.0.0.1:9" in err
    entries = SessionFile.open(project / "s.jsonl").entries
    assert [e.message.role for e in entries if isinstance(e, MessageEntry)] == ["user", "assistant", "assistant"]


def test_run_refuses_bad_flags(project, capsys):
    with RoutedServer(["x"], ["x"]) as server:
        assert _run(project, server, "hi", "--tools", "read,rm", new=True) == 2
        assert "unknown tool 'rm'" in capsys.readouterr().err
        assert _run(project, server, "hi") == 1  # the refused run above created no session file
    assert "no such session file" in capsys.readouterr().err


def _pi1_two_runs(project, *flags):
    """Two `pipeline run builtin:pi-1` prompts, the project's instructions added between them."""
    with RoutedServer(["first answer", "second answer"], ["unused"]) as server:
        assert _run(project, server, "one", "builtin:pi-1", *flags, new=True) == 0
        (project / "proj" / "AGENTS.md").write_text("Use tabs.\n", encoding="utf-8")
        assert _run(project, server, "two", "builtin:pi-1", *flags) == 0
    systems = [e.raw["message"] for e in SessionFile.open(project / "s.jsonl").entries
               if e.type == "message" and e.raw["message"]["role"] == "system"]
    return server.bodies, systems


def test_run_takes_the_profile_as_an_option_too(project, capsys):
    with RoutedServer(["by position", "by option"], ["unused"]) as server:
        assert _run(project, server, "one", "builtin:pi-1", new=True) == 0
        assert _run(project, server, "two", "--profile", "builtin:pi-1") == 0
    first, second = (b["messages"][0]["content"] for b in server.bodies)
    assert first == second and "<cwd>" in first  # pi-1's tag-wrapped layout both times
    assert capsys.readouterr().out == "by position\nby option\n"


def test_run_with_pi1_sends_a_patch_in_place(project, capsys):
    bodies, systems = _pi1_two_runs(project, "--mid-conversation-system")
    assert [list(s.get("sections", {})) for s in systems] == [
        ["preamble", "tools", "rules", "docs", "cwd"], ["project_context"]]
    first, second = bodies[0]["messages"], bodies[1]["messages"]
    assert second[0] == first[0]  # the leading prompt is byte-identical: the cached prefix survives
    assert [m["role"] for m in second] == ["system", "user", "assistant", "system", "user"]
    assert '"project_context"' in second[3]["content"] and "Use tabs." in second[3]["content"]
    assert "Use tabs." not in second[0]["content"]


def test_run_with_pi1_replays_for_other_models(project, capsys):
    bodies, systems = _pi1_two_runs(project)
    assert len(systems) == 2  # the session records the same patch
    second = bodies[1]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    prompt = second[0]["content"]
    assert prompt.index("<project_context>") > prompt.index("<cwd>")  # the replay puts a new section last
    assert "Use tabs." in second[0]["content"] and second[0]["content"] != bodies[0]["messages"][0]["content"]
