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

:func:`parse_args_16` is pi 1.6.0's splitter (the profile's ``templates.argument_splitting:
pi-1.6``): a quote opens only where no argument has started (``doesn't`` is one word),
``\\`` before the open quote character adds it, empty quotes give an empty argument, and a
quote still open at the end is literal text (the word is read again from after it).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Protocol

from pipeline.js import JS_WS_RE

if TYPE_CHECKING:
    from .plan import Template

_WS_CHARS = JS_WS_RE[1:-1]
#: Possessive repeats (``++``, ``*+``; Python 3.11+) where the runtime has them: the
#: alternatives below start with different characters and every repeat takes all it can,
#: so nothing is ever given back and the matches are the same, without the bookkeeping
#: for backtracking (findall about a fifth faster).
_P = "+" if sys.version_info >= (3, 11) else ""
#: One argument: plain runs and quoted runs glued together, up to a whitespace outside quotes.
_ARGUMENT = re.compile(rf"(?:[^\"'{_WS_CHARS}]+{_P}|\"[^\"]*{_P}\"?{_P}|'[^']*{_P}'?{_P})+{_P}")
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


def parse_args_16(text: str) -> list[str]:
    """pi 1.6.0's ``parseCommandArgs(text)``."""
    args: list[str] = []
    current, started, quote, opened, i, end = "", False, "", 0, 0, len(text)
    while i < end:
        ch = text[i]
        if quote:
            if ch == "\\" and i + 1 < end and text[i + 1] == quote:
                current += quote
                i += 1
            elif ch == quote:
                quote = ""
            else:
                current += ch
        elif (ch == '"' or ch == "'") and not started:
            quote, opened, started = ch, i, True
        elif ch in _WS_CHARS:
            if started:
                args.append(current)
                current, started = "", False
        else:
            current += ch
            started = True
        if quote and i == end - 1:  # never closed: the quote is text, the word is read again after it
            quote, current, i = "", text[opened], opened
        i += 1
    if started:
        args.append(current)
    return args


#: ``templates.argument_splitting`` → the splitter.
SPLITTERS = {"pi-0.84": parse_args, "pi-1.6": parse_args_16}


def split_args(text: str, splitting: str = "pi-0.84") -> list[str]:
    """The arguments in ``text`` by the named rule (``templates.argument_splitting``)."""
    return SPLITTERS[splitting](text)


def _inner(m: re.Match) -> str:
    return m.group(1) if m.group(1) is not None else m.group(2)


_INVOCATION = re.compile(rf"/([^{JS_WS_RE[1:-1]}]+)(?:{JS_WS_RE}+(.*))?\Z", re.DOTALL)


class Invocable(Protocol):
    """Anything with a ``name`` and a parsed ``template`` (e.g. a PromptTemplate)."""

    @property
    def name(self) -> str: ...

    @property
    def template(self) -> Template: ...


@dataclass(frozen=True)
class Invocation:
    """A ``/name args`` input split into its parts (the name may match no template)."""

    name: str
    args_text: str
    splitting: str = "pi-0.84"

    @property
    def args(self) -> list[str]:
        return split_args(self.args_text, self.splitting)


def match_invocation(text: str, splitting: str = "pi-0.84") -> Invocation | None:
    """Split ``/name args``; None when ``text`` has not that shape (``/``, ``/ x``, ``x``).
    ``splitting`` names how the arguments are split (``templates.argument_splitting``)."""
    if not text.startswith("/"):
        return None
    m = _INVOCATION.match(text)
    if m is None:
        return None
    return Invocation(m.group(1), m.group(2) or "", splitting)


def find_template(name: str, templates: Iterable[Invocable]) -> Invocable | None:
    """The first template called exactly ``name``, or None."""
    return next((t for t in templates if t.name == name), None)


def expand_input(text: str, templates: Iterable[Invocable], splitting: str = "pi-0.84") -> str:
    """The expansion of ``/name args`` when ``name`` is a known template, else ``text``."""
    call = match_invocation(text, splitting)
    found = find_template(call.name, templates) if call else None
    if found is None:
        return text
    if getattr(found, "dialect", "pi") != "pi":  # a template of another dialect expands its own way
        return found.invoke(call.args_text)
    return found.template.substitute(call.args)
