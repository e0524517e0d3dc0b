"""Static analysis of a template body: which arguments it uses, and suspicious spellings.

:func:`analyze` reads the parsed :class:`~.nodes.Template` (no expansion): the highest
position used, whether all arguments or slices are used, defaults, an arity summary
(:meth:`Arity.hint` gives an argument hint such as ``<1> <2> [rest...]``) and
:class:`Finding` s for forms that probably do not do what their author meant (``$0``,
``${@:0}``, ``${1}``, ``${1-x}``, ``$ARGS``, an unclosed ``$<@:2`` ...), each with a
position and a hint. Findings never change expansion; ``pipeline validate`` shows them.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal as _Lit

from pipeline.errors import Location, Problem

from .nodes import AllArgs, Default, Literal, Node, Positional, Slice
from .plan import Template, parse_template

#: Positions beyond this are not listed one by one in the arity summary.
MAX_LISTED_POSITION = 64
_EXCERPT = 40


@dataclass(frozen=True)
class Finding:
    """A suspicious spot in a template body (1-based ``line``/``col``)."""

    code: str
    message: str
    line: int
    col: int
    severity: _Lit["warning", "info"] = "warning"
    hint: str | None = None

    def to_problem(self, file: str | None = None, key: str | None = None) -> Problem:
        """As a :class:`Problem` located in ``file``, with the finding's severity."""
        return Problem(self.message, Location(file, self.line, self.col), key=key,
                       hint=self.hint, severity=self.severity, code=self.code)


@dataclass(frozen=True)
class Arity:
    """Positions a template reads: ``required`` (``$N``), ``optional`` (defaults, slices)."""

    required: tuple[int, ...] = ()
    optional: tuple[int, ...] = ()
    variadic_from: int | None = None

    @property
    def highest(self) -> int:
        return max((*self.required, *self.optional), default=0)

    def hint(self) -> str:
        """An argument hint: ``<n>`` required, ``[n]`` optional or skipped, then ``[rest...]``."""
        top = self.highest
        if self.variadic_from is not None:
            top = max(top, min(self.variadic_from, MAX_LISTED_POSITION + 1) - 1)
        words = [f"<{i}>" if i in self.required else f"[{i}]" for i in range(1, top + 1)]
        if self.variadic_from is not None:
            words.append("[rest...]" if words else "[args...]")
        return " ".join(words)


@dataclass(frozen=True)
class TemplateAnalysis:
    """What :func:`analyze` found out about one body."""

    highest_positional: int
    uses_all_args: bool
    uses_slices: bool
    has_defaults: bool
    arity: Arity
    findings: tuple[Finding, ...]

    @property
    def argument_hint(self) -> str:
        return self.arity.hint()


def analyze(body: str | Template) -> TemplateAnalysis:
    """Analyse a template body (a string, or an already parsed Template)."""
    template = body if isinstance(body, Template) else parse_template(body)
    nodes = template.nodes
    return TemplateAnalysis(
        highest_positional=max((i for i in _indexes(nodes)), default=0),
        uses_all_args=any(_all_args(n) for n in nodes),
        uses_slices=any(isinstance(n, Slice) for n in nodes),
        has_defaults=any(isinstance(n, Default) for n in nodes),
        arity=_arity(nodes),
        findings=tuple(f for n in nodes for f in _findings(template, n)),
    )


def _indexes(nodes: tuple[Node, ...]):
    for n in nodes:
        target = n.target if isinstance(n, Default) else n
        if isinstance(target, Positional):
            yield target.index


def _all_args(node: Node) -> bool:
    return isinstance(node, AllArgs) or (isinstance(node, Default) and isinstance(node.target, AllArgs))


# --- arity ---------------------------------------------------------------------------------


def _arity(nodes: tuple[Node, ...]) -> Arity:
    required: set[int] = set()
    optional: set[int] = set()
    variadic: list[int] = []
    for n in nodes:
        if isinstance(n, Positional):
            required.add(n.index)
        elif isinstance(n, Default) and isinstance(n.target, Positional):
            optional.add(n.target.index)
        elif _all_args(n):
            variadic.append(1)
        elif isinstance(n, Slice):
            _slice_arity(n, optional, variadic)
    required = {i for i in required if 1 <= i <= MAX_LISTED_POSITION}
    optional = {i for i in optional if 1 <= i <= MAX_LISTED_POSITION} - required
    return Arity(tuple(sorted(required)), tuple(sorted(optional)), min(variadic, default=None))


def _slice_arity(n: Slice, optional: set[int], variadic: list[int]) -> None:
    first = max(n.start, 1)
    if n.length is None or first + n.length - 1 > MAX_LISTED_POSITION:
        variadic.append(first)
    else:
        optional.update(range(first, first + n.length))


# --- findings ------------------------------------------------------------------------------


def _findings(template: Template, node: Node):
    src = template.source(node)
    line, col = node.pos.line, node.pos.col
    if isinstance(node, Literal):
        if node.near_miss == "digit":  # the token is the `$`; show the digit too
            src = template.body[node.pos.offset : node.pos.end + 1]
        if node.near_miss:
            yield _NEAR_MISS[node.near_miss](src, line, col)
    elif isinstance(node, (Positional, AllArgs)) and (meant := _braced_meaning(template, node, src)):
        yield _missing_brace(src, meant, line, col)
    elif isinstance(node, Positional) and _PRICE_TAIL.match(template.body, node.pos.end):
        yield _price(template, node, src, line, col)
    elif isinstance(node, Positional) and node.index == 0:
        yield Finding("template.zero-index", f"`{src}` is always empty: arguments are numbered from 1",
                      line, col, hint="use `$1` for the first argument")
    elif isinstance(node, Positional) and node.index > MAX_LISTED_POSITION:
        yield Finding("template.large-index", f"`{_excerpt(src)}` asks for an argument beyond position "
                      f"{MAX_LISTED_POSITION}; it is empty unless that many are given", line, col, "info",
                      hint="check the number")
    elif isinstance(node, AllArgs) and _INDEX_TAIL.match(template.body, node.pos.end):
        yield _indexed(template, node, src, line, col)
    elif isinstance(node, Slice):
        yield from _slice_findings(node, src, line, col)
    elif isinstance(node, Default):
        yield from _default_findings(node, src, line, col)


#: what follows `$2` in `$2:-text}` and `$@` in `$@:2}`: a braced form's tail, its `{` missing
_BRACED_TAIL = re.compile(r":-[^}$\n]*\}|:[0-9]+(?::[0-9]+)?\}")


def _braced_meaning(template: Template, node: Positional | AllArgs, src: str) -> str | None:
    """``${2:-text}`` for ``$2:-text}``, ``${@:2}`` for ``$@:2}``; None when no form is meant."""
    tail = _BRACED_TAIL.match(template.body, node.pos.end)
    meant = "${" + src[1:] + tail.group(0) if tail else None
    return meant if meant and _is_form(meant) else None


def _missing_brace(src: str, meant: str, line: int, col: int) -> Finding:
    tail = meant[len(src) + 1 :]
    return Finding("template.missing-brace", f"`{_excerpt(src + tail)}` is `{src}` followed by the text "
                   f"`{_excerpt(tail)}`: the `{{` after `$` is missing", line, col,
                   hint=f"did you mean `{_excerpt(meant)}`?")


#: what follows the digits of a price: `$0.50`, `$1,200`
_PRICE_TAIL = re.compile(r"[.,][0-9]")


def _price(template: Template, node: Positional, src: str, line: int, col: int) -> Finding:
    amount = re.match(r"[0-9.,]*[0-9]", template.body[node.pos.offset + 1 :]).group(0)
    eaten = "nothing (there is no argument 0)" if node.index == 0 else f"argument {node.index}"
    return Finding("template.dollar-amount", f"`${amount}` looks like an amount, but `{src}` is replaced by "
                   f"{eaten} when the template is expanded", line, col,
                   hint=f"there is no escape for `$`: write the amount without it (`{amount} USD`)")


#: Claude Code's `$ARGUMENTS[0]`: pi reads `$ARGUMENTS` and then the text `[0]`
_INDEX_TAIL = re.compile(r"\[([0-9]+)\]")


def _indexed(template: Template, node: AllArgs, src: str, line: int, col: int) -> Finding:
    index = int(_INDEX_TAIL.match(template.body, node.pos.end).group(1))
    written = src + f"[{index}]"
    return Finding("template.indexed-arguments", f"`{written}` is Claude Code's spelling; pi inserts all "
                   f"arguments followed by the text `[{index}]`", line, col,
                   hint=f"write `${index + 1}` (pi counts from 1), or load the file as `dialect: claude-code`")


def _slice_findings(node: Slice, src: str, line: int, col: int):
    if node.start == 0:
        better = src.replace("@:" + _digits(src), "@:1", 1)
        yield Finding("template.zero-slice", f"`{src}` behaves like `{better}`: arguments are numbered from 1",
                      line, col, "info", hint=f"write `{better}`")
    if node.length == 0:
        yield Finding("template.empty-slice", f"`{src}` takes zero arguments and is always empty",
                      line, col, hint="give a length of at least 1, or drop `:0`")


def _default_findings(node: Default, src: str, line: int, col: int):
    if isinstance(node.target, Positional) and node.target.index == 0:
        yield Finding("template.zero-index", f"`{src}` always gives its default: there is no argument 0",
                      line, col, hint="arguments are numbered from 1")
    if isinstance(node.target, AllArgs) and re.fullmatch(r"[0-9]+", node.text):
        spelt = "$<@:" if node.angle else "${@:"
        yield Finding("template.default-not-slice", f"`{src}` is all arguments with the default "
                      f"`{node.text}`, not a slice", line, col, "info",
                      hint=f"for the arguments from position {node.text} write `{spelt}{node.text}"
                      f"{'>' if node.angle else '}'}`")
    if "$" in node.text and parse_template(node.text).placeholders:
        yield Finding("template.placeholder-in-default", f"`{src}`: the default is inserted as written; "
                      "placeholders in it are not expanded", line, col,
                      hint="defaults cannot refer to other arguments")


def _digits(src: str) -> str:
    m = re.search(r"@:([0-9]+)", src)
    return m.group(1) if m else "0"


# --- near misses (literal text that looks like a form) ---------------------------------------


def _excerpt(src: str) -> str:
    src = src.rstrip(" \t")
    return src if len(src) <= _EXCERPT else src[: _EXCERPT - 3] + "..."


def _closer(src: str) -> str:
    return ">" if src.startswith("$<") else "}"


def _bare(src: str, line: int, col: int) -> Finding:
    inner = src[2:-1]
    short = "$" + inner
    return Finding("template.bare-brace", f"`{src}` is left as literal text: braces need `:-default` or `@:N`",
                   line, col, hint=f"write `{short}`, or `{src[:-1]}:-default{_closer(src)}` for a default")


def _operator(src: str, line: int, col: int) -> Finding:
    m = re.match(r"(\$[{<](?:[0-9]+|@|ARGUMENTS))(:?[-=+?])(.*)", src, re.DOTALL)
    better = f"{m.group(1)}:-{m.group(3)}" if m else None
    if better and not better.endswith(_closer(src)):
        better += _closer(src)
    return Finding("template.bash-operator", f"`{_excerpt(src)}` is left as literal text: only `:-` defaults "
                   "are supported", line, col, hint=f"write `{_excerpt(better)}`" if better else None)


def _spaced(src: str, line: int, col: int) -> Finding:
    squeezed = re.sub(r"[ \t]+", "", src)
    valid = _is_form(squeezed)
    hint = f"write `{_excerpt(squeezed)}`" if valid else "remove the blanks inside the form"
    return Finding("template.blank-in-form", f"`{_excerpt(src)}` is left as literal text: blanks are not "
                   "allowed inside a form", line, col, hint=hint)


def _slice(src: str, line: int, col: int) -> Finding:
    closer = _closer(src)
    if not src.rstrip(" \t").endswith(closer):
        return _unclosed(src, line, col)
    return Finding("template.malformed-slice", f"`{_excerpt(src)}` is left as literal text: not a slice",
                   line, col, hint=f"write `${src[1]}@:N{closer}` or `${src[1]}@:N:L{closer}` with "
                   "numbers N (first position) and L (how many)")


def _unclosed(src: str, line: int, col: int) -> Finding:
    closer = _closer(src)
    return Finding("template.unclosed-form", f"`{_excerpt(src)}` is never closed and stays literal text",
                   line, col, hint=f"end it with `{closer}`")


def _negative(src: str, line: int, col: int) -> Finding:
    return Finding("template.negative-index", f"`{_excerpt(src)}` is left as literal text: positions "
                   "cannot be negative", line, col, hint="arguments are numbered from 1")


def _name(src: str, line: int, col: int) -> Finding:
    return Finding("template.argument-name", f"`{_excerpt(src)}` is left as literal text: the name is "
                   "`ARGUMENTS`, in capitals", line, col, hint="write `$ARGUMENTS` or `$@`")


def _digit(src: str, line: int, col: int) -> Finding:
    value = unicodedata.digit(src[1:2], None)
    hint = f"write `${value}`" if value is not None else None
    return Finding("template.non-ascii-digit", f"`{src}` is literal text: positions use the digits 0-9",
                   line, col, hint=hint)


_NEAR_MISS = {
    "bare": _bare,
    "operator": _operator,
    "spaced": _spaced,
    "slice": _slice,
    "unclosed": _unclosed,
    "negative": _negative,
    "name": _name,
    "digit": _digit,
}


def _is_form(text: str) -> bool:
    nodes = parse_template(text).nodes
    return len(nodes) == 1 and not isinstance(nodes[0], Literal)

