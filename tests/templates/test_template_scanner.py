"""The generated scanner and the substitution plan against the grammar's own Lark parser.

Every parse goes through the scanner (pipeline/templates/scanner.py), generated from
grammar/template_args.lark; Lark's LALR parser is the reference. Both must give the same
nodes (kinds, values, positions, near misses) and the plan the same expansion as the
nodes, on every body of the committed vectors and on fuzzed bodies.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.templates.analysis import analyze
from pipeline.templates.plan import Template, parse_template, substitute_args
from pipeline.templates.reference import build_lark, parser
from pipeline.templates import plan as plan_module
from pipeline.templates.plan import build_nodes
from pipeline.templates.scanner import ATOMIC_GROUPS, DEAD_OPENER_BUDGET, UNBOUNDED, atomic, scan, scanner, split_function

VECTORS = json.loads((Path(__file__).resolve().parent.parent / "data" / "template_vectors.json").read_text("utf-8"))
SETTINGS = settings(max_examples=400, deadline=None)


def vector_bodies() -> list[str]:
    bodies = [v["content"] for v in VECTORS["expand"]]
    bodies += [v[k] for v in VECTORS["angle"] for k in ("body", "twin")]
    bodies += [v["content"] for v in VECTORS["expand_input_templates"]]
    bodies += [f["content"] for v in VECTORS["load_templates"] for f in v["files"] if "content" in f]
    return bodies


def reference(body: str, args: list[str]) -> str:
    """Expansion through Lark's nodes."""
    joined = " ".join(args)
    return "".join(n.render(args, joined) for n in build_lark(body))


def test_every_vector_body_scans_as_lark_parses_it():
    bodies = vector_bodies()
    assert len(bodies) > 2000
    for body in bodies:
        assert build_nodes(body) == build_lark(body), body


def test_the_plan_expands_every_vector_as_the_nodes_do():
    for v in VECTORS["expand"]:
        args = v.get("args") or ["a", "", "two words", "$1"]
        assert Template(v["content"]).substitute(args) == reference(v["content"], args)
    for v in VECTORS["angle"]:
        assert Template(v["body"]).substitute(v["args"]) == reference(v["body"], v["args"]) == v["result"]


def test_scanner_tries_forms_in_lark_lexer_order():
    lark_order = [t.name for t in parser().parser.lexer.root_lexer.terminals]
    ours = [form.terminal for _, form in sorted(scanner().forms.items())]
    assert ours == [name for name in lark_order if name in ours]
    assert {"TEXT", "DOLLAR"}.isdisjoint(ours)  # plain text is what lies between matches
    forms_only = {f.kind for f in scanner(near_misses=False).forms.values()}
    assert "near_miss" not in forms_only and {"positional", "all_args", "braced_default"} <= forms_only


def test_the_scanner_is_generated_from_the_grammar_text():
    source = scanner().source
    for terminal in ("BRACE_SLICE_OPEN", "NEAR_OPERATOR", "POSITIONAL", "BRACE_DEFAULT_TEXT"):
        pattern = next(t for t in parser().terminals if t.name == terminal).pattern.to_regexp()
        pattern = pattern.split("(?=")[0] if terminal.endswith("_OPEN") else pattern  # openers: no lookahead
        assert pattern.removeprefix("\\$") in source  # the terminal's own pattern, `\$` factored out
    for closer, (unbounded, opener) in UNBOUNDED.items():
        assert source.count(unbounded) == 1 and opener[1] in "{<"


def emulated_matches(body: str, near_misses: bool) -> list[tuple]:
    """Each match of the emulated-atomic-group scanner (Python 3.10's) by form group name."""
    s = scanner(near_misses, native=False)
    names = {index: name for name, index in s.full.groupindex.items()}
    return [(m.span(), names[m.lastindex], {k: v for k, v in m.groupdict().items() if k[0] == "f"})
            for m in s.full.finditer(body)]


def native_matches(body: str, near_misses: bool) -> list[tuple]:
    s = scanner(near_misses, native=True)
    names = {index: name for name, index in s.full.groupindex.items()}
    return [(m.span(), names[m.lastindex], m.groupdict()) for m in s.full.finditer(body)]


def test_the_emulated_atomic_groups_match_as_the_native_ones():
    emulated = scanner(native=False)
    assert "(?>" not in emulated.source and "(?>" not in emulated.split.pattern  # valid on Python 3.10
    assert "(?>" not in scanner().source or ATOMIC_GROUPS  # 3.10 gets the emulation by itself
    if not ATOMIC_GROUPS:
        return  # no native atomic groups to compare with: the suite's Lark comparisons cover it
    split = split_function(scanner(False, native=False).split)
    for body in vector_bodies():
        for near in (True, False):
            assert emulated_matches(body, near) == native_matches(body, near), body
        assert split(body) == scanner(False).split.split(body)



def test_the_zone_expressions_keep_every_group_index():
    """The zone scan reads a match's form by the full expression's group index: a disabled
    scan must not shift the groups after it (the emulation's groups capture)."""
    for native in (True, False) if ATOMIC_GROUPS else (False,):  # no `(?>` on 3.10
        for near in (True, False):
            s = scanner(near, native=native)
            for dead, pattern in s.guarded.items():
                groups = {k: v for k, v in pattern.groupindex.items() if k != "dollar"}
                assert groups == dict(s.full.groupindex), (native, near, dead)

# --- fuzzed bodies -----------------------------------------------------------------------

PIECES = ["$", "{", "}", "<", ">", "@", ":", "-", ":-", "0", "1", "2", "12", "ARGUMENTS", "ARGS", "args",
          "$1", "${", "$<", "${1:-", "$<@:", "${@:2", " ", "\t", "\n", "x", "😀", "٣", "\ud83d", "=", "+", "?"]
soup = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)
bodies = st.one_of(st.text(max_size=60), soup)
args_lists = st.lists(st.one_of(st.text(max_size=6), st.sampled_from(["", "$1", "$@", "}"])), max_size=5)


@SETTINGS
@given(bodies)
def test_fuzzed_bodies_scan_as_lark_parses_them(body):
    assert build_nodes(body) == build_lark(body)


@SETTINGS
@given(bodies, args_lists)
def test_fuzzed_plans_expand_as_lark_nodes(body, args):
    assert Template(body).substitute(args) == reference(body, args)


# bodies with more openers after the last closer than the single-pass budget: the zone scan
dead = st.lists(st.sampled_from(["${1:-", "$<1:-", "$<@:-", "${@:", "$", "x", "\n"]), min_size=DEAD_OPENER_BUDGET,
                max_size=60).map("".join)


@SETTINGS
@given(soup, dead, soup, st.sampled_from(["", "}", ">", "}>", "><"]), soup)
def test_zone_scan_equals_lark(head, openers, middle, closer, tail):
    body = head + openers + middle + closer + openers + tail
    assert build_nodes(body) == build_lark(body)
    assert Template(body).substitute(["a", "b"]) == reference(body, ["a", "b"])


def test_zone_scan_is_used_past_the_budget():
    body = "${1:-" * (DEAD_OPENER_BUDGET + 1)
    assert not isinstance(scan(body), type(scanner().full.finditer("")))
    assert isinstance(scan("${1:-x} " * 100), type(scanner().full.finditer("")))


# --- bounded time, no recursion ----------------------------------------------------------


def test_twenty_thousand_nested_defaults_unclosed():
    body = "${1:-" * 20_000
    assert substitute_args(body, ["a"]) == body  # every `${1:-` is an unclosed form: literal text
    nodes = parse_template(body).nodes
    assert len(nodes) == 20_000 and all(n.near_miss == "unclosed" for n in nodes)
    assert len(analyze(body).findings) == 20_000


def test_twenty_thousand_nested_defaults_closed():
    body = "${1:-" * 20_000 + "x" + "}" * 20_000
    # the first default's text runs to the first `}`; the other closers are plain text
    assert substitute_args(body, []) == "${1:-" * 19_999 + "x" + "}" * 19_999
    assert substitute_args(body, ["a"]) == "a" + "}" * 19_999
    assert [type(n).__name__ for n in parse_template(body).nodes] == ["Default", "Literal"]


def test_plan_is_flat_literals_and_ops():
    plan = Template("Hi $1, ${2:-you} and ${@:2:1} $ARGUMENTS ${ARGUMENTS:-none}!").plan
    assert plan == ("Hi ", (0, 0), ", ", (3, 1, "you"), " and ", (2, 1, 2), " ", (1,), " ", (4, "none"), "!")


@pytest.mark.parametrize("body", ["", "plain", "$", "$$1", "${1}", "x $0 y"])
def test_plan_edge_cases(body):
    assert Template(body).substitute(["a"]) == reference(body, ["a"])


# --- the fast paths: the plan cache, short bodies, groups left out ------------------------


def test_a_body_without_dollar_is_returned_as_it_is():
    body = "no placeholder here {1} <2> :- @"
    assert substitute_args(body, ["a"]) is body
    assert plan_module._PLANS.get(body) is None  # nothing to remember


def test_the_plan_cache_is_shared_bounded_and_skips_long_bodies(monkeypatch):
    monkeypatch.setattr(plan_module, "_PLANS", {})
    monkeypatch.setattr(plan_module, "_PLANS_CAP", 3)
    assert substitute_args("a $1", ["x"]) == "a x"
    assert Template("a $1")._plan is plan_module._PLANS["a $1"]  # one plan for both entry points
    for i in range(3):
        substitute_args(f"b{i} $1", ["x"])
    assert list(plan_module._PLANS) == ["b2 $1"]  # emptied when full, then the new body kept
    long_body = "$1 " + "x" * plan_module._PLAN_KEY_MAX
    assert substitute_args(long_body, ["y"]) == "y " + "x" * plan_module._PLAN_KEY_MAX
    assert long_body not in plan_module._PLANS


@pytest.mark.parametrize("body, zone_scan", [
    ("${1:-" * 51, False),  # a short body is split as it is, even with every opener dead
    ("${1:-" * 60 + "$1", True),  # past _SHORT_BODY: the zone scan
    ("$<@:-" * 30 + "${2:-x} $2" + "${1:-" * 30, True),
    ("${1:-x} " * 40 + "$2", False),  # long, but every opener closed
])
def test_short_and_long_bodies_with_dead_openers_expand_as_lark(body, zone_scan, monkeypatch):
    calls = []
    scanned = plan_module._compile_scanned
    monkeypatch.setattr(plan_module, "_compile_scanned", lambda b: calls.append(b) or scanned(b))
    monkeypatch.setattr(plan_module, "_PLANS", {})
    for args in ([], ["a"], ["a", "b c"]):
        assert substitute_args(body, args) == Template(body).substitute(args) == reference(body, args)
    assert calls == ([body] if zone_scan else [])


def test_atomic_groups_are_left_out_only_where_they_change_nothing():
    assert atomic(r":\-", "x", native=True) == r":\-"  # one way to match: no group
    assert atomic(r"\}", "x", native=False) == r"\}"
    assert atomic("[0-9]+", "x", native=True) == "[0-9]++"  # (?>x+) is x++
    assert atomic("[0-9]+", "x", native=False) == "(?=(?P<x>[0-9]+))(?P=x)"
    for pattern in ("[0-9]+|@", "(?:a|ab)", "a*", "[^}]+b", ".+"):
        assert atomic(pattern, "x", native=True) == f"(?>{pattern})"
