"""JavaScript value semantics that pi's session code relies on.

pi reads session lines with ``JSON.parse`` and never validates them, so a projection
that must equal pi's has to treat odd values the way JavaScript does: a missing key
(``undefined``) differs from ``null``, truthiness follows JS rules, template literals
stringify with ``String(v)`` and ``new Date(iso).getTime()`` turns entry timestamps
into epoch milliseconds. These helpers are that small, explicit subset.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta, timezone
from typing import Any, Iterable, Mapping

from pipeline.jsutil import js_number, js_trim


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


MISSING: Any = _Missing()


def get(obj: Mapping[str, Any], key: str) -> Any:
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


def truthy(value: Any) -> bool:
    """JavaScript truthiness: ``[]`` and ``{}`` are true; ``""``, ``0``, ``NaN``, null, undefined false."""
    if value is MISSING or value is None or value is False:
        return False
    if isinstance(value, (int, float)):
        return not (value == 0 or (isinstance(value, float) and math.isnan(value)))
    if isinstance(value, str):
        return value != ""
    return True


def nullish(value: Any) -> bool:
    """``value == null`` in JavaScript: null or undefined."""
    return value is None or value is MISSING


def js_str(value: Any) -> str:
    """``String(value)``, as a template literal or ``+`` concatenation stringifies it."""
    if isinstance(value, str):
        return value
    if value is MISSING:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _number_str(value)
    if isinstance(value, (list, tuple)):
        return ",".join("" if nullish(v) else js_str(v) for v in value)
    return "[object Object]"


def _number_str(value: float | int) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
    return js_number(value)


_NUMBER = re.compile(r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)\Z")
_RADIX = {"0x": (16, re.compile(r"[0-9a-fA-F]+\Z")), "0o": (8, re.compile(r"[0-7]+\Z")),
          "0b": (2, re.compile(r"[01]+\Z"))}


def js_to_number(value: Any) -> float:
    """``Number(value)`` for JSON values (NaN for what JavaScript cannot read as a number)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if value is None:
        return 0.0
    if isinstance(value, list):
        return js_to_number(js_str(value))
    if not isinstance(value, str):
        return math.nan
    return _string_to_number(js_trim(value))


def _string_to_number(text: str) -> float:
    if not text:
        return 0.0
    radix = _RADIX.get(text[:2].lower())
    if radix is not None:
        base, digits = radix
        return float(int(text[2:], base)) if digits.match(text[2:]) else math.nan
    if not _NUMBER.match(text):
        return math.nan
    return float(text.replace("Infinity", "inf"))


def compact(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """An object literal: keys in the given order, ``undefined`` values left out (as ``JSON.stringify`` does)."""
    return {key: value for key, value in pairs if value is not MISSING}


_ISO = re.compile(
    r"([+-]\d{6}|\d{4})(?:-(\d{2})(?:-(\d{2}))?)?"
    r"(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:\d{2})?)?\Z"
)
_MAX_TIME = 8.64e15


def date_ms(value: Any) -> float | int | None:
    """``new Date(value).getTime()``; ``None`` stands for ``NaN`` (``JSON.stringify`` writes null).

    Strings follow the ECMAScript date-time format (the format pi writes); date-only
    forms are UTC, date-times without an offset are local time. Other strings are
    treated as invalid dates (V8's legacy fallback parser is not reproduced).
    """
    if value is MISSING:
        return None
    if value is None or value is False:
        return 0
    if value is True:
        return 1
    if isinstance(value, (int, float)):
        return _time_clip(float(value))
    if isinstance(value, str):
        return _parse_iso(value)
    return None


def _time_clip(ms: float) -> int | None:
    if math.isnan(ms) or math.isinf(ms) or abs(ms) > _MAX_TIME:
        return None
    return int(ms)


def _parse_iso(text: str) -> int | None:
    match = _ISO.match(text)
    if not match or match.group(1) == "-000000":
        return None
    year_s, month_s, day_s, hour_s, minute_s, second_s, frac, zone = match.groups()
    year, month, day = int(year_s), int(month_s or 1), int(day_s or 1)
    hour, minute, second = int(hour_s or 0), int(minute_s or 0), int(second_s or 0)
    millis = int((frac or "0")[:3].ljust(3, "0"))
    if not (1 <= month <= 12 and 1 <= day <= _days_in_month(year, month)):
        return None
    if hour == 24 and (minute, second, millis) != (0, 0, 0) or hour > 24 or minute > 59 or second > 59:
        return None
    ms = _days_from_civil(year, month, day) * 86_400_000
    ms += ((hour * 60 + minute) * 60 + second) * 1000 + millis
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        ms -= sign * (int(zone[1:3]) * 60 + int(zone[4:6])) * 60_000
    elif zone is None and hour_s is not None:
        ms -= _local_offset_ms(ms)
    return _time_clip(float(ms))


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return 29 if leap else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _days_from_civil(year: int, month: int, day: int) -> int:
    year -= month <= 2
    era = (year if year >= 0 else year - 399) // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _local_offset_ms(wall_ms: int) -> int:
    try:
        guess = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=wall_ms)
        offset = guess.astimezone().utcoffset()
    except (OverflowError, ValueError, OSError):
        return 0
    return int(offset.total_seconds() * 1000) if offset else 0
