"""Server-sent events, both ways: the ``data:`` payloads of a stream read, and frames written.

Reading (the runtime's client, the proxy's usage reader): :func:`frames` decodes each
``data:`` line's JSON (``[DONE]`` and comments skipped; a payload that is not JSON comes as
``("malformed", text)``), :func:`payloads` keeps only the JSON ones of raw byte chunks.
Writing (the loopback servers): :func:`data_frame` (``data: …``) and :func:`event_frame`
(``event: NAME`` then ``data: …``).
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Iterator

__all__ = ["data_frame", "event_frame", "frames", "payloads"]


def frames(lines: Iterable[str]) -> Iterator[Any]:
    """The decoded ``data:`` payloads of an event stream (``[DONE]`` and comments skipped)."""
    for line in lines:
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if not data or data == "[DONE]":
            continue
        try:
            yield json.loads(data)
        except ValueError:
            yield ("malformed", data)


def payloads(texts: Iterable[bytes]) -> list[Any]:
    """The JSON ``data:`` payloads of pieces of a stream (lines that do not parse are left out)."""
    out = []
    for text in texts:
        for line in text.decode("utf-8", "replace").splitlines():
            if line.startswith("data:"):
                try:
                    out.append(json.loads(line[5:].strip().encode()))
                except ValueError:
                    pass
    return out


def data_frame(data: str, end: str = "\n\n") -> str:
    """One ``data:`` frame of an already-encoded payload."""
    return f"data: {data}{end}"


def event_frame(name: str, data: Any) -> str:
    """One named event: its JSON ``data``."""
    return f"event: {name}\ndata: {json.dumps(data)}\n\n"
