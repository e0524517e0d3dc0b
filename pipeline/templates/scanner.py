"""A regular-expression scanner generated from the grammar's terminals and rules.

Lark's LALR parser spends most of its time per token in Python; a template body is a
flat sequence of forms, so one regular expression can find them all. It is not written
by hand: :func:`scanner` assembles it, once, from ``grammar/template_args.lark`` as Lark
compiles it (:func:`~.grammar.grammar_parts`):

* the alternatives are the first terminals of the ``item`` rule, in the order Lark's
  lexer tries them (priority, then width, ...: :func:`~.grammar.lexer_order`);
* a form made of a rule (``braced_default: BRACE_DEFAULT_OPEN target _DEFAULT_SEP
  [BRACE_DEFAULT_TEXT] RBRACE``) becomes the concatenation of its symbols' patterns,
  each an atomic group (the lexer never backs into a token; :func:`atomic` leaves the
  group out where it changes nothing), ``[...]`` an optional group
  and a sub-rule (``target``) an atomic alternation of its terminals; every symbol that
  the parser keeps (no leading ``_``) is a named group;
* an opener's lookahead is left out: Lark needs it because its lexer cannot take a token
  back; in one expression the symbols that follow check the same text;
* the plain-text items (``TEXT``, ``DOLLAR``) are left out: the text between two matches
  is plain text, and a ``$`` where no alternative matches is plain text too.

:attr:`Scanner.full` has named groups (for nodes); :attr:`Scanner.split` is the same
expression with one group, for ``re.split`` (the substitution plan).

The tests check that this scanner and Lark's parser give the same nodes on every
committed vector and on fuzzed bodies.

**Linear time.** A default's text (``[^}]+``) reads to the next closer. When there is
none, it reads to the end of the body and fails: a body of many unclosed ``${1:-`` would
take quadratic time. After the last ``}`` (``>``) of a body that text can never be
closed, so :func:`scan` switches there to a variant of the expression in which it is
replaced by a pattern that fails at once. Variants are only used when a body has
more than a few such openers; otherwise one ``finditer`` does it all.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Callable, Iterator

from pipeline import profile_cache

from .grammar import grammar_parts, lexer_order

if TYPE_CHECKING:  # the generator reads Lark's objects (``is_term`` tells their kind): Lark is not imported here
    from lark.grammar import Rule, Symbol
    from lark.lexer import TerminalDef

#: Atomic groups ``(?>...)`` are new in Python 3.11. Before it, a lookahead captures what
#: the group would match and a backreference consumes it: Python never backtracks into a
#: lookahead, so the match is the same and the text is never re-split.
ATOMIC_GROUPS = sys.version_info >= (3, 11)


#: A pattern that matches in one way only: literal characters and escapes, no repeat.
_FIXED = re.compile(r"(?:\\.|[^\\.^$*+?{}\[\]|()])+")
#: One character (a literal, an escape or a plain class) repeated with ``+``.
_ONE_REPEATED = re.compile(r"(?:\\.|\[(?:\\.|[^\]\\])+\]|[^\\.^$*+?{}\[\]|()])\+")


def atomic(pattern: str, name: str, native: bool = ATOMIC_GROUPS) -> str:
    """``pattern`` as an atomic group; ``name`` names the emulation's capture (before 3.11).

    Where the group changes nothing it is left out: a pattern that matches in one way
    only has nothing to give back, and ``(?>x+)`` is the possessive ``x++`` (one opcode
    instead of a group around a repeat: the split of a large body takes about a quarter
    less time).
    """
    if _FIXED.fullmatch(pattern):
        return pattern
    if native and _ONE_REPEATED.fullmatch(pattern):
        return pattern + "+"
    return f"(?>{pattern})" if native else f"(?=(?P<{name}>{pattern}))(?P={name})"


#: The unbounded "reads to the closer" scans of the grammar, by closer: the terminal's
#: pattern, the name of its emulated group, and the opener prefix that leads to them.
#: After a body's last closer they can never match.
_UNBOUNDED_SCANS = {"}": (r"[^}]+", "u0", "${"), ">": (r"[^>]+", "u1", "$<")}
#: By closer: the scan as the scanner writes it, and its opener prefix.
UNBOUNDED = {closer: (atomic(scan, name), opener) for closer, (scan, name, opener) in _UNBOUNDED_SCANS.items()}
_CLOSERS = tuple(UNBOUNDED.items())
#: Up to this many openers after the last closer, one plain ``finditer`` is used.
DEAD_OPENER_BUDGET = 16
_NEVER = "(?!)"
_GUARD = "dollar"


@dataclass(frozen=True)
class Alternative:
    """One terminal a slot may hold: its regex group, terminal name and rule alias."""

    group: int
    terminal: str
    alias: str | None


@dataclass(frozen=True)
class Form:
    """One alternative of the ``item`` rule, as the scanner matches it.

    ``kind`` is the rule's alias (``positional``, ``all_args``, ``near_miss``) or the
    name of the rule it expands to (``braced_default``...). ``terminal`` is its first
    terminal. ``slots`` are the symbols the parser keeps after the opener, in order (for
    a single-terminal form: that terminal, the whole match); a slot that did not take
    part in a match has group start -1.
    """

    kind: str
    terminal: str
    slots: tuple[tuple[Alternative, ...], ...]


@dataclass(frozen=True)
class Scanner:
    """The generated expressions and, by outer group index, the form each one matches."""

    source: str
    full: re.Pattern
    #: the same expression without named groups, the whole match one group: for
    #: ``split``, which gives literal text and form text alternately, with no match objects
    split: re.Pattern
    #: by the set of closers that no longer occur: the same expression with those
    #: closers' unbounded scans disabled and a last alternative for a lone ``$``
    guarded: dict[frozenset[str], re.Pattern]
    guard_index: int
    forms: dict[int, Form]


@cache
def scanner(near_misses: bool = True, native: bool = ATOMIC_GROUPS) -> Scanner:
    """The scanner for the grammar.

    ``near_misses=False`` leaves the ``near_miss`` items out, for substitution: they are
    literal text and hold no ``$`` after their first character, so they cannot hide a
    form (the tests check this equivalence too). ``native=False`` emulates the atomic
    groups (as on Python 3.10; the tests compare the two on 3.11+).

    It is generated once per version of the code and the grammar and kept with the
    compiled built-in profiles (:func:`pipeline.profile_cache.cached_value`): a start
    reads it back instead of importing Lark and generating it again.
    """
    label = f"template-scanner:near_misses={near_misses}:native={native}"
    return profile_cache.cached_value(label, lambda: generate(near_misses, native))


def generate(near_misses: bool, native: bool) -> Scanner:
    """The scanner generated from the grammar, as Lark compiles it."""
    terminals, rules = grammar_parts()
    gen = _Generator({t.name: t for t in terminals}, rules, near_misses, native=native)
    source = gen.source()
    plain = _Generator({t.name: t for t in terminals}, rules, near_misses, capture=False, native=native).source()
    unbounded = {closer: atomic(scan, name, native) for closer, (scan, name, _) in _UNBOUNDED_SCANS.items()}
    for pattern in unbounded.values():
        if source.count(pattern) != 1:
            raise AssertionError(f"the grammar no longer has exactly one {pattern}: update UNBOUNDED")
    full = re.compile(source)
    # a disabled scan keeps its (emulated) group, so that every group keeps its index
    never = {closer: atomic(_NEVER, name, native) for closer, (_, name, _) in _UNBOUNDED_SCANS.items()}
    guarded = {dead: re.compile(_disable(source, dead, unbounded, never)[:-1] + f"|(?P<{_GUARD}>))")
               for dead in (frozenset(), frozenset("}"), frozenset(">"), frozenset("}>"))}
    index = full.groupindex
    forms = {index[name]: form.resolve(index) for name, form in gen.forms.items()}
    split = re.compile(f"({plain})")
    return Scanner(source, full, split, guarded, guarded[frozenset()].groupindex[_GUARD], forms)


def _disable(source: str, dead: frozenset[str], unbounded: dict[str, str], never: dict[str, str]) -> str:
    for closer in dead:
        source = source.replace(unbounded[closer], never[closer])
    return source


def split_function(pattern: re.Pattern[str]) -> Callable[[str], list[str]]:
    """``pattern.split`` keeping only its first group: text and form text alternately.

    The emulated atomic groups (before Python 3.11) capture; ``re.split`` returns every
    group of every match, so the other groups' items are dropped.
    """
    if pattern.groups == 1:
        return pattern.split
    stride = pattern.groups + 1

    def split(text: str) -> list[str]:
        return [part for i, part in enumerate(pattern.split(text)) if i % stride < 2]

    return split


class _Generator:
    """Assembles the expression from Lark's compiled terminals and rules."""

    def __init__(self, terminals: dict[str, TerminalDef], rules: tuple[Rule, ...], near_misses: bool,
                 capture: bool = True, native: bool = ATOMIC_GROUPS):
        self.terminals, self.near_misses, self.capture, self.native = terminals, near_misses, capture, native
        self.atoms = 0
        self.rules: dict[str, list[Rule]] = {}
        for rule in rules:
            self.rules.setdefault(rule.origin.name, []).append(rule)
        self.forms: dict[str, _FormDraft] = {}

    def source(self) -> str:
        items = sorted(self.rules["item"], key=lambda r: lexer_order(self.terminals[self._first(r.expansion[0])]))
        parts = []
        for n, rule in enumerate(items):
            (symbol,) = rule.expansion
            if rule.alias == "text":
                self._check_plain(symbol)
                continue
            if rule.alias == "near_miss" and not self.near_misses:
                continue
            name = f"f{n}"
            draft = self.forms[name] = _FormDraft(rule.alias or symbol.name, self._first(symbol))
            if symbol.is_term:
                body = self.terminals[symbol.name].pattern.to_regexp()
                draft.slots.append(((name, symbol.name, rule.alias),))
            else:
                body = self._rule(symbol, draft, name)
            if not body.startswith(r"\$"):
                raise AssertionError(f"{draft.terminal} does not start with `$`")
            parts.append(self._group(name, body[2:]))
        return r"\$(?:" + "|".join(parts) + ")"

    def _atomic(self, pattern: str) -> str:
        names = {scan: name for scan, name, _ in _UNBOUNDED_SCANS.values()}
        if pattern not in names:
            self.atoms += 1
        return atomic(pattern, names.get(pattern, f"x{self.atoms}"), self.native)

    def _group(self, name: str, pattern: str) -> str:
        return f"(?P<{name}>{pattern})" if self.capture else f"(?:{pattern})"

    def _first(self, symbol: Symbol) -> str:
        if symbol.is_term:
            return symbol.name
        return self._first(self._full(symbol.name).expansion[0])

    def _check_plain(self, symbol: Symbol) -> None:
        """Plain text must be ``$``-free runs and single ``$``: the scanner skips both."""
        pattern = self.terminals[symbol.name].pattern.to_regexp()
        if pattern not in (r"[^$]+", r"\$"):
            raise AssertionError(f"plain-text terminal {symbol.name} is {pattern}, not `[^$]+` or `\\$`")

    def _full(self, rule_name: str) -> Rule:
        """A rule's longest expansion (Lark makes one expansion per ``[...]`` choice)."""
        return max(self.rules[rule_name], key=lambda r: len(r.expansion))

    def _rule(self, symbol: Symbol, draft: "_FormDraft", name: str) -> str:
        full = self._full(symbol.name).expansion
        optional = self._optional(symbol.name, full)
        out, run = [], []
        for i, sym in enumerate(full):
            piece = self._symbol(sym, draft, f"{name}s{i}") if i else self._opener(sym)
            if i in optional:
                run.append(piece)
                continue
            if run:
                out.append("(?:" + "".join(run) + ")?")
                run = []
            out.append(piece)
        if run:
            raise AssertionError(f"rule {symbol.name} ends with an optional part")
        return "".join(out)

    def _opener(self, sym: Symbol) -> str:
        """A rule's first terminal, without its lookahead.

        The grammar's openers look ahead at the whole form because Lark's lexer cannot
        take a token back; in one expression the symbols that follow match the same
        text (and the expression backs out of a form that does not complete), so the
        lookahead would only read the form twice.
        """
        pattern = self.terminals[sym.name].pattern.to_regexp()
        at = pattern.find("(?=")
        if at < 0:
            return pattern
        if "(" in pattern[:at] or not _balanced(pattern[at:]):
            raise AssertionError(f"opener {sym.name}: the lookahead is not its last part")
        return pattern[:at]

    def _optional(self, rule_name: str, full: list[Symbol]) -> set[int]:
        """Positions of ``full`` that some shorter expansion of the rule leaves out."""
        optional: set[int] = set()
        for rule in self.rules[rule_name]:
            kept, j = [], 0
            for i, sym in enumerate(full):
                if j < len(rule.expansion) and rule.expansion[j] == sym:
                    kept.append(i)
                    j += 1
            if j != len(rule.expansion):
                raise AssertionError(f"rule {rule_name}: {rule.expansion} is not a part of {full}")
            optional |= set(range(len(full))) - set(kept)
        return optional

    def _symbol(self, sym: Symbol, draft: "_FormDraft", name: str) -> str:
        if not sym.is_term:
            return self._choice(sym, draft, name)
        pattern = self.terminals[sym.name].pattern.to_regexp()
        if sym.filter_out or sym.name.startswith("_"):
            return self._atomic(pattern)
        draft.slots.append(((name, sym.name, None),))
        return self._group(name, self._atomic(pattern))

    def _choice(self, sym: Symbol, draft: "_FormDraft", name: str) -> str:
        """A sub-rule of single terminals (``target``): an atomic alternation."""
        rules = sorted(self.rules[sym.name], key=lambda r: lexer_order(self.terminals[r.expansion[0].name]))
        alternatives, pieces = [], []
        for j, rule in enumerate(rules):
            (term,) = rule.expansion
            if not term.is_term:
                raise AssertionError(f"rule {sym.name}: only single terminals are supported")
            alternatives.append((f"{name}a{j}", term.name, rule.alias))
            pieces.append(self._group(f"{name}a{j}", self.terminals[term.name].pattern.to_regexp()))
        draft.slots.append(tuple(alternatives))
        return self._atomic("|".join(pieces))


def _balanced(group: str) -> bool:
    """Whether ``group`` is one parenthesised group (no escaped parentheses, no classes with them)."""
    depth = 0
    for i, ch in enumerate(group):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0:
            return i == len(group) - 1
    return False


class _FormDraft:
    def __init__(self, kind: str, terminal: str):
        self.kind, self.terminal = kind, terminal
        self.slots: list[tuple[tuple[str, str, str | None], ...]] = []

    def resolve(self, index: dict[str, int]) -> Form:
        slots = tuple(tuple(Alternative(index[g], t, a) for g, t, a in slot) for slot in self.slots)
        return Form(self.kind, self.terminal, slots)


def zones(body: str) -> list[tuple[int, str]] | None:
    """Where each closer stops occurring (sorted), when that matters for the scan time.

    None when at most :data:`DEAD_OPENER_BUDGET` openers follow the last closer of their
    kind: then the plain expression is fast on ``body``.
    """
    (brace, (_, brace_opener)), (angle, (_, angle_opener)) = _CLOSERS
    after_brace, after_angle = body.rfind(brace) + 1, body.rfind(angle) + 1
    if body.count(brace_opener, after_brace) + body.count(angle_opener, after_angle) <= DEAD_OPENER_BUDGET:
        return None
    return sorted([(after_brace, brace), (after_angle, angle)])


def scan(body: str, near_misses: bool = True) -> Iterator[re.Match]:
    """Every form (and near miss) of ``body``, left to right, in linear time."""
    s = scanner(near_misses)
    bounds = zones(body)
    return s.full.finditer(body) if bounds is None else _phased(body, s, bounds)


def _phased(body: str, s: Scanner, bounds: list[tuple[int, str]]) -> Iterator[re.Match]:
    """Scan zone by zone; from each closer's last occurrence on, its scans are disabled."""
    pos, dead = 0, frozenset()
    for end, closer in [*bounds, (len(body) + 1, "")]:
        for m in s.guarded[dead].finditer(body, pos):
            if m.start() >= end:
                pos = m.start()
                break
            if m.lastindex != s.guard_index:
                yield m
        else:
            return
        dead = dead | {closer}
