"""JavaScript strings: its whitespace set (``\\s``, ``trim()``), UTF-16 lengths and
slices, and ``sort()``'s UTF-16 code-unit order."""

from __future__ import annotations

from typing import Iterable


#: JavaScript's ``\\s`` / ``String.prototype.trim`` whitespace (ECMAScript WhiteSpace + LineTerminator).
JS_WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \u00a0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_WS_CLASS = "".join(sorted(JS_WHITESPACE)).replace("\\", "\\\\").replace("]", "\\]").replace("-", "\\-")
#: A regex character class equal to JavaScript's ``\\s``.
JS_WS_RE = f"[{_WS_CLASS}]"


def js_trim(s: str) -> str:
    """``String.prototype.trim``: strips JavaScript whitespace (:data:`JS_WHITESPACE`) at both ends."""
    start, end = 0, len(s)
    while start < end and s[start] in JS_WHITESPACE:
        start += 1
    while end > start and s[end - 1] in JS_WHITESPACE:
        end -= 1
    return s[start:end]


def js_trim_end(s: str) -> str:
    """``String.prototype.trimEnd``: strips JavaScript whitespace at the end only."""
    end = len(s)
    while end > 0 and s[end - 1] in JS_WHITESPACE:
        end -= 1
    return s[:end]


def u16len(s: str) -> int:
    """Length in UTF-16 code units, as JavaScript's ``.length`` (an astral character counts 2)."""
    if s.isascii():
        return len(s)
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def u16slice(s: str, start: int, end: int | None = None) -> str:
    """``s.slice(start, end)`` by UTF-16 units (non-negative bounds); may leave lone
    surrogates, as JavaScript does."""
    if s.isascii():
        return s[start:end]
    units = s.encode("utf-16-le", "surrogatepass")
    stop = None if end is None else end * 2
    return units[start * 2 : stop].decode("utf-16-le", "surrogatepass")


def utf16_key(s: str) -> bytes:
    """Sort key equal to JavaScript's default ``Array.prototype.sort`` order for strings
    (UTF-16 code units compared, so U+FF5E sorts after U+1F600)."""
    return s.encode("utf-16-be", "surrogatepass")


def js_sorted(items: Iterable[str]) -> list[str]:
    """``[...items].sort()`` for strings: UTF-16 code-unit order (see :func:`utf16_key`)."""
    return sorted(items, key=utf16_key)


