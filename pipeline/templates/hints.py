"""``argument-hint`` written the way Claude Code's documentation writes it.

``argument-hint: [issue-number] [priority]`` is not valid YAML (a flow sequence followed
by more text), so pi skips the whole template; ``argument-hint: [file]`` is valid YAML
but a list, which pi shows as JavaScript prints it (``file``; ``[a, b]`` gives ``a,b``).
Both are usually meant as text. This module finds such a line and words the remark: a
hint to quote the value, and for a list a note that keeps pi's value and shows what was
written.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

from pipeline.errors import Location, Problem
from pipeline.js import yaml_string

from .frontmatter import Frontmatter, normalize_newlines

_HINT_LINE = re.compile(r"^argument-hint:[ \t]*(\[.*?)[ \t]*$")


def bracket_hint_line(text: str) -> Optional[tuple[int, str]]:
    """(1-based line, value as written) of an ``argument-hint`` whose value starts with ``[``,
    inside the frontmatter of ``text``; None when there is none."""
    normalized = normalize_newlines(text)
    if not normalized.startswith("---"):
        return None
    end = normalized.find("\n---", 3)
    head = normalized[:end] if end != -1 else ""
    for number, line in enumerate(head.split("\n")[1:], start=2):
        m = _HINT_LINE.match(line)
        if m:
            return number, m.group(1)
    return None


def quoted(value: str) -> str:
    """``value`` as a double-quoted YAML scalar."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


_KEY_LINE = re.compile(r"^([A-Za-z_][\w-]*):[ \t]+([^\s\"'|>].*?)[ \t]*$")


def unquoted_hint(text: str, line: Optional[int] = None) -> Optional[str]:
    """The hint for a frontmatter that failed to parse: a bracketed ``argument-hint``, or
    (given the error's ``line``) a plain value such as ``a (b: c)`` that YAML cannot take."""
    found = bracket_hint_line(text)
    if found is not None:
        return f"quote the value: argument-hint: {quoted(found[1])}"
    lines = normalize_newlines(text).split("\n")
    if line is None or not 1 <= line <= len(lines):
        return None
    m = _KEY_LINE.match(lines[line - 1])
    if m is None or ": " not in m.group(2) and not m.group(2).startswith(("[", "{")):
        return None
    return f"quote the value: {m.group(1)}: {quoted(m.group(2))}"


def hint_list_notes(fm: Frontmatter, text: str, path: Optional[Path], name: str) -> list[Problem]:
    """An info when ``argument-hint`` was read as a YAML list (pi's value is kept)."""
    value = fm.get("argument-hint")
    found = bracket_hint_line(text)
    if not isinstance(value, list) or found is None:
        return []
    line, raw = found
    file = str(path) if path is not None else f"/{name}"
    message = (f"`argument-hint: {raw}` is read as a YAML list, not as text: pi offers the list "
               f"(`{yaml_string(value)}` where it prints it)")
    return [Problem(message, Location(file, line, 16), severity="info", code="template.argument-hint-list",
                    hint=f"quote it to keep the brackets: argument-hint: {quoted(raw)}")]
