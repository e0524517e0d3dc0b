"""The parsed form of a template body: a frozen tree of placeholders and literal text.

A :class:`Template` is built once per body (see :func:`pipeline.templates.parse_template`)
and expanded many times with :meth:`Template.substitute`. Expansion is a single walk over
the nodes: argument values and default texts are inserted verbatim and never looked at
again, so ``$1``, ``$@``, ``$&`` or ``$$`` inside a value stay as they are.

Semantics follow pi 0.84.0's ``substituteArgs``: arguments are numbered from 1, a missing
argument is empty, ``${N:-text}`` falls back to ``text`` when the argument is missing or
the empty string, ``${@:N}`` treats 0 as 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class Template:
    """A parsed template body; ``nodes`` in source order, adjacent plain text merged."""

    body: str
    nodes: tuple[Node, ...]
    _plan: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        plan = tuple(n.text if isinstance(n, Literal) else n for n in self.nodes)
        object.__setattr__(self, "_plan", plan)

    def substitute(self, args: Sequence[str]) -> str:
        """Expand with ``args`` (already split); never fails, never rescans values."""
        joined = " ".join(args)
        return "".join([p if p.__class__ is str else p.render(args, joined) for p in self._plan])

    def source(self, node: Node) -> str:
        """The characters of the body that ``node`` was parsed from."""
        return self.body[node.pos.offset : node.pos.end]

    @property
    def placeholders(self) -> tuple[Node, ...]:
        """Every node that is not literal text."""
        return tuple(n for n in self.nodes if not isinstance(n, Literal))
