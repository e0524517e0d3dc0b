"""The edge-case tables of pi 0.84.0 (docs/pi-rules.md#templates), transcribed row by row.

Every expected value below is pi 0.84.0's real output as recorded from its own code (docs/pi-rules.md#checked-cases).
"""

from __future__ import annotations

import pytest

from pipeline.templates.discovery import load_templates
from pipeline.templates.files import PromptTemplate
from pipeline.templates.frontmatter import parse_frontmatter
from pipeline.templates.invoke import expand_input, parse_args
from pipeline.templates.plan import substitute_args

PARSING = [
    ('P1', 'a b c', ['a', 'b', 'c']),
    ('P2', '  a   b  ', ['a', 'b']),
    ('P3', 'a\tb', ['a', 'b']),
    ('P4', 'a\nb', ['a', 'b']),
    ('P5', 'a\r\nb', ['a', 'b']),
    ('P6', 'a\xa0b', ['a', 'b']),
    ('P7', 'a\u2003b', ['a', 'b']),
    ('P8', 'a\u3000b', ['a', 'b']),
    ('P9', 'a\ufeffb', ['a', 'b']),
    ('P10', 'a\u200bb', ['a\u200bb']),
    ('P11', 'a\x85b', ['a\x85b']),
    ('P12', 'a\x1fb', ['a\x1fb']),
    ('P13', '"hello world" x', ['hello world', 'x']),
    ('P14', "'single quoted' y", ['single quoted', 'y']),
    ('P15', 'a"b c"d', ['ab cd']),
    ('P16', '"" b', ['b']),
    ('P17', "a '' b", ['a', 'b']),
    ('P18', 'x "" ', ['x']),
    ('P19', '"unterminated arg', ['unterminated arg']),
    ('P20', "it's fine", ['its fine']),
    ('P21', '"it\'s" ok', ["it's", 'ok']),
    ('P22', '\'say "hi"\'', ['say "hi"']),
    ('P23', 'a\\ b', ['a\\', 'b']),
    ('P24', 'a\\"b c"', ['a\\b c']),
    ('P25', '"a""b"', ['ab']),
    ('P26', '"a"\'b\'', ['ab']),
    ('P27', '"  padded  "', ['  padded  ']),
    ('P28', '', []),
    ('P29', '   ', []),
    ('P30', '"a\nb" c', ['a\nb', 'c']),
    ('P31', '0 0', ['0', '0']),
    ('P32', '😀 b', ['😀', 'b']),
]

SUBSTITUTION = [
    ('S1', '$1', ['a', 'b'], 'a'),
    ('S2', '$2-$1', ['a', 'b'], 'b-a'),
    ('S3', '$3', ['a', 'b'], ''),
    ('S4', '$0', ['a', 'b'], ''),
    ('S5', '$12', ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12'], '12'),
    ('S6', '$12', ['a', 'b'], ''),
    ('S7', '$10', ['a'], ''),
    ('S8', '$01', ['a'], 'a'),
    ('S9', '$1$2', ['a', 'b'], 'ab'),
    ('S10', '$@@', ['a'], 'a@'),
    ('S11', '$$1', ['a'], '$a'),
    ('S12', '\\$1', ['a'], '\\a'),
    ('S13', '$-1', ['a'], '$-1'),
    ('S14', '$٣', ['a'], '$٣'),
    ('S15', '$@', ['a', 'b', 'c'], 'a b c'),
    ('S16', '$ARGUMENTS', ['a', 'b', 'c'], 'a b c'),
    ('S17', '$@', [], ''),
    ('S18', '[$@]', [], '[]'),
    ('S19', '$ARGS', ['a'], '$ARGS'),
    ('S20', '$arguments', ['a'], '$arguments'),
    ('S21', '$ARGUMENTSX', ['a', 'b'], 'a bX'),
    ('S22', '${@:2}', ['a', 'b', 'c'], 'b c'),
    ('S23', '${@:2:1}', ['a', 'b', 'c'], 'b'),
    ('S24', '${@:2:10}', ['a', 'b', 'c'], 'b c'),
    ('S25', '${@:0}', ['a', 'b'], 'a b'),
    ('S26', '${@:02}', ['a', 'b'], 'b'),
    ('S27', '${@:1:0}', ['a', 'b'], ''),
    ('S28', '${@:5}', ['a', 'b'], ''),
    ('S29', '${@:1:2}x', ['a', 'b', 'c'], 'a bx'),
    ('S30', '${@:2:}', ['a', 'b'], '${@:2:}'),
    ('S31', '${@}', ['a'], '${@}'),
    ('S32', '${1}', ['a'], '${1}'),
    ('S33', '${ @:1}', ['a'], '${ @:1}'),
    ('S34', '${@:1:-1}', ['a', 'b'], '${@:1:-1}'),
    ('S35', '${ARGUMENTS}', ['a'], '${ARGUMENTS}'),
    ('S36', '${@:-1}', [], '1'),
    ('S37', '${@:-1}', ['a', 'b'], 'a b'),
    ('S38', '${@:-none}', [], 'none'),
    ('S39', '${@:-none}', ['a', 'b'], 'a b'),
    ('S40', '${ARGUMENTS:-none}', [], 'none'),
    ('S41', '${ARGUMENTS:-none}', ['x'], 'x'),
    ('S42', '${1:-def}', ['a'], 'a'),
    ('S43', '${1:-def}', [], 'def'),
    ('S44', '${2:-}', ['a'], ''),
    ('S45', '${1:-$2}', [], '$2'),
    ('S46', '${1:-a}b}', [], 'ab}'),
    ('S47', '${1:-${2}}', ['', 'x'], '${2}'),
    ('S48', '${0:-zero}', ['a'], 'zero'),
    ('S49', '${12:-d}', ['a'], 'd'),
    ('S50', '${01:-d}', ['a'], 'a'),
    ('S51', '${1:-x}${1:-y}', [], 'xy'),
    ('S52', '$1${1:-d}', ['a'], 'aa'),
    ('S53', '${1:-def}', ['0'], '0'),
    ('S54', '${1:-multi\nline}', [], 'multi\nline'),
    ('S55', '${1:-a:-b}', [], 'a:-b'),
    ('S56', '${1:-}', [''], ''),
    ('S57', '$1', [''], ''),
    ('S58', '${1:-$&}', [], '$&'),
    ('S59', '${-1:-d}', ['a'], '${-1:-d}'),
    ('S60', '${1:-d', ['a'], '${1:-d'),
    ('S61', '${1:-}}', [], '}'),
    ('S62', '$1 $ARGUMENTS', ['$@', 'x'], '$@ $@ x'),
    ('S63', '$1', ['$ARGUMENTS', 'x'], '$ARGUMENTS'),
    ('S64', '$ARGUMENTS', ['$@', 'y'], '$@ y'),
    ('S65', '$1', ['${@:1}', 'z'], '${@:1}'),
    ('S66', '${@:1}', ['$1'], '$1'),
    ('S67', '$@', ['$$x'], '$$x'),
    ('S68', '$ARGUMENTS', ['a$&b'], 'a$&b'),
    ('S69', '$@', ['$`'], '$`'),
    ('S70', 'pre $@ post', ["$'"], "pre $' post"),
    ('S71', '$1', ['$$'], '$$'),
    ('S72', '$1', ['\\1 \\n'], '\\1 \\n'),
    ('S73', '$', ['a'], '$'),
    ('S74', '$$', ['a'], '$$'),
    ('S75', '$ 1', ['a'], '$ 1'),
    ('S76', '$1', ['😀'], '😀'),
    ('S77', '$99999999999999999999', ['a'], ''),
    ('S78', '${@:99999999999999999999}', ['a'], ''),
]

# templates of the invocation table
INVOCATION_TEMPLATES = [
    PromptTemplate("review", "", "Review $1 focusing on ${@:2}. All: $@"),
    PromptTemplate("t", "", "[$1][$2]"),
    PromptTemplate("n", "", "\nbody $1\n"),
    PromptTemplate("skill:nope", "", "TPL($1)"),
]

INVOCATION = [
    ('X1', '/review src/a.ts perf security', 'Review src/a.ts focusing on perf security. All: src/a.ts perf security'),
    ('X2', '/review', 'Review  focusing on . All: '),
    ('X3', '/review ', 'Review  focusing on . All: '),
    ('X4', '/review\tsrc', 'Review src focusing on . All: src'),
    ('X5', '/review\nsrc', 'Review src focusing on . All: src'),
    ('X6', '/review\n\nsrc', 'Review src focusing on . All: src'),
    ('X7', '/review\xa0src', 'Review src focusing on . All: src'),
    ('X8', '/review\x85src', '/review\x85src'),
    ('X9', '/t  a   b', '[a][b]'),
    ('X10', '/t a\nb c', '[a][b]'),
    ('X11', '/t "x y" z', '[x y][z]'),
    ('X12', '/t a\tb', '[a][b]'),
    ('X13', '/t a b ', '[a][b]'),
    ('X14', '/unknown a b', '/unknown a b'),
    ('X15', 'review a', 'review a'),
    ('X16', ' /review a', ' /review a'),
    ('X17', '/', '/'),
    ('X18', '/ t a', '/ t a'),
    ('X19', '/REVIEW a', '/REVIEW a'),
    ('X20', '/t\u200ba', '/t\u200ba'),
    ('X21', '/n X', '\nbody X\n'),
    ('X22', '/skill:nope x', 'TPL(x)'),
]


@pytest.mark.parametrize(("row", "text", "expected"), PARSING, ids=[r[0] for r in PARSING])
def test_parsing_table(row, text, expected):
    assert parse_args(text) == expected


@pytest.mark.parametrize(("row", "body", "args", "expected"), SUBSTITUTION, ids=[r[0] for r in SUBSTITUTION])
def test_substitution_table(row, body, args, expected):
    assert substitute_args(body, args) == expected


@pytest.mark.parametrize(("row", "text", "expected"), INVOCATION, ids=[r[0] for r in INVOCATION])
def test_invocation_table(row, text, expected):
    assert expand_input(text, INVOCATION_TEMPLATES) == expected


def test_tables_are_complete():
    assert [r[0] for r in PARSING] == [f"P{i}" for i in range(1, 33)]
    assert [r[0] for r in SUBSTITUTION] == [f"S{i}" for i in range(1, 79)]
    assert [r[0] for r in INVOCATION] == [f"X{i}" for i in range(1, 23)]


# --- template files (docs/pi-rules.md#templates "Template files") -----------------------------------------

FILES = {
    "plain.md": "\n\n  First line here  \nsecond\n",
    "fm.md": '---\ndescription: Review code\nargument-hint: "<file>"\n---\n\n  Body $1  \n\n',
    "long.md": "x" * 61 + "\nmore",
    "exact60.md": "y" * 60,
    "emoji.md": "a" * 59 + "😀tail",
    "crlf.md": "---\r\ndescription: CRLF\r\n---\r\nline1\r\nline2\r\n",
    "noclose.md": "---\ndescription: x\nbody\n",
    "glued.md": "---\ndescription: glued\n---rest of line\nnext\n",
    "emptyfm.md": "---\n---\nbody only\n",
    "badyaml.md": "---\ndescription: [unclosed\n---\nbody\n",
    "a.md.md": "double",
    "UPPER.MD": "upper",
    "spaced name.md": "spaced",
}


@pytest.fixture()
def file_table(tmp_path):
    for name, text in FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8", newline="")
    loaded = load_templates([tmp_path], include_defaults=False)
    return {t.name: t for t in loaded}, loaded


def test_plain_file_has_untrimmed_body_and_first_line_description(file_table):
    by_name, _ = file_table
    t = by_name["plain"]
    assert (t.description, t.body) == ("  First line here  ", FILES["plain.md"])


def test_frontmatter_file(file_table):
    t = file_table[0]["fm"]
    assert (t.description, t.argument_hint, t.body) == ("Review code", "<file>", "Body $1")


@pytest.mark.parametrize(("name", "description"), [
    ("long", "x" * 60 + "..."),
    ("exact60", "y" * 60),
    ("emoji", "a" * 59 + "\ud83d..."),
])
def test_description_cut_at_60_utf16_units(file_table, name, description):
    assert file_table[0][name].description == description


def test_crlf_file(file_table):
    t = file_table[0]["crlf"]
    assert (t.description, t.body) == ("CRLF", "line1\nline2")


def test_unclosed_frontmatter_is_body(file_table):
    t = file_table[0]["noclose"]
    assert (t.description, t.body) == ("---", FILES["noclose.md"])


def test_glued_closing_line(file_table):
    t = file_table[0]["glued"]
    assert (t.description, t.body) == ("glued", "rest of line\nnext")


def test_empty_frontmatter(file_table):
    t = file_table[0]["emptyfm"]
    assert (t.description, t.body) == ("body only", "body only")


def test_bad_yaml_is_skipped_and_reported(file_table, tmp_path):
    by_name, loaded = file_table
    assert "badyaml" not in by_name
    [problem] = [p for p in loaded.problems if p.code == "template.frontmatter"]
    assert problem.location.file == str(tmp_path / "badyaml.md")


def test_names_from_file_names(file_table):
    by_name, _ = file_table
    assert "a.md" in by_name and "UPPER" not in by_name and "UPPER.MD" not in by_name
    assert "spaced name" in by_name
    assert expand_input("/spaced name", list(by_name.values())) == "/spaced name"


def test_frontmatter_read_from_index_4():
    fm = parse_frontmatter("---a: 1\n---\nbody")
    assert (dict(fm.data), fm.body) == ({"": 1}, "body")
