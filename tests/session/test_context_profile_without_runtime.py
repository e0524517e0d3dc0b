"""`pipeline context` under a profile with no `runtime` block (builtin:minimal) reads pi 0.84's
projection: the block is optional, and its absence is no error."""

from __future__ import annotations

import json

from pipeline.cli import main

HEADER = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp"}
USER = {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": "hello", "timestamp": 1}}


def test_context_under_a_profile_without_runtime(tmp_path, capsys):
    session = tmp_path / "s.jsonl"
    session.write_text("".join(json.dumps(e) + "\n" for e in (HEADER, USER)), encoding="utf-8")
    assert main(["context", "--profile", "minimal", "--format", "json", str(session)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [m["role"] for m in out["messages"]] == ["user"]
