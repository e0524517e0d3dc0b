"""Where invalid YAML frontmatter is reported: pi 0.84.0's parser's line and column (peer case
``frontmatter#03``: ``foo: [bar`` at line 1, column 10). Each expected position below is pi 0.84.0's
own answer (the oracle's ``frontmatter`` op, ``at line L, column C`` in its error), in YAML-text
coordinates: an unclosed quoted scalar or flow collection is reported where its text ends (the end
of the YAML, or the first later line indented less than the block node holding it)."""

from __future__ import annotations

import pytest

from pipeline.templates.frontmatter import FrontmatterError, parse_frontmatter

PI_084 = [
    ("foo: [bar", (1, 10)),
    ("foo: [bar, baz", (1, 15)),
    ("a: 1\nfoo: {bar", (2, 10)),
    ("foo: [bar\nx: 1", (2, 1)),
    ("foo: [bar   ", (1, 13)),
    ("foo: 'bar", (1, 10)),
    ('foo: "bar', (1, 10)),
    ("foo: [bar\n\n", (3, 1)),
    ("a:\n  foo: [bar\n  x: 1", (3, 3)),
    ("foo: [bar\n # c\nx: 1", (3, 1)),
    ("foo: [bar\n# c\nx: 1", (3, 1)),
    ("foo: [bar\n  baz\nx: 1", (3, 1)),
    ("[bar", (1, 5)),
    ("foo: [bar\n\nx: 1", (3, 1)),
    ("foo: [bar,\n  x: 1", (2, 7)),
    ("foo: [a, {b: c", (1, 15)),
    ("- [bar\n- x", (2, 1)),
]


@pytest.mark.parametrize(("yaml", "position"), PI_084, ids=[y for y, _ in PI_084])
def test_an_unclosed_construct_is_reported_where_pi_reports_it(yaml, position):
    with pytest.raises(FrontmatterError) as raised:
        parse_frontmatter(f"---\n{yaml}\n---\nBody")
    # the YAML starts on line 2, column 1 of the file
    assert (raised.value.line - 1, raised.value.col) == position


def test_a_bracket_one_column_short_still_closes_the_collection():
    assert parse_frontmatter("---\nfoo: [bar\n  ]\n---\nBody").data == {"foo": ["bar"]}
