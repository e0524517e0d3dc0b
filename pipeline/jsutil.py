"""JavaScript semantics pi relies on, reproduced once for the whole package.

pi is written in TypeScript: lengths are UTF-16 code units, ``\\s`` and ``trim()``
use JavaScript's whitespace set, ``JSON.stringify`` formats numbers its own way and
``sort()`` compares UTF-16 units. Every module that must match pi byte for byte uses
these helpers instead of the Python built-ins.
"""

from __future__ import annotations

import json
import math
import re

#: JavaScript's ``\\s`` / ``String.prototype.trim`` whitespace (ECMAScript WhiteSpace + LineTerminator).
JS_WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \u00a0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_WS_CLASS = "".join(sorted(JS_WHITESPACE)).replace("\\", "\\\\").replace("]", "\\]").replace("-", "\\-")
#: A regex character class equal to JavaScript's ``\\s``.
JS_WS_RE = f"[{_WS_CLASS}]"


def is_js_space(ch: str) -> bool:
    return ch in JS_WHITESPACE


def js_trim(s: str) -> str:
    """``String.prototype.trim``."""
    start, end = 0, len(s)
    while start < end and s[start] in JS_WHITESPACE:
        start += 1
    while end > start and s[end - 1] in JS_WHITESPACE:
        end -= 1
    return s[start:end]


def js_trim_end(s: str) -> str:
    end = len(s)
    while end > 0 and s[end - 1] in JS_WHITESPACE:
        end -= 1
    return s[:end]


def u16len(s: str) -> int:
    """Length in UTF-16 code units, as JavaScript's ``.length``."""
    if s.isascii():
        return len(s)
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def u16slice(s: str, start: int, end: int | None = None) -> str:
    """``s.slice(start, end)`` by UTF-16 units; may leave lone surrogates, as JavaScript does."""
    if s.isascii():
        return s[start:end]
    units = s.encode("utf-16-le", "surrogatepass")
    stop = None if end is None else end * 2
    return units[start * 2 : stop].decode("utf-16-le", "surrogatepass")


def utf16_key(s: str) -> bytes:
    """Sort key equal to JavaScript's default ``Array.prototype.sort`` order for strings."""
    return s.encode("utf-16-be", "surrogatepass")


def js_sorted(items) -> list[str]:
    return sorted(items, key=utf16_key)


def js_number(x: float | int) -> str:
    """Format a number as ``JSON.stringify`` / ``String(x)`` do."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if math.isnan(x) or math.isinf(x):
        return "null"
    if x == 0:
        return "0"
    if x.is_integer() and abs(x) < 2**53:
        return str(int(x))
    sign = "-" if x < 0 else ""
    mantissa, exponent = repr(abs(x)), 0
    if "e" in mantissa:
        mantissa, e = mantissa.split("e")
        exponent = int(e)
    if "." in mantissa:
        whole, frac = mantissa.split(".")
    else:
        whole, frac = mantissa, ""
    frac = frac.rstrip("0")
    digits = (whole + frac).lstrip("0")
    # position of the decimal point relative to the start of `digits`
    point = len(whole) + exponent - (len(whole + frac) - len((whole + frac).lstrip("0")))
    k, n = len(digits), point
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    head = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{head}e{'+' if e >= 0 else '-'}{abs(e)}"


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _js_string(s: str) -> str:
    out = json.dumps(s, ensure_ascii=False)
    if _LONE_SURROGATE.search(out):
        out = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)
    return out


def js_json(value) -> str:
    """``JSON.stringify(value)``: compact, raw non-ASCII, insertion order, JS numbers."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, (int, float)):
        return js_number(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{_js_string(str(k))}:{js_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(js_json(v) for v in value) + "]"
    raise TypeError(f"not JSON-serialisable: {type(value).__name__}")
