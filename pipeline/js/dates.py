"""Dates as pi's JavaScript makes and reads them: ``new Date().toISOString()`` for entry
timestamps (:func:`iso_timestamp`), ``new Date(value).getTime()`` turning them into
epoch milliseconds (:func:`date_ms`)."""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta, timezone
from typing import Any

from pipeline.js.values import MISSING, js_to_number


def iso_timestamp(moment: datetime | None = None) -> str:
    """``new Date().toISOString()``: ``2026-08-11T08:14:03.037Z``."""
    moment = moment or datetime.now(timezone.utc)
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


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
        return _time_clip(js_to_number(value))
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
