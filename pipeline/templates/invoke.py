"""``/name args`` invocation: pi's ``expandPromptTemplate``.

Only text that starts with ``/`` followed by a name (one or more non-whitespace
characters) and then either the end or a whitespace run can invoke a template; the
rest after that whitespace run is the argument string. Whitespace is JavaScript's set.
Names are compared exactly (case-sensitive); the first template with the name wins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Protocol

from pipeline.js import JS_WS_RE

from .args import parse_args
from .nodes import Template

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
