"""The argument language's grammar, ``grammar/template_args.lark``, and its Lark parser.

The grammar is the single definition of the language. Two things are made from it:

* :func:`grammar_parts`: its terminals and rules as Lark compiles them (no parser
  tables), from which :mod:`.scanner` generates the fast regular-expression scanner
  that every parse goes through;
* :func:`parser` and :func:`build_lark`: the LALR parser itself, the reference the
  scanner is checked against (the tests compare both on every committed vector and on
  fuzzed bodies).
"""

from __future__ import annotations

from functools import cache

from lark import Lark, Token, Transformer, v_args
from lark.grammar import Rule
from lark.lexer import TerminalDef
from lark.load_grammar import load_grammar

from pipeline.gcpause import gc_paused
from pipeline.resources import grammar_text

from .nodes import AllArgs, Default, Literal, Node, Pos, Positional, Slice

GRAMMAR_FILE = "template_args.lark"

#: NEAR_* terminal name -> the ``near_miss`` kind stored on the Literal.
NEAR_MISS_KINDS = {
    "NEAR_BARE": "bare",
    "NEAR_OPERATOR": "operator",
    "NEAR_SPACED": "spaced",
    "NEAR_SLICE": "slice",
    "NEAR_UNCLOSED": "unclosed",
    "NEAR_NEGATIVE": "negative",
    "NEAR_NAME": "name",
    "NEAR_DIGIT": "digit",
}

#: Numbers are capped here: no argument list gets anywhere near this long, and Python
#: refuses to convert strings of more than 4300 digits.
NUMBER_CAP = 10**30


def number(digits: str) -> int:
    """The value of an ASCII digit string, capped at :data:`NUMBER_CAP`."""
    significant = digits.lstrip("0")
    return int(significant or "0") if len(significant) <= 30 else NUMBER_CAP


@cache
def grammar_parts() -> tuple[tuple[TerminalDef, ...], tuple[Rule, ...]]:
    """The grammar's terminals and rules, compiled by Lark (no parser tables are built)."""
    grammar, _ = load_grammar(grammar_text(GRAMMAR_FILE), GRAMMAR_FILE, None, False)
    terminals, rules, _ignore = grammar.compile(["start"], set())
    return tuple(terminals), tuple(rules)


def lexer_order(terminal: TerminalDef) -> tuple:
    """Lark's lexer tries terminals at one position in this order (first match wins)."""
    return (-terminal.priority, -terminal.pattern.max_width, -len(terminal.pattern.value), terminal.name)


# --- the reference: Lark's LALR parser ------------------------------------------------------


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
