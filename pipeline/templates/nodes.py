"""The nodes of a parsed template body: placeholders and literal text, with positions.

:attr:`pipeline.templates.plan.Template.nodes` holds them in source order. ``render`` gives a
node's expansion: argument values and default texts are inserted verbatim and never
looked at again, so ``$1``, ``$@``, ``$&`` or ``$$`` inside a value stay as they are.

Semantics follow pi 0.84.0's ``substituteArgs``: arguments are numbered from 1, a missing
argument is empty, ``${N:-text}`` falls back to ``text`` when the argument is missing or
the empty string, ``${@:N}`` treats 0 as 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal as _Lit, Sequence, Union


@dataclass(frozen=True, slots=True)
class Pos:
    """Where a node starts (1-based ``line``/``col``, 0-based ``offset``) and ends (``end``).

    Offsets and columns count code points of the body.
    """

    line: int
    col: int
    offset: int
    end: int


@dataclass(frozen=True, slots=True)
class Literal:
    """Text copied to the output unchanged.

    ``near_miss`` names the kind of misspelt form this text looks like (``"bare"``,
    ``"operator"``, ``"spaced"``, ``"slice"``, ``"unclosed"``, ``"negative"``, ``"name"``,
    ``"digit"``), or is None for ordinary text. It never changes the output.
    """

    text: str
    pos: Pos
    near_miss: str | None = None

    def render(self, args: Sequence[str], joined: str) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Positional:
    """``$N`` (and the target of ``${N:-text}``): the N-th argument, 1-based."""

    index: int
    pos: Pos

    def value(self, args: Sequence[str]) -> str | None:
        """The argument, or None when there is none (``$0`` never has one)."""
        i = self.index - 1
        return args[i] if 0 <= i < len(args) else None

    def render(self, args: Sequence[str], joined: str) -> str:
        value = self.value(args)
        return "" if value is None else value


@dataclass(frozen=True, slots=True)
class AllArgs:
    """``$@`` or ``$ARGUMENTS``: every argument joined by single spaces."""

    pos: Pos
    spelling: _Lit["@", "ARGUMENTS"] = "@"

    def render(self, args: Sequence[str], joined: str) -> str:
        return joined


@dataclass(frozen=True, slots=True)
class Slice:
    """``${@:N}`` / ``${@:N:L}``: arguments from position N (0 counts as 1), at most L."""

    start: int
    length: int | None
    pos: Pos
    angle: bool = False

    def render(self, args: Sequence[str], joined: str) -> str:
        first = max(self.start - 1, 0)
        stop = None if self.length is None else first + self.length
        return " ".join(args[first:stop])


@dataclass(frozen=True, slots=True)
class Default:
    """``${N:-text}``, ``${@:-text}``, ``${ARGUMENTS:-text}``: the value, or ``text`` when empty."""

    target: Union[Positional, AllArgs]
    text: str
    pos: Pos
    angle: bool = False

    def render(self, args: Sequence[str], joined: str) -> str:
        if isinstance(self.target, AllArgs):
            value: str | None = joined
        else:
            value = self.target.value(args)
        return value if value else self.text


Node = Union[Literal, Positional, AllArgs, Slice, Default]
