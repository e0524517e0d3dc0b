"""The argument language's grammar, ``grammar/template_args.lark``.

The grammar is the single definition of the language. Two things are made from it:

* :func:`grammar_parts`: its terminals and rules as Lark compiles them (no parser
  tables), from which :mod:`.scanner` generates the fast regular-expression scanner
  that every parse goes through;
* :mod:`.reference`: the LALR parser itself, the reference the scanner is checked
  against (the tests compare both on every committed vector and on fuzzed bodies).

Lark is imported when the grammar is compiled, not with this module: a start whose
scanner comes from the cache (:func:`.scanner.scanner`) never imports it.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from pipeline.resources import grammar_text

if TYPE_CHECKING:
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

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
    from lark.load_grammar import load_grammar

    grammar, _ = load_grammar(grammar_text(GRAMMAR_FILE), GRAMMAR_FILE, None, False)
    terminals, rules, _ignore = grammar.compile(["start"], set())
    return tuple(terminals), tuple(rules)


def lexer_order(terminal: TerminalDef) -> tuple:
    """Lark's lexer tries terminals at one position in this order (first match wins)."""
    return (-terminal.priority, -terminal.pattern.max_width, -len(terminal.pattern.value), terminal.name)
