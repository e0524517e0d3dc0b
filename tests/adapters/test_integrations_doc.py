"""docs/integrations.md: one short example per framework (tests/test_doc_blocks.py runs each against the loopback server)."""

from __future__ import annotations

import re
from pathlib import Path


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
