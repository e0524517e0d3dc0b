"""``JSON.stringify``, byte for byte: :func:`js_json`."""

from __future__ import annotations

import json
import re
from json.encoder import encode_basestring
from typing import Any

from pipeline.gcpause import gc_paused
from pipeline.js.numbers import MAX_SAFE, js_number


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
    with gc_paused():  # the scan and the copies allocate much and make no cycles: no collector passes
        return _escape_surrogates(_encode(value))


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
            if kind is int and -MAX_SAFE <= item <= MAX_SAFE or kind is float and _plain_float(item):
                continue
            if isinstance(item, (dict, list, tuple)):
                stack.append((item, depth, frame))
            elif _needs_js_text(item):
                _mark(frame, marked)
    return marked


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
        return not -MAX_SAFE <= x <= MAX_SAFE
    return not _plain_float(x)


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
        if kind in _LEAF_TYPES or kind is int and -MAX_SAFE <= item <= MAX_SAFE:
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
