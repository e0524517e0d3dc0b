"""A parsed template body: its substitution plan and its nodes; pi's ``substituteArgs``.

Parsing a body compiles it, as Jinja compiles a template to code, into a **plan**: a flat
tuple of literal strings and small op records (``(POSITIONAL, i)``, ``(SLICE, first,
stop)``...), made in one pass of the generated scanner (:mod:`.scanner`). Substitution
walks the plan once; nothing is parsed again. The :mod:`.nodes` (with positions, near
misses marked) are only built when something asks for them (analysis, ``source``).

Semantics follow pi 0.84.0's ``substituteArgs``: arguments are numbered from 1, a missing
argument is empty, ``${N:-text}`` falls back to ``text`` when the argument is missing or
the empty string, ``${@:N}`` treats 0 as 1; values are inserted verbatim, never rescanned.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, Sequence

from pipeline.gcpause import gc_paused

from .grammar import NEAR_MISS_KINDS, NUMBER_CAP, number
from .nodes import AllArgs, Default, Literal, Node, Pos, Positional, Slice
from .scanner import DEAD_OPENER_BUDGET, UNBOUNDED, Form, scan, scanner, split_function

# op kinds of a plan
POSITIONAL, ALL, SLICE, DEFAULT, ALL_DEFAULT = range(5)


class Template:
    """A parsed template body: the substitution plan, and the nodes in source order.

    Read-only; equal when the bodies are equal.
    """

    __slots__ = ("_body", "_plan", "_nodes")

    def __init__(self, body: str):
        self._body = body
        self._plan = plan_of(body)
        self._nodes: tuple[Node, ...] | None = None

    @property
    def body(self) -> str:
        return self._body

    def __eq__(self, other) -> bool:
        return isinstance(other, Template) and other._body == self._body

    def __hash__(self) -> int:
        return hash(self._body)

    def __repr__(self) -> str:
        return f"Template({self._body!r})"

    def substitute(self, args: Sequence[str]) -> str:
        """Expand with ``args`` (already split); never fails, never rescans values."""
        return render(self._plan, args)

    @property
    def plan(self) -> tuple:
        """The plan as one flat tuple: literal strings and op tuples, in source order."""
        parts, ops, keys = self._plan
        op_of = None if keys is None else dict(zip(keys, ops))
        out: list = []
        for k, form in enumerate(parts[1::2]):
            out += (parts[2 * k], ops[k] if op_of is None else op_of[form])
        out.append(parts[-1])
        return tuple(p for p in out if p != "")

    @property
    def nodes(self) -> tuple[Node, ...]:
        """Literal text and placeholders in source order (adjacent plain text merged)."""
        if self._nodes is None:
            self._nodes = build_nodes(self._body)
        return self._nodes

    def source(self, node: Node) -> str:
        """The characters of the body that ``node`` was parsed from."""
        return self._body[node.pos.offset : node.pos.end]

    @property
    def placeholders(self) -> tuple[Node, ...]:
        """Every node that is not literal text."""
        return tuple(n for n in self.nodes if not isinstance(n, Literal))


@lru_cache(maxsize=2048)
def parse_template(body: str) -> Template:
    """Parse a template body into a :class:`Template` (never fails; results are cached)."""
    return Template(body)


def substitute_args(body: str, args: Sequence[str]) -> str:
    """``substituteArgs(body, args)``: ``body`` with its placeholders replaced by ``args``.

    A body without ``$`` is returned as it is; other bodies are expanded through their
    plan, kept in :data:`_PLANS` (no :class:`Template` is made for them).
    """
    plan = _PLANS.get(body)
    if plan is None:
        if "$" not in body:
            return body
        plan = _remember(body)
    return render(plan, args)


# --- the plan -------------------------------------------------------------------------------
#
# A plan is (parts, ops, keys): ``parts`` alternates literal text and form text (what
# ``split`` of the generated expression gives) and ``ops`` holds the op of each form, in
# order, when ``keys`` is None (short bodies); else ``ops`` holds each distinct op once and
# ``keys`` the form text of each, so that a form's value is found by its text. Rendering
# computes each op's value once and fills the form places in one C-level pass.

#: Plans by body, for :func:`substitute_args` and :class:`Template`; emptied when full
#: (amortized O(1), no per-call bookkeeping). Bodies longer than :data:`_PLAN_KEY_MAX`
#: are not kept: a plan holds its whole body.
_PLANS: dict[str, tuple] = {}
_PLANS_CAP = 2048
_PLAN_KEY_MAX = 1 << 16


def plan_of(body: str) -> tuple:
    """The plan of ``body``, from :data:`_PLANS` or compiled (and kept when short enough)."""
    plan = _PLANS.get(body)
    return _remember(body) if plan is None else plan


def _remember(body: str) -> tuple:
    plan = compile_plan(body)
    if len(body) <= _PLAN_KEY_MAX:
        if len(_PLANS) >= _PLANS_CAP:
            _PLANS.clear()
        _PLANS[body] = plan
    return plan


def render(plan: tuple, args: Sequence[str]) -> str:
    """The expansion of a plan with ``args``."""
    parts, ops, keys = plan
    if not ops:
        return parts[0]
    n = len(args)
    joined = " ".join(args)
    values = []
    append = values.append
    for op in ops:
        kind = op[0]
        if kind == POSITIONAL:
            append(args[op[1]] if op[1] < n else "")
        elif kind == ALL:
            append(joined)
        elif kind == DEFAULT:
            append((args[op[1]] if op[1] < n else "") or op[2])
        elif kind == SLICE:
            append(" ".join(args[op[1] : op[2]]))
        else:
            append(joined or op[1])
    out = parts.copy()
    out[1::2] = values if keys is None else map(dict(zip(keys, values)).__getitem__, parts[1::2])
    return "".join(out)


#: Ops by form text, shared by all bodies (a form means the same wherever it stands).
_OPS: dict[str, tuple] = {}
_OPS_CAP = 8192
_OPS_KEY_MAX = 200
#: Bodies with at most this many forms get one op per form (no sharing of equal ops).
_SHARE_FROM = 16
#: Up to this length a body is split without the dead-opener check: at worst (every
#: ``${`` unclosed) the plain split reads about length²/4 characters: some tens of µs.
_SHORT_BODY = 256


def compile_plan(body: str) -> tuple[list[str], tuple, tuple[str, ...] | None]:
    """The plan of ``body`` (see above): one ``split``, then work per distinct form only."""
    if len(body) > _SHORT_BODY and body.count("$") > DEAD_OPENER_BUDGET:  # else not that many openers
        after_brace, after_angle = body.rfind("}") + 1, body.rfind(">") + 1
        if body.count("${", after_brace) + body.count("$<", after_angle) > DEAD_OPENER_BUDGET:
            return _compile_scanned(body)  # many openers after the last closer: the zone scan
    parts = (_SPLIT or _split())(body)
    forms = parts[1::2]
    if len(forms) <= _SHARE_FROM:
        ops = tuple(map(_OPS.get, forms))
        return parts, (tuple([op or _decode(f) for op, f in zip(ops, forms)]) if None in ops else ops), None
    distinct = tuple(dict.fromkeys(forms))
    return parts, tuple([_OPS[f] if f in _OPS else _decode(f) for f in distinct]), distinct


#: The split of the generated expression, loaded on first use (:func:`_split`).
_SPLIT: Callable[[str], list[str]] | None = None


def _split() -> Callable[[str], list[str]]:
    global _SPLIT
    if {closer: opener for closer, (_, opener) in UNBOUNDED.items()} != {"}": "${", ">": "$<"}:
        raise AssertionError("compile_plan's closer check no longer fits the scanner's UNBOUNDED")
    _SPLIT = split_function(scanner(False).split)
    return _SPLIT


def _decode(form: str) -> tuple:
    s = scanner(False)
    m = s.full.fullmatch(form)
    op = _op_builders()[m.lastindex](m)
    if len(_OPS) < _OPS_CAP and len(form) <= _OPS_KEY_MAX:
        _OPS[form] = op
    return op


def _compile_scanned(body: str) -> tuple[list[str], tuple, tuple[str, ...]]:
    """The plan through the zone scan (:func:`.scanner.scan`)."""
    builders = _op_builders()
    parts: list[str] = []
    ops: dict[str, tuple] = {}
    last = 0
    for m in scan(body, near_misses=False):
        form = m.group()
        parts += (body[last : m.start()], form)
        if form not in ops:
            ops[form] = builders[m.lastindex](m)
        last = m.end()
    parts.append(body[last:])
    return parts, tuple(ops.values()), tuple(ops)


def _index(digits: str) -> int:
    """A 0-based argument index; ``$0`` (never an argument) gets one beyond any list."""
    value = number(digits)
    return value - 1 if value else NUMBER_CAP


@lru_cache(maxsize=None)
def _op_builders() -> dict[int, Callable[[re.Match], tuple]]:
    return {group: _op_builder(form) for group, form in scanner(False).forms.items()}


def _op_builder(form: Form) -> Callable[[re.Match], tuple]:
    slots = form.slots
    if form.kind == "positional":
        return lambda m: (POSITIONAL, _index(m.group()[1:]))
    if form.kind == "all_args":
        return lambda m: (ALL,)
    if form.kind.endswith("_slice"):
        (first,), (length,) = slots[0], slots[1]

        def build_slice(m: re.Match) -> tuple:
            start = max(number(m.group(first.group)) - 1, 0)
            count = m.group(length.group)
            return (SLICE, start, None if count is None else start + number(count))
        return build_slice
    if form.kind.endswith("_default"):
        targets, (text,) = slots[0], slots[1]

        def build_default(m: re.Match) -> tuple:
            default = m.group(text.group) or ""
            for alt in targets:
                value = m.group(alt.group)
                if value is not None:
                    return (DEFAULT, _index(value), default) if alt.alias == "index_target" else (ALL_DEFAULT, default)
            raise AssertionError("a default without a target")
        return build_default
    raise AssertionError(f"no substitution for the grammar's form {form.kind}")


# --- the nodes ------------------------------------------------------------------------------


class _Lines:
    """Line and column (1-based, code points) of increasing offsets of one body."""

    __slots__ = ("body", "offset", "line", "line_start")

    def __init__(self, body: str):
        self.body, self.offset, self.line, self.line_start = body, 0, 1, 0

    def pos(self, offset: int, end: int) -> Pos:
        newlines = self.body.count("\n", self.offset, offset)
        if newlines:
            self.line += newlines
            self.line_start = self.body.rfind("\n", self.offset, offset) + 1
        self.offset = offset
        return Pos(self.line, offset - self.line_start + 1, offset, end)


def build_nodes(body: str) -> tuple[Node, ...]:
    """The nodes of ``body`` (the same as the grammar's parser gives: see the tests).

    The cyclic garbage collector is paused meanwhile: a large body makes many small,
    acyclic objects, and the collector's passes over them would cost a third of the time.
    """
    with gc_paused():
        return _build_nodes(body)


def _build_nodes(body: str) -> tuple[Node, ...]:
    builders = _node_builders()
    lines = _Lines(body)
    nodes: list[Node] = []
    last = 0
    for m in scan(body):
        start, end = m.span()
        if start > last:
            nodes.append(Literal(body[last:start], lines.pos(last, start)))
        nodes.append(builders[m.lastindex](m, lines.pos(start, end)))
        last = end
    if last < len(body):
        nodes.append(Literal(body[last:], lines.pos(last, len(body))))
    return tuple(nodes)


@lru_cache(maxsize=None)
def _node_builders() -> dict[int, Callable[[re.Match, Pos], Node]]:
    return {group: _node_builder(form) for group, form in scanner(True).forms.items()}


def _node_builder(form: Form) -> Callable[[re.Match, Pos], Node]:
    slots, angle = form.slots, form.terminal.startswith("ANGLE")
    if form.kind == "near_miss":
        kind = NEAR_MISS_KINDS[form.terminal]
        return lambda m, pos: Literal(m.group(), pos, kind)
    if form.kind == "positional":
        return lambda m, pos: Positional(number(m.group()[1:]), pos)
    if form.kind == "all_args":
        return lambda m, pos: AllArgs(pos, "@" if m.group() == "$@" else "ARGUMENTS")
    if form.kind.endswith("_slice"):
        (first,), (length,) = slots[0], slots[1]

        def build_slice(m: re.Match, pos: Pos) -> Slice:
            count = m.group(length.group)
            return Slice(number(m.group(first.group)), None if count is None else number(count), pos, angle)
        return build_slice
    if form.kind.endswith("_default"):
        targets, (text,) = slots[0], slots[1]

        def build_default(m: re.Match, pos: Pos) -> Default:
            return Default(_target(m, targets, pos), m.group(text.group) or "", pos, angle)
        return build_default
    raise AssertionError(f"no node for the grammar's form {form.kind}")


def _target(m: re.Match, targets, pos: Pos) -> Positional | AllArgs:
    """The target of a default, located in the same line as its opener."""
    for alt in targets:
        value = m.group(alt.group)
        if value is not None:
            start = m.start(alt.group)
            where = Pos(pos.line, pos.col + start - pos.offset, start, m.end(alt.group))
            if alt.alias == "index_target":
                return Positional(number(value), where)
            return AllArgs(where, "@" if value == "@" else "ARGUMENTS")
    raise AssertionError("a default without a target")
