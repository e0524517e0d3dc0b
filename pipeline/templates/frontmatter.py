"""YAML frontmatter of Markdown files, read as pi's ``parseFrontmatter`` reads it.

1. CRLF, then lone CR, become LF.
2. Frontmatter exists only when the text starts with ``---`` and ``\\n---`` occurs later
   (searched from index 3). The YAML is the text from index 4 (in UTF-16 units, as in
   JavaScript) up to that ``\\n---``; the body is everything after those four
   characters, trimmed with JavaScript's whitespace set. Without frontmatter the body is
   the whole (normalised) text, untrimmed.
3. The YAML is parsed as pi's parser reads it (see :mod:`pipeline.js.yaml`). A document that is
   not a mapping gives no keys.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping

from pipeline.js import js_key, js_trim, load_yaml, u16slice


class FrontmatterError(ValueError):
    """The frontmatter is not valid YAML; ``line``/``col`` are 1-based, in the file."""

    def __init__(self, reason: str, line: int | None = None, col: int | None = None) -> None:
        super().__init__(reason)
        self.reason, self.line, self.col = reason, line, col


@dataclass(frozen=True)
class Frontmatter:
    """A file split into its YAML mapping (``data``; empty when absent) and its body."""

    data: Mapping[str, object] = field(default_factory=dict)
    body: str = ""
    yaml_text: str | None = None
    #: where the body starts in the (newline-normalised) file, 1-based
    body_line: int = 1
    body_col: int = 1

    def get(self, key: str) -> object:
        """The value of a frontmatter key (None when absent)."""
        return self.data.get(key)


def normalize_newlines(text: str) -> str:
    """CRLF, then lone CR, to LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """(YAML text or None, body) exactly as pi's ``extractFrontmatter``."""
    normalized = normalize_newlines(text)
    if not normalized.startswith("---"):
        return None, normalized
    end = normalized.find("\n---", 3)
    if end == -1:
        return None, normalized
    head = normalized[:end]
    # JavaScript slices UTF-16 units: an astral character at index 3 is cut in half.
    yaml_text = u16slice(head, 4) if not head.isascii() else head[4:]
    return yaml_text, js_trim(normalized[end + 4 :])


def parse_frontmatter(text: str) -> Frontmatter:
    """Split and parse; raises :class:`FrontmatterError` for invalid YAML."""
    yaml_text, body = split_frontmatter(text)
    line, col = _body_start(text, body, yaml_text is not None)
    if not yaml_text:
        return Frontmatter({}, body, yaml_text, line, col)
    value = _load_yaml(yaml_text, _yaml_start(text))
    data = {js_key(k): v for k, v in value.items()} if isinstance(value, dict) else {}
    return Frontmatter(data, body, yaml_text, line, col)


def _body_start(text: str, body: str, has_frontmatter: bool) -> tuple[int, int]:
    """(line, col) of the first body character in the file, for locating findings."""
    if not has_frontmatter or not body:
        return 1, 1
    normalized = normalize_newlines(text)
    rest = normalized[normalized.find("\n---", 3) + 4 :]
    start = len(normalized) - len(rest) + rest.find(body[0])  # body = rest, JS-trimmed
    prefix = normalized[:start]
    return prefix.count("\n") + 1, start - (prefix.rfind("\n") + 1) + 1


def _yaml_start(text: str) -> tuple[int, int]:
    """(line, col) in the file, 1-based, where the YAML text begins (index 4)."""
    prefix = normalize_newlines(text)[:4]
    line = prefix.count("\n") + 1
    return line, len(prefix) - (prefix.rfind("\n") + 1) + 1


def _load_yaml(yaml_text: str, start: tuple[int, int]) -> object:
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        return load_yaml(yaml_text)
    except MarkedYAMLError as err:
        raise _located(err, start, yaml_text) from None
    except (YAMLError, ValueError, TypeError, RecursionError) as err:
        raise FrontmatterError(f"invalid YAML frontmatter: {err}", *start) from None


def _located(err, start: tuple[int, int], yaml_text: str) -> FrontmatterError:
    what = " ".join(s for s in (err.context, err.problem) if s) or "invalid YAML"
    at = _pi_position(err, yaml_text)
    if at is None:
        mark = err.problem_mark or err.context_mark
        if err.context_mark is not None and (mark is None or mark.index >= len(yaml_text)):
            mark = err.context_mark  # an end of stream pi does not reach: point at what was left open
        at = None if mark is None else (mark.line, mark.column)
    if at is None:
        return FrontmatterError(f"invalid YAML frontmatter: {what}", *start)
    line = start[0] + at[0]
    col = at[1] + (start[1] if at[0] == 0 else 1)
    return FrontmatterError(f"invalid YAML frontmatter: {what}", line, col)


def _pi_position(err, yaml_text: str) -> tuple[int, int] | None:
    """Where pi's parser reports an unclosed quoted scalar or flow collection (0-based line,
    col in the YAML text), when that is the error ruamel met; None otherwise.

    pi reports it where the construct's text ends: at the end of the text, or, for a flow
    collection inside a block collection, at the first later line (after its indentation)
    indented less than the block node that holds it, comment lines aside (its lexer's
    ``indentNext`` rule); a ``]``/``}`` one column short still closes it there."""
    context, problem = err.context or "", err.problem_mark
    if context.startswith("while scanning a quoted scalar"):
        return _text_end(yaml_text) if problem is not None and problem.index >= len(yaml_text) else None
    opener = err.context_mark
    lines = yaml_text.split("\n")
    if not context.startswith(_FLOW) or opener is None or problem is None or opener.line >= len(lines):
        return None
    need = _indent_next(lines, opener.line, opener.column)
    end = _text_end(yaml_text)
    for number in range(opener.line + 1, len(lines)):
        body = lines[number].lstrip(" ")
        indent = len(lines[number]) - len(body)
        if body and body[0] != "#" and indent < need:
            if indent == need - 1 and body[0] in "]}":
                return None  # pi lets this bracket close the collection
            end = (number, indent)
            break
    return end if (problem.line, problem.column) >= end or problem.index >= len(yaml_text) else None


_FLOW = ("while parsing a flow sequence", "while parsing a flow mapping")


def _text_end(yaml_text: str) -> tuple[int, int]:
    return yaml_text.count("\n"), len(yaml_text) - (yaml_text.rfind("\n") + 1)


def _indent_next(lines: list[str], number: int, column: int) -> int:
    """The indentation a line needs to stay inside a flow collection opened at (number,
    column): one more than the block node holding it (its ``- ``/``key: `` on the opening
    line, else the nearest less-indented line above); 0 at the root."""
    line = lines[number]
    indent = len(line) - len(line.lstrip(" "))
    held = _block_indent(line[:column].split("[", 1)[0].split("{", 1)[0], indent)
    if held is not None:
        return held
    for above in reversed(lines[:number]):
        body = above.lstrip(" ")
        above_indent = len(above) - len(body)
        if body and body[0] != "#" and above_indent < indent:
            return min(_block_indent(above, above_indent) or 0, indent)
    return 0


def _block_indent(prefix: str, indent: int) -> int | None:
    """``indentNext`` after the block indicators (``- ``, ``? ``, ``: ``) and a ``key: `` of
    one line's ``prefix``; None when it has neither."""
    need, value, rest = None, indent, prefix[indent:]
    while rest[:1] in ("-", "?", ":") and rest[1:2] in ("", " "):
        spaces = len(rest[1:]) - len(rest[1:].lstrip(" "))
        need, value, rest = value + 1, value + 1 + spaces, rest[1 + spaces :]
    if re.search(r":(?: |$)", rest):
        need = value + 1
    return need
