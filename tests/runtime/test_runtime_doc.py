"""docs/runtime.md's embedding example, run as written against the loopback server."""

from __future__ import annotations

import re
from pathlib import Path

from pipeline.session import MessageEntry, SessionFile
from pipeline.testing.loopback import LoopbackServer

DOC = Path(__file__).resolve().parents[2] / "docs" / "runtime.md"


def _example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) == 1
    return blocks[0]


def test_the_example_is_short():
    assert len(_example().strip().splitlines()) <= 30


def test_the_example_runs_against_a_local_server(tmp_path, monkeypatch, capsys):
    (tmp_path / "README.md").write_text("# demo\nA tiny project.\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    replies = [{"toolCalls": [{"name": "read", "arguments": {"path": "README.md"}}]}, "It is a tiny demo project."]
    with LoopbackServer(replies) as server:
        monkeypatch.setenv("LLM_BASE_URL", server.openai_base_url)
        exec(compile(_example(), str(DOC), "exec"), {"__name__": "__doc_example__"})
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "It is a tiny demo project."
    assert out[:3] == ["run_start", "request", "reply"] and "tool_end" in out
    assert server.bodies[1]["messages"][-1]["content"] == "# demo\nA tiny project.\n"
    roles = [e.message.role for e in SessionFile.open(tmp_path / "chat.jsonl").entries if isinstance(e, MessageEntry)]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
