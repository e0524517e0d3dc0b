"""JavaScript numbers as text: ``Number::toString`` and ``JSON.stringify``'s digits."""

from __future__ import annotations

import math

#: Every integer up to this magnitude is exactly a JavaScript number (a double).
MAX_SAFE = 2**53


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
        if -MAX_SAFE <= x <= MAX_SAFE:
            return int.__repr__(x)
        x = to_double(x)
    if math.isnan(x) or math.isinf(x):
        return "null"
    if x == 0:
        return "0"
    if x.is_integer() and abs(x) < MAX_SAFE:
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


def number_to_string(x: int | float) -> str:
    """``Number::toString(x)``: :func:`js_number`, but ``NaN`` and infinities spelled out."""
    if isinstance(x, int) and not -MAX_SAFE <= x <= MAX_SAFE:
        x = to_double(x)
    if isinstance(x, float) and (x != x or x in (math.inf, -math.inf)):
        return "NaN" if x != x else ("Infinity" if x > 0 else "-Infinity")
    return js_number(x)


def to_double(x: int) -> float:
    """The JavaScript number an integer literal denotes: the nearest double, or +/-Infinity."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf
