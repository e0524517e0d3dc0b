"""JavaScript values as Python holds JSON: ``undefined``, and the conversions pi's code
relies on (``ToBoolean``, ``String(v)``, ``Number(v)``, ``== null``), plus reading an
object's keys the way JavaScript reads them (absent keys are ``undefined``; pi never
validates what it reads).

Values are JSON values as Python holds them (``dict``, ``list``/``tuple``, ``str``,
``int``, ``float``, ``bool``, ``None``), plus :data:`MISSING` for ``undefined``.
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable, Iterable, Mapping

from pipeline.js.numbers import number_to_string, to_double
from pipeline.js.strings import js_trim


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
        return number_to_string(value)
    if isinstance(value, (list, tuple)):
        return ",".join("" if js_nullish(v) else js_string(v, other=other) for v in value)
    if other is not None and not isinstance(value, dict):
        return other(value)
    return "[object Object]"


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
        return to_double(value)
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
        return to_double(int(text[2:], base)) if digits.match(text[2:]) else math.nan
    if not _NUMBER.match(text):
        return math.nan
    return float(text.replace("Infinity", "inf"))


# --------------------------------------------------------------------------- reading objects


def js_get(obj: Mapping[str, Any], key: str) -> Any:
    """``obj[key]`` with JavaScript's ``undefined`` (:data:`MISSING`) for an absent key
    (and for anything that is not a JSON object)."""
    return obj.get(key, MISSING) if isinstance(obj, dict) else MISSING


def str_at(obj: Mapping[str, Any], key: str) -> str | None:
    """``obj[key]`` when it is a string, else None (pi never validates what it reads)."""
    value = obj.get(key)
    return value if isinstance(value, str) else None


def num_at(obj: Mapping[str, Any], key: str) -> int | float | None:
    """``obj[key]`` when it is a JSON number (not a boolean), else None."""
    value = obj.get(key)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def js_object(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """An object literal: keys in the given order, ``undefined`` values left out (as ``JSON.stringify`` does)."""
    return {key: value for key, value in pairs if value is not MISSING}
