"""The Lark grammar and the AST built from it: node kinds, values, positions."""

from __future__ import annotations

import dataclasses

import pytest

from pipeline.resources import data_dir, grammar_text
from pipeline.templates.nodes import AllArgs, Default, Literal, Pos, Positional, Slice
from pipeline.templates.plan import Template, parse_template, substitute_args
from pipeline.templates.grammar import GRAMMAR_FILE
from pipeline.templates.reference import parser
from pipeline.templates.plan import build_nodes


def kinds(body: str) -> list[str]:
    return [type(n).__name__ for n in parse_template(body).nodes]


def test_grammar_is_shipped_data_loaded_through_resources():
    assert (data_dir("grammar") / GRAMMAR_FILE).is_file()
    text = grammar_text(GRAMMAR_FILE)
    assert "BRACE_DEFAULT_OPEN" in text and "TEXT" in text
    assert parser().options.parser == "lalr"
    assert parser().options.transformer is not None  # nodes are built while parsing, no tree
    assert parser() is parser()  # built once


def test_positions_are_kept_on_every_node():
    body = "a\n  $2 ${@:3} $<1:-x>"
    nodes = build_nodes(body)
    assert [(n.pos.line, n.pos.col) for n in nodes] == [(1, 1), (2, 3), (2, 5), (2, 6), (2, 12), (2, 13)]
    assert [body[n.pos.offset : n.pos.end] for n in nodes] == ["a\n  ", "$2", " ", "${@:3}", " ", "$<1:-x>"]


@pytest.mark.parametrize(("body", "node"), [
    ("$1", Positional(1, Pos(1, 1, 0, 2))),
    ("$012", Positional(12, Pos(1, 1, 0, 4))),
    ("$@", AllArgs(Pos(1, 1, 0, 2), "@")),
    ("$ARGUMENTS", AllArgs(Pos(1, 1, 0, 10), "ARGUMENTS")),
    ("${@:2}", Slice(2, None, Pos(1, 1, 0, 6))),
    ("${@:2:3}", Slice(2, 3, Pos(1, 1, 0, 8))),
    ("$<@:2:3>", Slice(2, 3, Pos(1, 1, 0, 8), angle=True)),
    ("${2:-x y}", Default(Positional(2, Pos(1, 3, 2, 3)), "x y", Pos(1, 1, 0, 9))),
    ("${@:-}", Default(AllArgs(Pos(1, 3, 2, 3), "@"), "", Pos(1, 1, 0, 6))),
    ("$<ARGUMENTS:-a}b>", Default(AllArgs(Pos(1, 3, 2, 11), "ARGUMENTS"), "a}b", Pos(1, 1, 0, 17), angle=True)),
])
def test_single_forms(body, node):
    assert parse_template(body).nodes == (node,)


def test_positions_across_lines():
    t = parse_template("ab\ncd $2\n  ${@:1}")
    lit, pos2, lit2, sl = t.nodes
    assert (pos2.pos.line, pos2.pos.col, pos2.pos.offset) == (2, 4, 6)
    assert (sl.pos.line, sl.pos.col, sl.pos.offset, sl.pos.end) == (3, 3, 11, 17)
    assert t.source(sl) == "${@:1}"
    assert (lit.text, lit2.text) == ("ab\ncd ", "\n  ")


def test_plain_text_is_merged_into_one_literal():
    # `$$`, `$-`, `${` and the text around them are all plain text
    t = parse_template("a $$ b $- c ${ d")
    assert kinds("a $$ b $- c ${ d") == ["Literal"]
    assert t.nodes[0].text == "a $$ b $- c ${ d"
    assert t.nodes[0].pos == Pos(1, 1, 0, 16)


def test_a_dollar_inside_a_failed_form_still_starts_a_form():
    t = parse_template("${1:-$2")
    assert kinds("${1:-$2") == ["Literal", "Positional"]
    assert t.nodes[1].index == 2


@pytest.mark.parametrize(("body", "kind"), [
    ("${1}", "bare"), ("${@}", "bare"), ("${ARGUMENTS}", "bare"), ("$<2>", "bare"),
    ("${1-x}", "operator"), ("${1:=x}", "operator"), ("$<@+x>", "operator"),
    ("${ 1}", "spaced"), ("${1 :-x}", "spaced"), ("$< @:2>", "spaced"),
    ("${@:2:}", "slice"), ("${@:1:-1}", "slice"), ("$<@:2", "slice"), ("${@:}", "slice"),
    ("${1:-never closed", "unclosed"), ("$<@:-x", "unclosed"),
    ("${-1:-d}", "negative"), ("$<-2>", "negative"),
    ("$ARGS", "name"), ("$arguments", "name"), ("${args:-x}", "name"), ("$Argument", "name"),
    ("$٣", "digit"),
])
def test_near_misses_are_literal_text_marked_for_analysis(body, kind):
    nodes = parse_template(body).nodes
    assert isinstance(nodes[0], Literal) and nodes[0].near_miss == kind
    assert substitute_args(body, ["A", "B"]) == body


def test_shell_variables_are_not_near_misses():
    t = parse_template("echo ${HOME} $PATH $args_file ${#}")
    assert all(n.near_miss is None for n in t.nodes if isinstance(n, Literal))


@pytest.mark.parametrize("body", ["", "$", "${", "$<", "}", "${@:", "$" * 500, "\ud83d", "\x00$\x00"])
def test_every_input_parses(body):
    t = parse_template(body)
    assert "".join(t.source(n) for n in t.nodes) == body


def test_nodes_are_frozen():
    node = parse_template("$1").nodes[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.index = 2
    assert isinstance(parse_template("$1"), Template)


def test_parse_is_cached():
    assert parse_template("cached $1 body") is parse_template("cached $1 body")


def test_huge_numbers_do_not_overflow_the_int_conversion():
    body = "$" + "9" * 5000 + " ${@:" + "0" * 5000 + "2}"
    assert substitute_args(body, ["a", "b"]) == " b"
