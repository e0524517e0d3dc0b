"""Lark's LALR parser for the argument language: the reference the scanner is checked against.

Every parse goes through the generated scanner (:mod:`.scanner`); this parser is what the
tests compare it with, on every committed vector and on fuzzed bodies.
"""

from __future__ import annotations

from functools import cache

from lark import Lark, Token, Transformer, v_args

from pipeline.gcpause import gc_paused
from pipeline.resources import grammar_text

from .grammar import GRAMMAR_FILE, NEAR_MISS_KINDS, number
from .nodes import AllArgs, Default, Literal, Node, Pos, Positional, Slice


@cache
def parser() -> Lark:
    """The LALR parser for the argument language (built on first use).

    It builds the nodes while it parses (lark's inline transformer): no parse tree is
    made. Positions come from the tokens.
    """
    return Lark(
        grammar_text(GRAMMAR_FILE),
        parser="lalr",
        lexer="contextual",
        maybe_placeholders=True,
        transformer=_ToNodes(),
    )


def _pos(first: Token, last: Token | None = None) -> Pos:
    end = (last or first).end_pos
    return Pos(line=first.line, col=first.column, offset=first.start_pos, end=end)


@v_args(inline=True)
class _ToNodes(Transformer):
    """Grammar rules -> nodes, called by the parser as it reduces each rule."""

    def text(self, tok: Token) -> Literal:
        return Literal(str(tok), _pos(tok))

    def near_miss(self, tok: Token) -> Literal:
        return Literal(str(tok), _pos(tok), NEAR_MISS_KINDS[tok.type])

    def positional(self, tok: Token) -> Positional:
        return Positional(number(tok[1:]), _pos(tok))

    def all_args(self, tok: Token) -> AllArgs:
        return AllArgs(_pos(tok), "@" if tok == "$@" else "ARGUMENTS")

    def index_target(self, tok: Token) -> Positional:
        return Positional(number(tok), _pos(tok))

    def all_target(self, tok: Token) -> AllArgs:
        return AllArgs(_pos(tok), "@" if tok == "@" else "ARGUMENTS")

    def _default(self, opener: Token, target, text: Token | None, closer: Token) -> Default:
        angle = opener.type.startswith("ANGLE")
        return Default(target, "" if text is None else str(text), _pos(opener, closer), angle)

    def _slice(self, opener: Token, start: Token, length: Token | None, closer: Token) -> Slice:
        count = None if length is None else number(length)
        return Slice(number(start), count, _pos(opener, closer), opener.type.startswith("ANGLE"))

    braced_default = angle_default = _default
    braced_slice = angle_slice = _slice

    def start(self, *nodes: Node) -> list[Node]:
        return list(nodes)


def _merge_text(nodes: list[Node]) -> tuple[Node, ...]:
    """Join runs of plain Literal nodes (near misses stay separate)."""
    out: list[Node] = []
    run: list[Literal] = []
    for node in nodes:
        if isinstance(node, Literal) and node.near_miss is None:
            run.append(node)
            continue
        _flush(run, out)
        out.append(node)
    _flush(run, out)
    return tuple(out)


def _flush(run: list[Literal], out: list[Node]) -> None:
    if len(run) == 1:
        out.append(run[0])
    elif run:
        first, last = run[0].pos, run[-1].pos
        pos = Pos(first.line, first.col, first.offset, last.end)
        out.append(Literal("".join(n.text for n in run), pos))
    run.clear()


def build_lark(body: str) -> tuple[Node, ...]:
    """The nodes of ``body`` as Lark's parser reads them (the reference for the scanner).

    The cyclic garbage collector is paused meanwhile: a large body makes many small,
    acyclic objects.
    """
    with gc_paused():
        return _merge_text(parser().parse(body))
