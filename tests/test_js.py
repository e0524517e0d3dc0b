"""pipeline.js: JavaScript's value rules, checked against Node itself.

Expected values come from ``tests/data/js_json_vectors.json`` (Node 22, the oracle's
engine, on seeded random values; see ``tests/data/gen_js_json_vectors.py``) or from the
ECMAScript rules the docstrings quote; every number, string and trim case in the tables
below is also in the vectors, and a test checks that Node agrees with the table.
"""

from __future__ import annotations

import ast
import json
import math
import re
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.js import (
    JS_JSON_MAX_DEPTH,
    MISSING,
    js_json,
    js_nullish,
    js_number,
    js_sorted,
    js_string,
    js_to_number,
    js_trim,
    js_trim_end,
    js_truthy,
    stringify,
    u16len,
    u16slice,
    yaml_string,
)

VECTORS = Path(__file__).resolve().parent / "data" / "js_json_vectors.json"
NAN, INF = math.nan, math.inf


@lru_cache(maxsize=None)
def vectors() -> dict:
    return json.loads(VECTORS.read_text(encoding="ascii"))


def decode(text: str):
    """A vector's value: Python JSON text, ``{"$undefined": true}`` for ``undefined``."""
    return json.loads(text, object_hook=lambda d: MISSING if d == {"$undefined": True} else d)


def holds_undefined(value) -> bool:
    if value is MISSING:
        return True
    if isinstance(value, dict):
        return any(holds_undefined(v) for v in value.values())
    return isinstance(value, list) and any(holds_undefined(v) for v in value)


def node_says(value) -> dict:
    text = json.dumps(value)
    return next(r for r in vectors()["values"] if r["value"] == text)


# --------------------------------------------------------------------------- Node vectors


def test_vectors_are_many_and_varied():
    values = [decode(r["value"]) for r in vectors()["values"]]
    assert len(values) > 700 and len(vectors()["strings"]) > 100
    assert sum(isinstance(v, float) for v in values) > 300
    assert sum(isinstance(v, (dict, list)) for v in values) > 100
    assert any(holds_undefined(v) for v in values)


def test_js_json_is_json_stringify():
    wrong = [(r["value"], js_json(v), r["json"]) for r in vectors()["values"]
             if not holds_undefined(v := decode(r["value"])) and js_json(v) != r["json"]]
    assert wrong == []


def test_string_truthiness_and_number_are_javascripts():
    wrong = []
    for r in vectors()["values"]:
        v = decode(r["value"])
        got = {"string": js_string(v), "truthy": js_truthy(v), "number": js_string(js_to_number(v))}
        wrong += [(r["value"], key, got[key], r[key]) for key in got if got[key] != r[key]]
    assert wrong == []


def test_utf16_length_slice_and_trim_are_javascripts():
    wrong = []
    for r in vectors()["strings"]:
        s = r["s"]
        got = {"length": u16len(s), "trim": js_trim(s), "trimEnd": js_trim_end(s)}
        wrong += [(s, key, got[key], r[key]) for key in got if got[key] != r[key]]
        wrong += [(s, a, b, u16slice(s, a, b), want) for a, b, want in r["slices"] if u16slice(s, a, b) != want]
    assert wrong == []


def test_sort_order_is_javascripts():
    assert js_sorted(r["s"] for r in vectors()["strings"]) == vectors()["sorted"]


# --------------------------------------------------------------------------- tables

NUMBERS = [
    (1e21, "1e+21"),
    (1e-7, "1e-7"),
    (-0.0, "0"),
    (5e-324, "5e-324"),
    (2**53 + 2, "9007199254740994"),
    (float(2**53 + 2), "9007199254740994"),
    (0.1 + 0.2, "0.30000000000000004"),
    (1.0, "1"),
    (1e16, "10000000000000000"),
    (1e-5, "0.00001"),
    (123456789012345680000.0, "123456789012345680000"),
    (1.5e-7, "1.5e-7"),
    (0.000001, "0.000001"),
    (2**53 + 1, "9007199254740992"),  # rounds to a double, as JSON.parse does
    (2**60, "1152921504606847000"),
    (10**400, "null"),
    (NAN, "null"),
    (INF, "null"),
    (-INF, "null"),
    (0, "0"),
    (-5, "-5"),
    (0.5, "0.5"),
    (100.0, "100"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
]


@pytest.mark.parametrize(("x", "want"), NUMBERS)
def test_js_number(x, want):
    assert js_number(x) == want
    assert js_json([x, {"k": x}]) == f'[{want},{{"k":{want}}}]'


def test_number_table_is_what_node_says():
    assert [(x, node_says(x)["json"]) for x, _ in NUMBERS] == NUMBERS


def test_js_number_of_booleans():
    assert (js_number(True), js_number(False)) == ("true", "false")


STRINGS = [  # String(v) spells out what JSON.stringify writes as null
    (NAN, "NaN"),
    (INF, "Infinity"),
    (-INF, "-Infinity"),
    (10**400, "Infinity"),
    (-0.0, "0"),
    (1e21, "1e+21"),
    (True, "true"),
    (None, "null"),
    ("x", "x"),
    ([], ""),
    ([None, [1, [2.5]]], ",1,2.5"),
    ({}, "[object Object]"),
    ([{}], "[object Object]"),
]


@pytest.mark.parametrize(("value", "want"), STRINGS)
def test_js_string(value, want):
    assert js_string(value) == want == node_says(value)["string"]


def test_js_string_of_undefined():
    assert js_string(MISSING) == "undefined"
    assert js_string([MISSING, None, [1, [2.5]]]) == ",,1,2.5" == node_says([{"$undefined": True}, None, [1, [2.5]]])["string"]


def test_js_string_other_values():
    """Values that are not JavaScript values count as objects unless ``other`` says otherwise."""
    assert js_string(object()) == "[object Object]"
    assert js_string([1, b"x"], other=lambda v: "<bytes>") == "1,<bytes>"
    assert js_string({"a": 1}, other=repr) == "[object Object]"


FALSY = [None, MISSING, False, 0, -0.0, NAN, ""]
TRUTHY = [True, 1, -1, 0.5, INF, "0", " ", "false", [], {}, [0], [[]]]


@pytest.mark.parametrize("value", FALSY)
def test_falsy(value):
    assert js_truthy(value) is False


@pytest.mark.parametrize("value", TRUTHY)
def test_truthy(value):
    assert js_truthy(value) is True


def test_truthiness_table_is_what_node_says():
    assert [node_says(v)["truthy"] for v in FALSY if v is not MISSING] == [False] * (len(FALSY) - 1)
    assert [node_says(v)["truthy"] for v in TRUTHY] == [True] * len(TRUTHY)


def test_nullish():
    assert [js_nullish(v) for v in (None, MISSING, 0, "", False, [])] == [True, True, False, False, False, False]


NUMBER_OF = [
    (" 12 ", 12.0),
    ("0x1F", 31.0),
    ("0b101", 5.0),
    ("", 0.0),
    ("12px", NAN),
    ("Infinity", INF),
    ("1_000", NAN),
    (None, 0.0),
    (True, 1.0),
    ([7], 7.0),
    ([1, 2], NAN),
    ({}, NAN),
    (10**400, INF),
]


@pytest.mark.parametrize(("value", "want"), NUMBER_OF)
def test_js_to_number(value, want):
    got = js_to_number(value)
    assert isinstance(got, float) and (got == want or math.isnan(got) and math.isnan(want))
    assert js_string(got) == node_says(value)["number"]


def test_js_to_number_of_undefined():
    assert math.isnan(js_to_number(MISSING))


@pytest.mark.parametrize(("s", "length"), [("", 0), ("abc", 3), ("a\U0001F600b", 4), ("\ud800", 1), ("é中", 2)])
def test_u16len(s, length):
    assert u16len(s) == length


@pytest.mark.parametrize(("s", "start", "end", "want"), [
    ("a\U0001F600b", 1, 2, "\ud83d"),
    ("a\U0001F600b", 1, 3, "\U0001F600"),
    ("a\U0001F600b", 2, None, "\ude00b"),
    ("a\U0001F600b", -1, None, "b"),
    ("a\U0001F600b", 0, -1, "a\U0001F600"),
    ("a\U0001F600b", 3, 1, ""),
    ("abc", 1, 2, "b"),
])
def test_u16slice(s, start, end, want):
    assert u16slice(s, start, end) == want


def test_u16slice_table_is_what_node_says():
    slices = {(a, b): want for a, b, want in
              next(r for r in vectors()["strings"] if r["s"] == "a\U0001F600b")["slices"]}
    assert slices[(1, 2)] == "\ud83d" and slices[(1, 3)] == "\U0001F600" and slices[(-1, None)] == "b"


@pytest.mark.parametrize(("s", "trimmed", "trimmed_end"), [
    (" \t\n a b \u00a0", "a b", " \t\n a b"),
    ("\ufeff\u2028x\u2029\u3000", "x", "\ufeff\u2028x"),
    ("\u0085x\u0085", "\u0085x\u0085", "\u0085x\u0085"),  # NEL is not JavaScript whitespace
    ("\u200bx\u200b", "\u200bx\u200b", "\u200bx\u200b"),  # nor is ZERO WIDTH SPACE
    ("", "", ""),
])
def test_js_trim(s, trimmed, trimmed_end):
    assert (js_trim(s), js_trim_end(s)) == (trimmed, trimmed_end)
    node = next(r for r in vectors()["strings"] if r["s"] == s)
    assert (node["trim"], node["trimEnd"]) == (trimmed, trimmed_end)


# --------------------------------------------------------------------------- js_json

JSON_CASES = [
    ({"b": 1, "a": [1.0, 2.5, 1e-7, {"c": 1e21, "d": -0.0}]}, '{"b":1,"a":[1,2.5,1e-7,{"c":1e+21,"d":0}]}'),
    ({"z": 1, "a": 2, "m": 3}, '{"z":1,"a":2,"m":3}'),
    ({"\u00e9": "\U0001F600\u2028\u4e2d"}, '{"\u00e9":"\U0001F600\u2028\u4e2d"}'),
    ("x\ud800y", '"x\\ud800y"'),
    (["\udfff\ud800"], '["\\udfff\\ud800"]'),  # low then high: two lone surrogates
    ("\ud83d" + "\ude00", '"\U0001F600"'),  # high then low: one character, as in UTF-16
    ({"\ud800": 1}, '{"\\ud800":1}'),
    ([True, 1, False, 0, None, 1.0, 0.0], "[true,1,false,0,null,1,0]"),
    ((1, (2.0,)), "[1,[2]]"),
    ([NAN, INF, -INF], "[null,null,null]"),
    ('"\\\x00\x1f\x7f\t', '"\\"\\\\\\u0000\\u001f\x7f\\t"'),
    ([[], {}, [[{}]]], "[[],{},[[{}]]]"),
    ({"big": 2**64, "safe": 2**53}, '{"big":18446744073709552000,"safe":9007199254740992}'),
]


@pytest.mark.parametrize(("value", "want"), JSON_CASES)
def test_js_json(value, want):
    assert js_json(value) == want


def test_js_json_non_string_keys_follow_json_dumps():
    assert js_json({1: 1.0, None: [], True: 0}) == '{"1":0,"null":[]}'  # True == 1 in a dict


def test_js_json_value_holding_the_marker_is_still_exact():
    marker = stringify._MARKER
    value = {"k": marker, marker: [1.0, f'"{marker}"'], "n": 1e-7}
    assert js_json(value) == '{"k":"%s","%s":[1,"\\"%s\\""],"n":1e-7}' % (marker, marker, marker)


def nest(value, levels: int):
    for i in range(levels):
        value = [value] if i % 2 else {"k": value}
    return value


def nested_text(inner: str, levels: int) -> str:
    for i in range(levels):
        inner = f"[{inner}]" if i % 2 else f'{{"k":{inner}}}'
    return inner


@pytest.mark.parametrize("levels", [10, 999, 1500, JS_JSON_MAX_DEPTH - 2])  # + 2 levels of ``inner``
def test_js_json_deep_values(levels):
    inner = [1.0, "\ud800", {"x": 1e-7, "y": True}]
    assert js_json(nest(inner, levels)) == nested_text('[1,"\\ud800",{"x":1e-7,"y":true}]', levels)


def test_js_json_deeper_than_the_limit_is_a_value_error():
    assert js_json(nest([], JS_JSON_MAX_DEPTH - 1)).count("[") == JS_JSON_MAX_DEPTH // 2
    with pytest.raises(ValueError, match="nested deeper than 4096 levels"):
        js_json(nest([], JS_JSON_MAX_DEPTH))
    with pytest.raises(ValueError, match="nested deeper"):
        js_json(nest([], 100_000))


def test_js_json_of_a_value_containing_itself_is_a_value_error():
    loop: list = [1.0]
    loop.append({"again": loop})
    with pytest.raises(ValueError, match="contains itself"):
        js_json(loop)


@pytest.mark.parametrize("value", [MISSING, [MISSING], {"a": object()}, {"a": {1, 2}}, b"x"])
def test_js_json_refuses_what_is_not_json(value):
    with pytest.raises(TypeError, match="not JSON-serialisable"):
        js_json(value)


def test_js_json_refuses_keys_json_cannot_write():
    with pytest.raises(TypeError, match="keys must be"):
        js_json({(1, 2): 1})


def test_js_json_of_subclasses():
    class Text(str):
        pass

    class Number(float):
        pass

    class Mapping(dict):
        pass

    assert js_json(Mapping(a=[Text("t"), Number(2.0), Number(1e-7)])) == '{"a":["t",2,1e-7]}'


# --------------------------------------------------------------------------- properties

_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_text = st.lists(st.one_of(st.characters(), st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff"])),
                 max_size=8).map("".join).filter(lambda s: not _PAIR.search(s))
_safe_ints = st.integers(-(2**53), 2**53)


def json_values(scalars, keys):
    return st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)), max_leaves=12)


_values = json_values(st.one_of(st.none(), st.booleans(), _safe_ints, _text,
                                st.floats(allow_nan=False, allow_infinity=False)), _text)
_plain_text = st.text(max_size=8)  # hypothesis leaves surrogates out
_no_floats = json_values(st.one_of(st.none(), st.booleans(), _safe_ints, _plain_text), _plain_text)


def js_parse(text: str):
    """``JSON.parse``: an integer beyond 2**53 is a double (``1e16`` is written as digits)."""
    return json.loads(text, parse_int=lambda digits: int(digits) if abs(int(digits)) <= 2**53 else float(digits))


@settings(max_examples=200, deadline=None)
@given(_values)
def test_js_json_reads_back_as_the_value(value):
    assert js_parse(js_json(value)) == value


@settings(max_examples=200, deadline=None)
@given(_no_floats)
def test_js_json_is_json_dumps_without_floats_and_surrogates(value):
    assert js_json(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_js_number_reads_back_and_keeps_pythons_digits(x):
    text = js_number(x)
    assert float(text) == x
    if "e" not in repr(x) and not repr(x).endswith(".0"):
        assert text == repr(x)  # same shortest digits, same layout
    digits = lambda s: s.split("e")[0].replace("-", "").replace(".", "").strip("0")  # noqa: E731
    assert digits(text) == digits(repr(x))


@settings(max_examples=50, deadline=None)
@given(_values)
def test_js_json_writes_deep_values_as_shallow_ones(value):
    assert js_json(nest(value, 1200)) == nested_text(js_json(value), 1200)


# --------------------------------------------------------------------------- one home


def _top_level_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def test_js_semantics_have_one_home_and_one_name():
    """No module outside pipeline/js defines a name of its surface again, and none imports
    one under another name (no aliases such as ``js_string as js_str``)."""
    import pipeline.js as js

    root = Path(js.__file__).resolve().parents[1]
    surface = set(js.__all__)
    for path in sorted(root.rglob("*.py")):
        if path.parent.name == "js":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        assert not surface & _top_level_names(tree), path
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("pipeline.js"):
                assert all(a.asname is None for a in node.names), (path, node.lineno)


def test_yaml_string_is_string_of_js_values():
    assert yaml_string([1.0, None, True, math.nan]) == "1,,true,NaN"
    assert yaml_string(b"x") == "b'x'"  # a !!binary value keeps Python's str()
    assert js_string(b"x") == "[object Object]"
