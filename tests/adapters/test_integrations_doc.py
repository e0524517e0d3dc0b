"""docs/integrations.md: each framework's example runs as written against the loopback server."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipeline.session import MessageEntry, SessionFile
from pipeline.testing.loopback import LoopbackServer

DOC = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"
SECTIONS = {"pydantic-ai": "pydantic_ai", "OpenAI Agents SDK": "agents", "LangChain v1": "langchain.agents"}


def _examples() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    out = {}
    for title in SECTIONS:
        section = text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
        [block] = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
        out[title] = block
    return out


def test_each_example_is_under_20_lines():
    examples = _examples()
    assert sorted(examples) == sorted(SECTIONS)
    assert all(len(block.strip().splitlines()) < 20 for block in examples.values())


@pytest.mark.parametrize("title", sorted(SECTIONS))
def test_the_example_runs_against_a_local_server(title, tmp_path, monkeypatch, capsys):
    pytest.importorskip(SECTIONS[title], reason="the adapter extras are part of the test extra")
    monkeypatch.chdir(tmp_path)
    with LoopbackServer(["It compiles context profiles.", "With pytest."]) as server:
        monkeypatch.setenv("LLM_BASE_URL", server.openai_base_url)
        exec(compile(_examples()[title], str(DOC), "exec"), {"__name__": "__doc_example__"})
        bodies = server.bodies
    assert capsys.readouterr().out.splitlines() == ["It compiles context profiles.", "With pytest."]
    assert len(bodies) == 2 and bodies[1]["messages"][-1]["content"] == "And how is it tested?"
    assert [m["role"] for m in bodies[1]["messages"]][1:] == ["user", "assistant", "user"]
    session = SessionFile.open(tmp_path / "chat.jsonl")
    assert session.problems == []
    roles = [e.message.role for e in session.path_to() if isinstance(e, MessageEntry)]
    assert roles == ["user", "assistant", "user", "assistant"]
