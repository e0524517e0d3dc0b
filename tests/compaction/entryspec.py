"""Entries from the compact notation of docs/pi-rules.md#cut-points-and-plans (also used by the vector generator).

``U10 A10 T10`` user / assistant / tool result worth 10 tokens (4 characters each),
``B`` bash run, ``CU`` a message with role ``custom``, ``CM`` a custom_message entry,
``BS`` a branch_summary entry, ``MC``/``TL``/``LB``/``CE``/``SI`` model change /
thinking change / label / custom entry / session info, ``Cn:b:k`` a compaction with an
n-token summary, tokensBefore b, first kept entry = entry k. Ids are ``e0000000``,
``e0000001``...; every entry's parent is the one before it. Usage is all zero, so token
figures are pure estimates.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

_TOKEN = re.compile(r"^(CU|CM|BS|MC|TL|LB|CE|SI|U|A|T|B|C)(\d*)(?::(\d+):(\d+))?$")
_BASE = datetime(2026, 1, 1, tzinfo=timezone.utc)
ZERO_USAGE = {
    "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


def entry_id(index: int) -> str:
    return f"e{index:07d}"


def _stamp(index: int) -> tuple[str, int]:
    moment = _BASE + timedelta(seconds=index)
    iso = moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return iso, int(moment.timestamp() * 1000)


def _message(kind: str, n: int, ms: int) -> dict:
    chars = 4 * n
    if kind == "U":
        return {"role": "user", "content": [{"type": "text", "text": "u" * chars}], "timestamp": ms}
    if kind == "A":
        return {
            "role": "assistant", "content": [{"type": "text", "text": "a" * chars}], "api": "anthropic-messages",
            "provider": "anthropic", "model": "m", "usage": ZERO_USAGE, "stopReason": "stop", "timestamp": ms,
        }
    if kind == "T":
        return {
            "role": "toolResult", "toolCallId": "c1", "toolName": "read",
            "content": [{"type": "text", "text": "t" * chars}], "isError": False, "timestamp": ms,
        }
    if kind == "B":
        return {
            "role": "bashExecution", "command": "b" * chars, "output": "", "exitCode": 0,
            "cancelled": False, "truncated": False, "timestamp": ms,
        }
    return {"role": "custom", "customType": "x", "content": "c" * chars, "display": True, "timestamp": ms}


def _entry(kind: str, n: int, extra: tuple[int, int] | None, index: int) -> dict:
    iso, ms = _stamp(index)
    head = {"id": entry_id(index), "parentId": entry_id(index - 1) if index else None, "timestamp": iso}
    if kind in ("U", "A", "T", "B", "CU"):
        return {"type": "message", **head, "message": _message(kind, n, ms)}
    if kind == "CM":
        return {"type": "custom_message", "customType": "x", "content": "m" * (4 * n), "display": True, **head}
    if kind == "BS":
        return {"type": "branch_summary", **head, "fromId": "root", "summary": "s" * (4 * n)}
    if kind == "C":
        before, kept = extra or (0, 0)
        return {
            "type": "compaction", **head, "summary": "c" * (4 * n), "firstKeptEntryId": entry_id(kept),
            "tokensBefore": before,
        }
    if kind == "MC":
        return {"type": "model_change", **head, "provider": "anthropic", "modelId": "m2"}
    if kind == "TL":
        return {"type": "thinking_level_change", **head, "thinkingLevel": "high"}
    if kind == "LB":
        return {"type": "label", **head, "targetId": entry_id(max(index - 1, 0)), "label": "here"}
    if kind == "CE":
        return {"type": "custom", "customType": "x", "data": {"n": 1}, **head}
    return {"type": "session_info", **head, "name": "named"}


def raw_entries(spec: str) -> list[dict]:
    """The JSON objects of the entries ``spec`` describes (``"U10 A10 C4:0:1"``)."""
    out = []
    for index, token in enumerate(spec.split()):
        match = _TOKEN.match(token)
        if match is None:
            raise ValueError(f"bad entry token {token!r}")
        kind, n, before, kept = match.groups()
        extra = (int(before), int(kept)) if before is not None else None
        out.append(_entry(kind, int(n or 0), extra, index))
    return out


def entries(spec: str) -> list:
    """Typed entries (:mod:`pipeline.session.entries`) for ``spec``."""
    from pipeline.session import parse_entry

    return [parse_entry(raw) for raw in raw_entries(spec)]
