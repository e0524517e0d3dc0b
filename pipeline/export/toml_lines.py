"""Top-level keys of a TOML file edited line by line (Codex's ``config.toml``): the user's
comments, tables and layout stay as they are."""

from __future__ import annotations

import json
import re
from typing import Any, Optional

from pipeline.export.base import Key

_TOML_BARE = re.compile(r"[A-Za-z0-9_-]+")
_TOML_TABLE = re.compile(r"\s*\[")


def toml_value(value: Any) -> str:
    """One TOML value on one line (strings, numbers, booleans, arrays and inline tables of them)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):  # a JSON string is a TOML basic string once `/` escapes and DEL are avoided
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML form for {value!r}")


def _toml_key(key: str) -> str:
    return key if _TOML_BARE.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def _toml_line_key(line: str) -> Optional[str]:
    """The top-level key a ``key = value`` line sets (bare or quoted), else None."""
    m = re.match(r'\s*(?:([A-Za-z0-9_-]+)|"((?:[^"\\]|\\.)*)")\s*=', line)
    if not m:
        return None
    return m.group(1) if m.group(1) is not None else json.loads(f'"{m.group(2)}"')


def toml_edit(text: str, removed: list[Key], values: list[tuple[Key, Any]]) -> str:
    """``text`` with the top-level lines of ``removed`` deleted and each of ``values`` set: its line
    replaced where it has one before the first table, else added before that table."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    head = next((i for i, line in enumerate(lines) if _TOML_TABLE.match(line)), len(lines))
    wanted = {k[0]: v for k, v in values}
    gone = {k[0] for k in removed}
    out: list[str] = []
    for i, line in enumerate(lines):
        key = _toml_line_key(line) if i < head else None
        if key in gone:
            continue
        if key is not None and key in wanted:
            out.append(f"{_toml_key(key)} = {toml_value(wanted.pop(key))}\n")
            continue
        out.append(line)
    new = [f"{_toml_key(k)} = {toml_value(v)}\n" for k, v in wanted.items()]
    if new:
        at = next((i for i, line in enumerate(out) if _TOML_TABLE.match(line)), len(out))
        if at < len(out):
            while at > 0 and not out[at - 1].strip():
                at -= 1  # after the last top-level line, before the blank lines above the first table
        out[at:at] = new + (["\n"] if at == 0 and out else [])
    return "".join(out)
