"""JavaScript semantics pi relies on, reproduced once for the whole package.

pi is written in TypeScript: lengths are UTF-16 code units, ``\\s`` and ``trim()`` use
JavaScript's whitespace set, ``sort()`` compares UTF-16 units, ``JSON.stringify``
formats numbers its own way, and conditions, template literals and ``Number(v)``
convert values by JavaScript's rules. Every module that must match pi byte for byte
uses these helpers instead of the Python built-ins.

Values are JSON values as Python holds them (``dict``, ``list``/``tuple``, ``str``,
``int``, ``float``, ``bool``, ``None``), plus :data:`MISSING` for ``undefined``.
"""

from __future__ import annotations

import gc
import json
import math
import re
from json.encoder import encode_basestring
from typing import Any, Callable, Iterable

# --------------------------------------------------------------------------- whitespace

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
    """Whether ``ch`` matches JavaScript's ``\\s`` (NBSP, U+2028, BOM... included; U+0085 not)."""
    return ch in JS_WHITESPACE


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


# --------------------------------------------------------------------------- UTF-16


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


# --------------------------------------------------------------------------- values


class _Missing:
    """``undefined``: a key that is absent (JSON has no way to write it)."""

    _instance: "_Missing | None" = None

    def __new__(cls) -> "_Missing":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


#: JavaScript's ``undefined`` (an absent key), distinct from ``None`` (``null``).
MISSING: Any = _Missing()

#: Every integer up to this magnitude is exactly a JavaScript number (a double).
_MAX_SAFE = 2**53


def js_truthy(value: object) -> bool:
    """``ToBoolean(value)``, what ``if (value)`` and ``!value`` test.

    JS rule: ``undefined``, ``null``, ``false``, ``0``, ``-0``, ``NaN`` and ``""`` are false;
    everything else is true, ``[]``, ``{}`` and ``"0"`` included.
    """
    if value is MISSING or value is None or value is False:
        return False
    if isinstance(value, (int, float)):
        return not (value == 0 or value != value)
    if isinstance(value, str):
        return value != ""
    return True


def js_nullish(value: object) -> bool:
    """``value == null``. JS rule: true for ``null`` and ``undefined`` only."""
    return value is None or value is MISSING


def js_string(value: object, *, other: Callable[[object], str] | None = None) -> str:
    """``String(value)``, as template literals and ``+`` concatenation stringify.

    JS rule: strings as they are; ``undefined`` -> ``"undefined"``, ``null`` -> ``"null"``,
    booleans -> ``"true"``/``"false"``; numbers by ``Number::toString`` (``"NaN"``,
    ``"Infinity"``, ``"1e+21"``, ``"1e-7"``, ``-0`` -> ``"0"``); arrays are
    ``join(",")`` of their elements, ``null``/``undefined`` elements giving ``""``; other
    objects ``"[object Object]"``. ``other`` stringifies values that are not JavaScript
    values (dates, bytes...); by default they count as plain objects.
    """
    if isinstance(value, str):
        return value
    if value is MISSING:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _number_to_string(value)
    if isinstance(value, (list, tuple)):
        return ",".join("" if js_nullish(v) else js_string(v, other=other) for v in value)
    if other is not None and not isinstance(value, dict):
        return other(value)
    return "[object Object]"


def _number_to_string(x: int | float) -> str:
    """``Number::toString(x)``: :func:`js_number`, but ``NaN`` and infinities spelled out."""
    if isinstance(x, int) and not -_MAX_SAFE <= x <= _MAX_SAFE:
        x = _to_double(x)
    if isinstance(x, float) and (x != x or x in (math.inf, -math.inf)):
        return "NaN" if x != x else ("Infinity" if x > 0 else "-Infinity")
    return js_number(x)


def _to_double(x: int) -> float:
    """The JavaScript number an integer literal denotes: the nearest double, or +/-Infinity."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


_NUMBER = re.compile(r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)\Z")
_RADIX = {"0x": (16, re.compile(r"[0-9a-fA-F]+\Z")), "0o": (8, re.compile(r"[0-7]+\Z")),
          "0b": (2, re.compile(r"[01]+\Z"))}


def js_to_number(value: object) -> float:
    """``Number(value)`` for JSON values, always as a float.

    JS rule: ``undefined`` -> NaN, ``null`` -> 0, booleans -> 0/1; strings are trimmed
    (JavaScript whitespace), ``""`` -> 0, decimal literals (``Infinity``, ``.5``, ``1e3``)
    and ``0x``/``0o``/``0b`` integers are read, anything else -> NaN; arrays go through
    ``String(value)`` (``[]`` -> 0, ``[7]`` -> 7); other objects -> NaN.
    """
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int):
        return _to_double(value)
    if isinstance(value, float):
        return value
    if value is None:
        return 0.0
    if isinstance(value, (list, tuple)):
        return js_to_number(js_string(value))
    if not isinstance(value, str):
        return math.nan
    return _string_to_number(js_trim(value))


def _string_to_number(text: str) -> float:
    """``StringToNumber`` of an already trimmed string."""
    if not text:
        return 0.0
    radix = _RADIX.get(text[:2].lower())
    if radix is not None:
        base, digits = radix
        return _to_double(int(text[2:], base)) if digits.match(text[2:]) else math.nan
    if not _NUMBER.match(text):
        return math.nan
    return float(text.replace("Infinity", "inf"))


# --------------------------------------------------------------------------- numbers


def js_number(x: float | int) -> str:
    """A number as ``JSON.stringify`` writes it (``Number::toString``, non-finite -> ``null``).

    JS rule: the shortest digits that read back as the same double; positional notation
    for 1e-6 <= |x| < 1e21 (``0.000001``, ``123456789012345680000``), exponent notation
    otherwise (``1e-7``, ``1.5e+21``); ``-0`` -> ``"0"``; NaN and +/-Infinity -> ``"null"``
    (``String(x)`` spells those out, see :func:`js_string`). Integers beyond 2**53 are
    first rounded to the nearest double, as ``JSON.parse`` rounds them. Booleans give
    ``"true"``/``"false"``.
    """
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        if -_MAX_SAFE <= x <= _MAX_SAFE:
            return int.__repr__(x)
        x = _to_double(x)
    if math.isnan(x) or math.isinf(x):
        return "null"
    if x == 0:
        return "0"
    if x.is_integer() and abs(x) < _MAX_SAFE:
        return str(int(x))
    return _format_digits(x)


def _format_digits(x: float) -> str:
    """``Number::toString`` of a finite, non-zero double from its shortest ``repr`` digits."""
    sign = "-" if x < 0 else ""
    mantissa, exponent = repr(abs(x)), 0
    if "e" in mantissa:
        mantissa, e = mantissa.split("e")
        exponent = int(e)
    whole, _, frac = mantissa.partition(".")
    frac = frac.rstrip("0")
    digits = (whole + frac).lstrip("0")
    # n: position of the decimal point relative to the start of `digits`
    n = len(whole) + exponent - (len(whole + frac) - len(digits))
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    head = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{head}e{'+' if e >= 0 else '-'}{abs(e)}"


def _needs_js_text(x: object) -> bool:
    """Whether ``json.dumps`` writes the number ``x`` differently from ``JSON.stringify``.

    ``float.__repr__`` and JavaScript pick the same shortest digits; they differ in layout
    only for integral values (``1.0``), magnitudes below 1e-4 or from 1e16 on (``1e-05``
    vs ``0.00001``, ``1e+16`` vs ``10000000000000000``), NaN and infinities. Integers
    differ beyond 2**53, where a JavaScript number rounds.
    """
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return False
    if isinstance(x, int):
        return not -_MAX_SAFE <= x <= _MAX_SAFE
    return not _plain_float(x)


# --------------------------------------------------------------------------- JSON

#: The deepest nesting :func:`js_json` writes (``[[1]]`` is 2 levels). ``JSON.stringify``
#: recurses on the JavaScript stack: Node 22 with its default stack gives up (RangeError)
#: a little past 4,100 levels, sooner when called from deep code.
JS_JSON_MAX_DEPTH = 4096

_MARKER = "js-number-f6d1c0b7-3a2e-4c59-9b8e-a2f4e5d6c7b8"
_QUOTED_MARKER = f'"{_MARKER}"'
_SURROGATES = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")
_CHECK_CHUNK = 1 << 20
_END = object()
#: Scalars json.dumps always writes as JavaScript does.
_LEAF_TYPES = frozenset((str, bool, type(None)))


def js_json(value: object) -> str:
    """``JSON.stringify(value)``, byte for byte: compact, non-ASCII written raw, keys in
    insertion order, numbers as JavaScript writes them (:func:`js_number`; NaN and
    infinities -> ``null``), lone surrogates escaped (``\\udc80``).

    JS rule on key order: array-index keys (``"0"``, ``"17"``) come first, ascending,
    then the others in insertion order. Objects JavaScript wrote (all of pi's JSON) are
    already in that order, so insertion order is kept as is. Tuples are arrays. Non-string keys are written as ``json.dumps`` writes them (as
    ``String(key)`` for safe integers, booleans and ``None``). Raises ``TypeError`` for
    values that are not JSON (``MISSING`` included) and ``ValueError`` for nesting deeper
    than :data:`JS_JSON_MAX_DEPTH` or a value that contains itself. Not recursive: the
    common case runs in ``json.dumps``; numbers ``json.dumps`` would write otherwise are
    swapped in by marker, and values too deep for it are written by an explicit stack.
    """
    if not isinstance(value, (dict, list, tuple)):
        return _escape_surrogates(_scalar_json(value))
    collecting = gc.isenabled()
    gc.disable()  # the scan and the copies allocate much and make no cycles: no collector passes
    try:
        return _escape_surrogates(_encode(value))
    finally:
        if collecting:
            gc.enable()


def _encode(value: dict | list | tuple) -> str:
    """``JSON.stringify`` of a container, surrogates not yet escaped."""
    marked = _scan(value)
    try:
        return _dumps(value, marked)
    except (RecursionError, _MarkerClash):
        return _dumps_deep(value)


def _scan(root: dict | list | tuple) -> set[int]:
    """Ids of the containers holding, at any depth, a number :func:`_needs_js_text`.

    Walks with an explicit stack; raises ``ValueError`` past :data:`JS_JSON_MAX_DEPTH`
    (which is also how a value containing itself ends). Exact types are tested first:
    this loop visits every node of the value.
    """
    marked: set[int] = set()
    stack: list[tuple] = [(root, 1, None)]
    while stack:
        frame = stack.pop()
        container, depth = frame[0], frame[1]
        if depth > JS_JSON_MAX_DEPTH:
            raise ValueError(f"js_json: value nested deeper than {JS_JSON_MAX_DEPTH} levels "
                             "(JSON.stringify overflows its stack), or it contains itself")
        depth += 1
        for item in container.values() if isinstance(container, dict) else container:
            kind = type(item)
            if kind in _LEAF_TYPES:
                continue
            if kind is dict or kind is list:
                stack.append((item, depth, frame))
                continue
            if kind is int and -_MAX_SAFE <= item <= _MAX_SAFE or kind is float and _plain_float(item):
                continue
            if isinstance(item, (dict, list, tuple)):
                stack.append((item, depth, frame))
            elif _needs_js_text(item):
                _mark(frame, marked)
    return marked


def _plain_float(x: float) -> bool:
    """Whether ``float.__repr__`` writes ``x`` as JavaScript does (see :func:`_needs_js_text`)."""
    return 1e-4 <= abs(x) < 1e16 and not x.is_integer()


def _mark(frame: tuple | None, marked: set[int]) -> None:
    """Mark a scan frame's container and all its ancestors."""
    while frame is not None and id(frame[0]) not in marked:
        marked.add(id(frame[0]))
        frame = frame[2]


class _MarkerClash(Exception):
    """The value itself holds the marker string: the marker splice would be ambiguous."""


class _JSNumber:
    """A number's JavaScript text, standing in for it while ``json.dumps`` runs."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _unsupported(o: object) -> Any:
    raise TypeError(f"not JSON-serialisable: {type(o).__name__}")


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False,
                            check_circular=False, default=_unsupported)


def _dumps(value: object, marked: set[int]) -> str:
    """``json.dumps`` (C encoder; ``_scan`` already ruled out cycles) with the numbers in
    ``marked`` containers swapped for their JavaScript text."""
    if not marked:
        return _ENCODER.encode(value)
    texts: list[str] = []

    def default(o: object) -> Any:
        if type(o) is _JSNumber:
            texts.append(o.text)
            return _MARKER
        return _unsupported(o)

    encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False,
                               check_circular=False, default=default)
    parts = encoder.encode(_substitute(value, marked)).split(_QUOTED_MARKER)
    if len(parts) != len(texts) + 1:
        raise _MarkerClash
    out = [parts[0]]
    for text, part in zip(texts, parts[1:]):
        out += (text, part)
    return "".join(out)


def _substitute(container: dict | list | tuple, marked: set[int]) -> dict | list:
    """A copy of a marked container: numbers needing JavaScript text wrapped in
    :class:`_JSNumber`, marked children copied likewise, the rest shared."""
    copy: dict | list = dict(container) if isinstance(container, dict) else list(container)
    for key, item in container.items() if isinstance(container, dict) else enumerate(container):
        kind = type(item)
        if kind in _LEAF_TYPES or kind is int and -_MAX_SAFE <= item <= _MAX_SAFE:
            continue
        if id(item) in marked:
            copy[key] = _substitute(item, marked)
        elif _needs_js_text(item):
            copy[key] = _JSNumber(js_number(item))  # type: ignore[arg-type]
    return copy


def _dumps_deep(value: object) -> str:
    """What :func:`_dumps` writes, with an explicit stack instead of recursion."""
    out: list[str] = []
    stack: list[list] = []  # [items iterator, is a dict, closing bracket, wrote an item]
    _open_or_write(value, out, stack)
    while stack:
        frame = stack[-1]
        item = next(frame[0], _END)
        if item is _END:
            out.append(frame[2])
            stack.pop()
            continue
        if frame[3]:
            out.append(",")
        frame[3] = True
        if frame[1]:
            key, item = item
            out.append(_key_json(key) + ":")
        _open_or_write(item, out, stack)
    return "".join(out)


def _open_or_write(value: object, out: list[str], stack: list[list]) -> None:
    """Write a scalar, or open a container and push its frame."""
    if isinstance(value, (list, tuple)):
        out.append("[")
        stack.append([iter(value), False, "]", False])
    elif isinstance(value, dict):
        out.append("{")
        stack.append([iter(value.items()), True, "}", False])
    else:
        out.append(_scalar_json(value))


def _scalar_json(value: object) -> str:
    """``JSON.stringify`` of a string, number, boolean or null (surrogates not yet escaped)."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return encode_basestring(value)
    if isinstance(value, (int, float)):
        return js_number(value)
    return _unsupported(value)


def _key_json(key: object) -> str:
    """An object key as ``json.dumps`` writes it (C encoder rules)."""
    if isinstance(key, str):
        return encode_basestring(key)
    if isinstance(key, float) or key is True or key is False or key is None:
        return encode_basestring(_ENCODER.encode(key))
    if isinstance(key, int):
        return encode_basestring(int.__repr__(key))
    return _unsupported_key(key)


def _unsupported_key(key: object) -> str:
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _escape_surrogates(text: str) -> str:
    """``JSON.stringify``'s handling of UTF-16 surrogates: a lone one is escaped
    (``\\ud800``); a high one followed by a low one is the character they encode."""
    if text.isascii() or not _has_surrogate(text):
        return text
    return _SURROGATES.sub(_surrogate_text, text)


def _has_surrogate(text: str) -> bool:
    """Cheaply (UTF-8 encoding rejects surrogates), chunk by chunk to bound memory."""
    try:
        for start in range(0, len(text), _CHECK_CHUNK):
            text[start : start + _CHECK_CHUNK].encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _surrogate_text(match: re.Match[str]) -> str:
    """A surrogate pair as its character; a lone surrogate as a lowercase ``\\uXXXX`` escape."""
    units = match.group()
    if len(units) == 2:
        return units.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    return f"\\u{ord(units):04x}"
