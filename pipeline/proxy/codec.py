"""JSON on the proxy's path: the standard library reads, orjson writes where it can.

Every request the policy reads is parsed once and, when the policy changes it, written once;
the conversation's chain hashes each message in canonical form, and the policies measure a
body by its JSON size. At 400 KB the standard library's writer costs about a millisecond a
call, orjson's (the ``[proxy]`` extra) a hundredth of that; its reader is barely faster and
turns an integer past 64 bits into a float, so the standard library reads. Both writers give
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
