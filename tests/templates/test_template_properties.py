"""Hypothesis properties of the argument language and the argument splitter."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.js import JS_WHITESPACE
from pipeline.templates.analysis import analyze
from pipeline.templates.files import PromptTemplate
from pipeline.templates.invoke import expand_input, parse_args
from pipeline.templates.plan import parse_template, substitute_args

#: Applied to each test here (a loaded settings profile would leak into other test modules).
SETTINGS = settings(max_examples=300, deadline=None)

# pieces that make `$` soup likely to hit every form and every near miss
PIECES = ["$", "{", "}", "<", ">", "@", ":", "-", ":-", "0", "1", "2", "12", "ARGUMENTS", "ARGS",
          " ", "\n", "x", "😀", "٣", "\ud83d", "\\", "&", "'", '"', "\u00a0"]
soup = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)
any_text = st.one_of(st.text(max_size=60), soup)
args_lists = st.lists(st.one_of(st.text(max_size=8), st.sampled_from(["", "$1", "$@", "$$", "${@:1}"])), max_size=6)


@SETTINGS
@given(any_text, args_lists)
def test_substitution_never_raises(body, args):
    assert isinstance(substitute_args(body, args), str)


@SETTINGS
@given(any_text)
def test_analysis_and_splitting_never_raise(text):
    analysis = analyze(text)
    assert analysis.highest_positional >= 0
    assert all(a for a in parse_args(text))
    assert isinstance(expand_input(text, [PromptTemplate("x", "", text)]), str)


@SETTINGS
@given(st.text().filter(lambda s: "$" not in s), args_lists)
def test_text_without_dollar_is_unchanged(body, args):
    assert substitute_args(body, args) == body


@SETTINGS
@given(any_text)
def test_nodes_cover_the_body_exactly(body):
    t = parse_template(body)
    assert "".join(t.source(n) for n in t.nodes) == body
    assert [n.pos.offset for n in t.nodes] == sorted(n.pos.offset for n in t.nodes)


# --- pi's own matching rule, written as the regular expression its source uses -----------

_PI_FORMS = re.compile(r"\$\{([0-9]+|ARGUMENTS|@):-([^}]*)\}|\$\{@:([0-9]+)(?::([0-9]+))?\}|\$(ARGUMENTS|@|[0-9]+)")


def pi_reference(body: str, args: list[str]) -> str:
    """substituteArgs as a regex with a replacement callback (no angle forms)."""
    joined = " ".join(args)

    def arg(n: str) -> str | None:
        i = int(n) - 1
        return args[i] if 0 <= i < len(args) else None

    def replace(m: re.Match) -> str:
        target, default, start, length, simple = m.groups()
        if target is not None:
            value = joined if target in ("@", "ARGUMENTS") else arg(target)
            return value if value else default
        if start is not None:
            first = max(int(start) - 1, 0)
            return " ".join(args[first : None if length is None else first + int(length)])
        return joined if simple in ("@", "ARGUMENTS") else (arg(simple) or "")

    return _PI_FORMS.sub(replace, body)


no_angle_soup = st.lists(st.sampled_from([p for p in PIECES if p not in "<>"]), max_size=30).map("".join)


@SETTINGS
@given(no_angle_soup, args_lists)
def test_equals_pi_matching_rule(body, args):
    assert substitute_args(body, args) == pi_reference(body, args)


# --- single pass: values are never scanned again -------------------------------------------

FORMS = ["$1", "$2", "$3", "$@", "$ARGUMENTS", "${1:-d}", "${2:-}", "${@:2}", "${@:1:2}", "${@:-x}"]
tricky_values = st.lists(st.sampled_from(["$1", "$2", "$@", "$ARGUMENTS", "${@:1}", "${1:-z}", "$$", "$&", "|", ""]),
                         max_size=4)


def meaning(form: str, args: list[str]) -> str:
    """What one form means, from the recorded table (docs/pi-rules.md#templates), without parsing."""
    table = {
        "$1": args[0] if args else "",
        "$2": args[1] if len(args) > 1 else "",
        "$3": args[2] if len(args) > 2 else "",
        "$@": " ".join(args),
        "$ARGUMENTS": " ".join(args),
        "${1:-d}": (args[0] if args else "") or "d",
        "${2:-}": args[1] if len(args) > 1 else "",
        "${@:2}": " ".join(args[1:]),
        "${@:1:2}": " ".join(args[:2]),
        "${@:-x}": " ".join(args) or "x",
    }
    return table[form]


@SETTINGS
@given(st.lists(st.sampled_from(FORMS), min_size=1, max_size=6), tricky_values)
def test_values_are_inserted_verbatim(forms, args):
    body = "#".join(forms)
    assert substitute_args(body, args) == "#".join(meaning(f, args) for f in forms)


# --- the angle spelling equals the braced one ------------------------------------------------

numbers = st.one_of(st.integers(0, 15).map(str), st.sampled_from(["01", "007", "99999999999999999999"]))
default_text = st.text(alphabet="ab $@1:-\n😀", max_size=6)
filler = st.text(alphabet="xyz .\n😀", max_size=4)


@st.composite
def twin_forms(draw):
    kind = draw(st.sampled_from(["default", "slice", "slice_len"]))
    if kind == "default":
        target = draw(st.one_of(numbers, st.sampled_from(["@", "ARGUMENTS"])))
        inner = f"{target}:-{draw(default_text)}"
    elif kind == "slice":
        inner = f"@:{draw(numbers)}"
    else:
        inner = f"@:{draw(numbers)}:{draw(numbers)}"
    return "${" + inner + "}", "$<" + inner + ">"


@SETTINGS
@given(st.lists(st.tuples(filler, twin_forms()), min_size=1, max_size=5), args_lists)
def test_angle_forms_equal_braced_twins(parts, args):
    braced = "".join(f + b for f, (b, _) in parts)
    angle = "".join(f + a for f, (_, a) in parts)
    assert substitute_args(angle, args) == substitute_args(braced, args)


# --- argument splitting ----------------------------------------------------------------------

words = st.text(alphabet=st.characters(blacklist_characters=list(JS_WHITESPACE) + ['"', "'"]), min_size=1, max_size=8)


@SETTINGS
@given(st.lists(words, max_size=6), st.lists(st.sampled_from(sorted(JS_WHITESPACE)), min_size=1, max_size=3).map("".join))
def test_unquoted_words_split_on_any_js_whitespace(items, sep):
    assert parse_args(sep + sep.join(items) + sep) == items


@SETTINGS
@given(st.lists(st.text(alphabet=st.characters(blacklist_characters=['"']), min_size=1, max_size=8), max_size=5))
def test_double_quoted_arguments_round_trip(items):
    assert parse_args(" ".join(f'"{i}"' for i in items)) == items


def _char_loop_split(text: str) -> list[str]:
    """pi 0.84.0's ``parseCommandArgs`` ported character by character (the reference)."""
    args, current, quote = [], "", None
    for ch in text:
        if quote is not None:
            if ch == quote:
                quote = None
            else:
                current += ch
        elif ch in "\"'":
            quote = ch
        elif ch in JS_WHITESPACE:
            if current:
                args.append(current)
                current = ""
        else:
            current += ch
    if current:
        args.append(current)
    return args


quote_soup = st.lists(st.sampled_from(['"', "'", " ", "  ", "\t", "\u00a0", "\ufeff", "\x1c", "a", "b c", "é", "\\"]),
                      max_size=16).map("".join)


@settings(max_examples=1000, deadline=None)
@given(st.one_of(quote_soup, st.text(max_size=30)))
def test_splitting_equals_the_character_loop(text):
    assert parse_args(text) == _char_loop_split(text)
