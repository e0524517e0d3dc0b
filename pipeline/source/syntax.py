"""YAML syntax errors in our words, keyed by example inputs (lark's ``match_examples`` way).

Each row is a small broken YAML text, the message and hint we give for it, and which of
ruamel's two marks locates it: ``problem`` (where ruamel noticed) or ``context`` (where
the construct began: the opening quote of an unclosed string, the `[` of an unclosed
list). On first use every example is parsed and the error it raises is reduced to a
signature (error class, ruamel's context and problem texts); a real error is classified
by the example whose signature it shares, exactly first, then with quoted characters
masked. Our wording therefore never depends on matching ruamel's sentences by hand, and
a ruamel upgrade that changes them shows up as a failing row in the tests.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from functools import cache
from typing import Literal

from pipeline.errors import Location, Problem


@dataclass(frozen=True)
class SyntaxExample:
    example: str
    message: str
    hint: str | None
    at: Literal["problem", "context"] = "problem"


EXAMPLES: tuple[SyntaxExample, ...] = (
    SyntaxExample("a:\n\tb: 1\n", "tab character where YAML expects spaces", "indent with spaces"),
    SyntaxExample("a: @x\n", "a plain value cannot start with `@` or `` ` ``", "put the value in quotes"),
    SyntaxExample("a: b: c\n", "unexpected `:`", "put text that contains `: ` in quotes, or fix the indentation"),
    SyntaxExample("a: *nope\n", "unknown alias", "an alias `*name` needs an anchor `&name` earlier in the file"),
    SyntaxExample("a: & 1\n", "an anchor `&` without a name", "write `&name` right before the value"),
    SyntaxExample("a: 1\n---\nb: 2\n", "more than one YAML document", "a profile is one document; remove the extra `---`"),
    SyntaxExample('a: "never closed\nb: 1\n', "unclosed quote", "close the quoted text", "context"),
    SyntaxExample("a: 'never closed\nb: 1\n", "unclosed quote", "close the quoted text", "context"),
    SyntaxExample('a: "x\\qy"\n', "unknown escape sequence in double-quoted text",
                  "write `\\\\` for a backslash, or use single quotes"),
    SyntaxExample('a: "quoted" more\n', "text after a quoted value", "quote the whole value, or nothing of it"),
    SyntaxExample("a:\n  b: 1\n c: 2\n", "bad indentation", "entries of one mapping or list must line up"),
    SyntaxExample("a:\n  - 1\n - 2\n", "bad indentation", "entries of one mapping or list must line up"),
    SyntaxExample("- a\nb: 1\n", "a list entry and a mapping key at the same level",
                  "a level holds either `- ` entries or `key:` entries"),
    SyntaxExample("a: [1, 2\n", "unclosed bracket", "close every `[` and `{`", "context"),
    SyntaxExample("a: [1, 2\nb: 3\n", "unclosed bracket", "close every `[` and `{`", "context"),
    SyntaxExample("a: {b: 1\n", "unclosed bracket", "close every `[` and `{`", "context"),
    SyntaxExample("a: {b: 1\nc: 2\n", "unclosed bracket", "close every `[` and `{`", "context"),
    SyntaxExample("a: [1, 2]]\n", "a closing bracket with no opening one", "remove it, or open the list or mapping"),
    SyntaxExample("a: 1\nb\n", "missing `:` after a key", "write `key: value`", "context"),
    SyntaxExample("a: |x\n  b\n", "invalid block scalar header",
                  "after `|` or `>` only `+`, `-` or an indentation digit may follow"),
)

_QUOTED = re.compile(r"'(?!<)[^']*'")


def _signature(err, masked: bool) -> tuple:
    def text(value):
        value = value or ""
        return _QUOTED.sub("'…'", value) if masked else value

    return type(err).__name__, text(err.context), text(err.problem)


def _compose(text: str):
    from ruamel.yaml import YAML

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        YAML(typ="rt", pure=True).compose(text)


def example_error(example: str):
    """The ruamel error an example raises (each example must raise one)."""
    from ruamel.yaml.error import MarkedYAMLError

    try:
        _compose(example)
    except MarkedYAMLError as err:
        return err
    raise AssertionError(f"the example {example!r} is valid YAML")


@cache
def _table() -> tuple[dict, dict]:
    exact: dict[tuple, SyntaxExample] = {}
    masked: dict[tuple, SyntaxExample] = {}
    for row in EXAMPLES:
        err = example_error(row.example)
        exact.setdefault(_signature(err, False), row)
        masked.setdefault(_signature(err, True), row)
    return exact, masked


def match_example(err) -> SyntaxExample | None:
    """The example row whose error has ``err``'s signature, or None."""
    exact, masked = _table()
    return exact.get(_signature(err, False)) or masked.get(_signature(err, True))


def syntax_problem(err, label: str) -> Problem:
    """A ruamel ``MarkedYAMLError`` as our located problem."""
    row = match_example(err)
    mark = (err.context_mark if row and row.at == "context" else None) or err.problem_mark or err.context_mark
    where = Location(label, mark.line + 1, mark.column + 1) if mark else Location(label)
    if row is not None:
        return Problem(row.message, where, hint=row.hint, code="profile.yaml-syntax")
    problem = err.problem or err.context or "invalid YAML"
    context = f"{err.context} at line {err.context_mark.line + 1}" if err.context and err.context_mark else None
    return Problem(f"invalid YAML: {problem}", where, hint=context, code="profile.yaml-syntax")
