"""JSON on the proxy's path: orjson reads and writes where it gives the standard library's value.

Every request the policy reads is parsed once and, when the policy changes it, written once;
the conversation's chain hashes each message in canonical form, and the policies measure a
body by its JSON size. At 400 KB the standard library's writer costs about a millisecond a
call, orjson's (the ``[proxy]`` extra) a hundredth of that; its reader a fifth of the standard
library's. orjson reads an integer past 64 bits as a float: a body with a run of 19 digits
or more (every such integer has one; a byte scan, a tenth of the standard library's read)
is read by the standard library, as is one orjson refuses (``NaN``, an infinity, a lone
surrogate, UTF-16, not JSON: the standard library's value, or its error). Both writers give
the same compact form (UTF-8, no spaces, nothing escaped as ASCII; a float with an exponent
may come out shorter, ``1e-7`` for ``1e-07``). What orjson cannot write exactly (``NaN``,
an infinity, an integer past 64 bits, a lone surrogate) the standard library writes.
"""

from __future__ import annotations

import json
from typing import Any

try:
    import orjson
except ImportError:  # pragma: no cover - the [proxy] extra installs it; the stdlib serves without
    orjson = None  # type: ignore[assignment]


def loads(data: bytes) -> tuple[Any, bool]:
    """``data``'s value, and whether orjson may write it back (:func:`dumps`'s ``fast``): not
    when it holds ``NaN`` or an infinity, which orjson would write as ``null``.
    The standard library's :class:`json.JSONDecodeError` when it is not JSON."""
    if orjson is not None and _LONG_RUN not in data.translate(_DIGITS):
        try:
            return orjson.loads(data), True  # orjson reads no NaN nor infinity: it may write the value back
        except orjson.JSONDecodeError:
            pass  # what orjson refuses, the standard library reads (or refuses with its own message)
    finite = [True]

    def constant(name: str) -> float:
        finite[0] = False
        return float(name)

    def number(text: str) -> float:
        value = float(text)
        if value in (_INF, -_INF):
            finite[0] = False
        return value

    value = json.loads(data, parse_constant=constant, parse_float=number)
    return value, finite[0]


def dumps(value: Any, *, sort_keys: bool = False, fast: bool = True) -> bytes:
    """``value`` as compact UTF-8 JSON (keys sorted for a canonical form)."""
    if fast and orjson is not None:
        try:
            return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else 0)
        except orjson.JSONEncodeError:
            pass  # an integer past 64 bits, a lone surrogate: the standard library writes it
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys)
    return text.encode("utf-8", "surrogatepass")


_INF = float("inf")
#: every byte a space but the digits, each a "0": a run of 19 zeros is a run of 19 digits
_DIGITS = bytes(48 if 48 <= byte <= 57 else 32 for byte in range(256))
#: the shortest integer orjson reads as a float has 19 digits (below -2**63) or 20 (past 2**64 - 1)
_LONG_RUN = b"0" * 19
