"""docs/runtime.md's embedding example stays short (tests/test_doc_blocks.py runs it against the loopback server)."""

from __future__ import annotations

import re
from pathlib import Path


DOC = Path(__file__).resolve().parents[2] / "docs" / "runtime.md"


def _example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) == 1
    return blocks[0]


def test_the_example_is_short():
    assert len(_example().strip().splitlines()) <= 30
