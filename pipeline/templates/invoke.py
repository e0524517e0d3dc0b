"""``/name args`` invocation: pi's ``expandPromptTemplate`` and ``parseCommandArgs``.

Only text that starts with ``/`` followed by a name (one or more non-whitespace
characters) and then either the end or a whitespace run can invoke a template; the
rest after that whitespace run is the argument string. Whitespace is JavaScript's set.
Names are compared exactly (case-sensitive); the first template with the name wins.

The argument string is split as pi's ``parseCommandArgs`` does: outside quotes, ``"`` or
``'`` opens a quote (the quote character is dropped) and a JavaScript whitespace character
ends a non-empty argument. Inside a quote only the same quote character closes it. An
unterminated quote runs to the end; there are no escapes; empty quotes make no argument;
quoted parts glue to their neighbours (``a"b c"d`` is one argument ``ab cd``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Protocol

from pipeline.js import JS_WS_RE

from .plan import Template

_WS_CHARS = JS_WS_RE[1:-1]
#: One argument: quoted runs and plain runs glued together, up to a whitespace outside quotes.
_ARGUMENT = re.compile(rf"(?:\"[^\"]*\"?|'[^']*'?|[^\"'{_WS_CHARS}]+)+")
#: One quoted run (its quotes are dropped).
_QUOTED = re.compile(r"\"([^\"]*)\"?|'([^']*)'?")


def parse_args(text: str) -> list[str]:
    """``parseCommandArgs(text)``: the arguments in ``text``, quotes removed."""
    words = _ARGUMENT.findall(text)
    if '"' not in text and "'" not in text:
        return words
    args = []
    for word in words:  # a word with one kind of quote only: every one of them is a delimiter
        if '"' in word:
            word = _QUOTED.sub(_inner, word) if "'" in word else word.replace('"', "")
        elif "'" in word:
            word = word.replace("'", "")
        if word:
            args.append(word)
    return args


def _inner(m: re.Match) -> str:
    return m.group(1) if m.group(1) is not None else m.group(2)


_INVOCATION = re.compile(rf"/([^{JS_WS_RE[1:-1]}]+)(?:{JS_WS_RE}+(.*))?\Z", re.DOTALL)


class Invocable(Protocol):
    """Anything with a ``name`` and a parsed ``template`` (e.g. a PromptTemplate)."""

    name: str
    template: Template


@dataclass(frozen=True)
class Invocation:
    """A ``/name args`` input split into its parts (the name may match no template)."""

    name: str
    args_text: str

    @property
    def args(self) -> list[str]:
        return parse_args(self.args_text)


def match_invocation(text: str) -> Invocation | None:
    """Split ``/name args``; None when ``text`` has not that shape (``/``, ``/ x``, ``x``)."""
    if not text.startswith("/"):
        return None
    m = _INVOCATION.match(text)
    if m is None:
        return None
    return Invocation(m.group(1), m.group(2) or "")


def find_template(name: str, templates: Iterable[Invocable]) -> Invocable | None:
    """The first template called exactly ``name``, or None."""
    return next((t for t in templates if t.name == name), None)


def expand_input(text: str, templates: Iterable[Invocable]) -> str:
    """The expansion of ``/name args`` when ``name`` is a known template, else ``text``."""
    call = match_invocation(text)
    found = find_template(call.name, templates) if call else None
    if found is None:
        return text
    return found.template.substitute(call.args)
