"""What both the pi 1.6 generators (``tests/data/pi16/gen_*.py``) and the tests that replay
their vectors reduce a message to: no text of the oracle's is needed here."""

from __future__ import annotations

import json
from typing import Any


def flat_content(content: Any) -> Any:
    """A message's content as one string: text blocks as they are, a tool call as
    ``<toolCall NAME ARGS>``, any other block as ``<type>``; a string stays as it is."""
    if not isinstance(content, list):
        return content
    parts = []
    for b in content:
        if b["type"] == "text":
            parts.append(b["text"])
        elif b["type"] == "toolCall":
            parts.append(f"<toolCall {b['name']} {json.dumps(b['arguments'])}>")
        else:
            parts.append(f"<{b['type']}>")
    return "\n".join(parts)


def system_chars(m: dict) -> int:
    """What pi's estimate counts of a system message (content, section texts, the JSON of
    ``toolsAdded``), in UTF-16 units: a size, no text."""
    def units(text: str) -> int:
        return len(text.encode("utf-16-le")) // 2
    content = m.get("content")
    text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content or [] if b.get("type") == "text")
    total = units(text) + sum(units(v) for v in (m.get("sections") or {}).values() if isinstance(v, str))
    if m.get("toolsAdded"):
        total += units(json.dumps(m["toolsAdded"], separators=(",", ":"), ensure_ascii=False))
    return total
