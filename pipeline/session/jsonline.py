"""One line of a session file that does not parse: why, where, and whether it was cut short.

* :func:`describe_error` turns the decoder's error into words with its column
  (``invalid JSON at column 17: a raw control character inside a string``);
* :func:`is_cut_object` tells a **JSON object cut short** (a write that stopped part
  way: everything read is valid JSON, only the end is missing) from any other bad
  line. The store repairs a torn last line by starting the next entry on a fresh line,
  which leaves exactly such a fragment behind, followed by the newline it wrote.

The test is a small scanner over JSON's grammar (RFC 8259, as ``JSON.parse`` reads it):
the text must start with ``{``, every token must be valid, the input must end inside
the object, and it may end in the middle of a token (``"ab``, ``tr``, ``12.``, ``"\\u0``).
A cut that swallowed a complete entry appended after it (``{"a":`` + a whole entry, as
a writer that does not repair torn lines leaves it) is not a plain fragment: the entry
it holds is lost, so it stays an error.
"""

from __future__ import annotations

import json
import re
from typing import Any

_WS = re.compile(r"[ \t\n\r]*")
#: A string's characters as an unrolled loop: runs of plain characters are one repeat of a
#: single character class, which the regular-expression engine walks in constant memory
#: (``(?:plain|escape)*`` kept state per character: gigabytes for a 50 MB torn line).
_CHARS = r'[^"\\\x00-\x1f]*(?:(?:\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*'
_STRING = re.compile(f'"{_CHARS}"')
_STRING_CUT = re.compile(f'"{_CHARS}(?:\\\\(?:u[0-9a-fA-F]{{0,3}})?)?\\Z')
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_NUMBER_CUT = re.compile(r"-(?:0|[1-9][0-9]*)?\Z|-?(?:0|[1-9][0-9]*)(?:\.[0-9]*|(?:\.[0-9]+)?[eE][-+]?[0-9]*)\Z")
_LITERALS = ("true", "false", "null")
_CUT = -1  # a token that runs to the end of the text

_REASONS = {
    "Expecting value": "expected a value",
    "Expecting property name enclosed in double quotes": "expected a key in double quotes",
    "Expecting ':' delimiter": "expected ':' after a key",
    "Expecting ',' delimiter": "expected ',' or a closing bracket",
    "Unterminated string starting at": "a string that is never closed",
    "Invalid control character at": "a raw control character inside a string (line breaks and tabs must be escaped)",
    "Invalid \\escape": "an invalid escape in a string",
    "Invalid \\uXXXX escape": "an invalid \\u escape in a string",
    "Extra data": "more text after the JSON value",
}


def describe_error(err: ValueError) -> str:
    """``invalid JSON at column N: reason`` (columns count characters from 1)."""
    if isinstance(err, json.JSONDecodeError):
        return f"invalid JSON at column {err.colno}: {_REASONS.get(err.msg, err.msg)}"
    return f"invalid JSON: {err}"  # NaN / Infinity, refused by the reader's decoder


def is_cut_object(text: str) -> bool:
    """True when ``text`` (one line, without its newline) is a JSON object cut short."""
    if not text.startswith("{"):
        return False
    scanner = _Scanner(text)
    return scanner.run() and not scanner.swallowed_entry()


class _Scanner:
    """Walks the tokens of ``text``; :meth:`run` says whether it ends inside the top object."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.stack: list[tuple[str, int]] = []  # open brackets with their positions
        self.last_closed: tuple[int, int] | None = None  # span of the last object closed

    def run(self) -> bool:
        text, pos, state = self.text, 0, "value"
        while True:
            pos = _WS.match(text, pos).end()
            if pos == len(text):
                return bool(self.stack)
            step = getattr(self, f"_{state}")(pos)
            if step is None:
                return False
            pos, state = step
            if pos == _CUT:
                return True
            if not self.stack:
                return False  # a complete object, followed by something: not cut short

    # Each state reads one token at pos and returns (new pos, next state), or None if invalid.

    def _value(self, pos: int) -> tuple[int, str] | None:
        char = self.text[pos]
        if char in "{[":
            self.stack.append((char, pos))
            return pos + 1, "first_key" if char == "{" else "first_value"
        end = _scalar(self.text, pos)
        return None if end is None else (end, "after")

    def _first_value(self, pos: int) -> tuple[int, str] | None:
        return self._close(pos) if self.text[pos] == "]" else self._value(pos)

    def _first_key(self, pos: int) -> tuple[int, str] | None:
        return self._close(pos) if self.text[pos] == "}" else self._key(pos)

    def _key(self, pos: int) -> tuple[int, str] | None:
        end = _string(self.text, pos)
        return None if end is None else (end, "colon")

    def _colon(self, pos: int) -> tuple[int, str] | None:
        return (pos + 1, "value") if self.text[pos] == ":" else None

    def _after(self, pos: int) -> tuple[int, str] | None:
        char, (bracket, _) = self.text[pos], self.stack[-1]
        if char == ",":
            return pos + 1, "key" if bracket == "{" else "value"
        return self._close(pos)

    def _close(self, pos: int) -> tuple[int, str] | None:
        bracket, start = self.stack[-1]
        if self.text[pos] != ("}" if bracket == "{" else "]"):
            return None
        self.stack.pop()
        if bracket == "{":
            self.last_closed = (start, pos + 1)
        return pos + 1, "after"

    def swallowed_entry(self) -> bool:
        """The text ends with a complete nested object that is itself a session entry."""
        if self.last_closed is None or self.text[self.last_closed[1]:].strip(" \t\n\r"):
            return False
        start, end = self.last_closed
        try:
            obj: Any = json.loads(self.text[start:end])
        except ValueError:
            return False
        return isinstance(obj, dict) and isinstance(obj.get("type"), str) and isinstance(obj.get("id"), str) \
            and "parentId" in obj


def _string(text: str, pos: int) -> int | None:
    match = _STRING.match(text, pos)
    if match:
        return match.end()
    return _CUT if _STRING_CUT.match(text, pos) else None


def _scalar(text: str, pos: int) -> int | None:
    """End of the string, number or literal at ``pos``; :data:`_CUT` when the text ends inside it."""
    if text[pos] == '"':
        return _string(text, pos)
    if _NUMBER_CUT.match(text, pos):
        return _CUT
    match = _NUMBER.match(text, pos)
    if match:
        return match.end()
    for literal in _LITERALS:
        if text.startswith(literal, pos):
            return pos + len(literal)
        if len(text) - pos < len(literal) and literal.startswith(text[pos:]):
            return _CUT
    return None
