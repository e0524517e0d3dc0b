"""YAML syntax messages keyed by example inputs: one tested row each."""

from __future__ import annotations

import pytest

from pipeline.errors import ProfileError
from pipeline.source.reader import parse
from pipeline.source.syntax import EXAMPLES, example_error, match_example


@pytest.mark.parametrize("row", EXAMPLES, ids=[r.example for r in EXAMPLES])
def test_each_example_is_classified_as_its_own_row(row):
    matched = match_example(example_error(row.example))
    assert (matched.message, matched.hint, matched.at) == (row.message, row.hint, row.at)


@pytest.mark.parametrize("row", EXAMPLES, ids=[r.example for r in EXAMPLES])
def test_each_example_through_the_profile_reader(row):
    with pytest.raises(ProfileError) as raised:
        parse(row.example, "p.yaml")
    [problem] = raised.value.problems
    assert (problem.message, problem.hint, problem.code) == (row.message, row.hint, "profile.yaml-syntax")
    assert problem.location.file == "p.yaml" and problem.location.line is not None


@pytest.mark.parametrize("quote", ['"', "'"])
def test_an_unclosed_quote_is_reported_where_it_opens(quote):
    text = f"name: a\ndescription: {quote}never closed\ncompaction:\n  reserve_tokens: 1\n  keep_recent_tokens: 2\n"
    with pytest.raises(ProfileError) as raised:
        parse(text, "p.yaml")
    [problem] = raised.value.problems
    loc = problem.location
    assert (problem.message, loc.line, loc.col) == ("unclosed quote", 2, 14)


def test_an_unclosed_bracket_is_reported_where_it_opens():
    with pytest.raises(ProfileError) as raised:
        parse("name: a\ndefault_tools: [read,\n  bash\nother: 1\n", "p.yaml")
    loc = raised.value.problems[0].location
    assert (raised.value.problems[0].message, loc.line, loc.col) == ("unclosed bracket", 2, 16)


def test_a_variant_of_an_example_matches_through_the_masked_signature():
    """`}` where the example has `]`, and another escape letter: the same row by masked signature."""
    assert match_example(example_error("a: {b: 1}}\n")).message == "a closing bracket with no opening one"
    assert match_example(example_error('a: "\\k"\n')).message == "unknown escape sequence in double-quoted text"


def test_an_error_no_example_covers_keeps_ruamels_facts():
    with pytest.raises(ProfileError) as raised:
        parse("a: !<tag\n", "p.yaml")
    [problem] = raised.value.problems
    assert problem.code == "profile.yaml-syntax" and problem.location.line == 1
    assert problem.message.startswith("invalid YAML: expected '>'")
