"""Writing the small YAML documents the importers produce, readable and exact.

Scalars that are plain text become literal blocks (``|``, ``|-``, ``|+`` by their final
newlines) when a block can hold them exactly; anything else is a double-quoted JSON
string, which YAML reads back unchanged. Keys are the profile's own (never quoted).
"""

from __future__ import annotations

import json
import re

_BLOCK_SAFE = re.compile(r"[^\t\n\x20-\x7e\u00a0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def scalar(value: object) -> str:
    """A flow scalar: numbers and booleans as JSON, text double-quoted."""
    return json.dumps(value, ensure_ascii=False)


def text_block(value: str, indent: int) -> str:
    """``value`` after a ``key:``: a literal block when exact, else a quoted string."""
    lines = value.split("\n")
    body = value.rstrip("\n")
    exact = (
        body
        and not _BLOCK_SAFE.search(value)
        and not body.startswith((" ", "\t"))
        and not any(line != line.rstrip(" \t") for line in lines)
        and "\t" not in value
    )
    if not exact:
        return " " + scalar(value)
    trailing = len(value) - len(body)
    chomp = "-" if trailing == 0 else ("" if trailing == 1 else "+")
    pad = " " * indent
    rendered = "\n".join(pad + line if line else "" for line in body.split("\n"))
    extra = "\n" * (trailing - 1) if trailing > 1 else ""
    return f" |{chomp}\n{rendered}{extra}"


def profile_text(text: str) -> str:
    """Text for a profile's prose field: ``${`` is written ``$${`` so nothing is a variable."""
    return text.replace("${", "$${")
