"""Split an argument string the way pi's ``parseCommandArgs`` does.

Outside quotes, ``"`` or ``'`` opens a quote (the quote character is dropped) and a
JavaScript whitespace character ends a non-empty argument. Inside a quote only the same
quote character closes it. An unterminated quote runs to the end; there are no escapes;
empty quotes make no argument; quoted parts glue to their neighbours (``a"b c"d`` is one
argument ``ab cd``).
"""

from __future__ import annotations

import re

from pipeline.js import JS_WS_RE

_WS_CHARS = JS_WS_RE[1:-1]
#: One piece of the argument string: a quoted run, a whitespace run or a plain run.
_PIECE = re.compile(rf"\"([^\"]*)\"?|'([^']*)'?|({JS_WS_RE}+)|([^\"'{_WS_CHARS}]+)")


def parse_args(text: str) -> list[str]:
    """``parseCommandArgs(text)``: the arguments in ``text``, quotes removed."""
    args: list[str] = []
    current: list[str] = []
    for m in _PIECE.finditer(text):
        if m.group(3) is not None:
            _end_argument(current, args)
        else:
            current.append(m.group(1) or m.group(2) or m.group(4) or "")
    _end_argument(current, args)
    return args


def _end_argument(current: list[str], args: list[str]) -> None:
    word = "".join(current)
    if word:
        args.append(word)
    current.clear()
