"""The reader: YAML 1.2 core values, anchors and merge keys, BOM, limits; load_profile."""

from __future__ import annotations

import math

import pytest

from pipeline import PipelineError, load_profile
from pipeline.source.reader import parse
from pipeline.source.tree import flatten

from cases import HEAD
from conftest import write_files


def _data(text: str):
    return flatten(parse(text, "t.yaml"))[0]


def test_core_schema_values():
    data = _data(
        "i: 12\nh: 0x1F\no: 0o17\nu: 1_000\nf: 2.5\ninf: -.inf\nt: true\nn: null\ne:\nq: '12'\n"
        "d: 2024-01-02\nyes_is_text: yes\nexplicit: !!str 5\nint_tag: !!int '7'\n"
    )
    assert {k: v for k, v in data.items() if k != "inf"} == {
        "i": 12, "h": 31, "o": 15, "u": "1_000", "f": 2.5, "t": True, "n": None, "e": None, "q": "12",
        "d": "2024-01-02", "yes_is_text": "yes", "explicit": "5", "int_tag": 7,
    }
    assert data["inf"] == -math.inf


def test_numbers_outside_the_yaml_1_2_core_schema_are_text():
    """ruamel reads `1_000`, `0b101` and `+0x1F` as numbers; YAML 1.2 core (and an editor's
    YAML server) reads them as text, and so does a profile (issue 34, item 3)."""
    data = _data("u: 1_000\nb: 0b101\nx: +0x1F\nf: 1_0.5\nz: 012\ne: 1e3\nn: .NaN\n")
    assert {k: v for k, v in data.items() if k != "n"} == {
        "u": "1_000", "b": "0b101", "x": "+0x1F", "f": "1_0.5", "z": 12, "e": 1000.0}
    assert math.isnan(data["n"])


def test_an_explicit_int_tag_refuses_digit_separators():
    with pytest.raises(PipelineError) as err:
        _data("a: !!int 1_000\n")
    assert "`1_000` is not a valid !!int" in str(err.value)


def test_anchors_aliases_and_merge_keys():
    data = _data("base: &b {x: 1, y: 2}\ncopy: *b\nmerged:\n  <<: *b\n  y: 3\n")
    assert data == {"base": {"x": 1, "y": 2}, "copy": {"x": 1, "y": 2}, "merged": {"y": 3, "x": 1}}


def test_byte_order_mark_is_accepted(tmp_path):
    write_files(tmp_path, {"p.yaml": b"\xef\xbb\xbf" + HEAD.encode()})
    assert load_profile(tmp_path / "p.yaml").profile.name == "t"


def test_source_map_has_every_value():
    tree = parse("a:\n  b: [1, {c: x}]\n", "t.yaml")
    _, source_map = flatten(tree)
    assert set(source_map) == {(), ("a",), ("a", "b"), ("a", "b", 0), ("a", "b", 1), ("a", "b", 1, "c")}
    entry = source_map.get(("a", "b", 1, "c"))
    assert (entry.value.line, entry.value.col, entry.key.line, entry.key.col) == (2, 14, 2, 11)


def test_load_profile_stops_at_model_errors_but_ignores_cross_field_rules(tmp_path):
    write_files(tmp_path, {"p.yaml": HEAD + "system_prompt:\n  sections:\n    - {id: added, heading: x}\n"})
    assert load_profile(tmp_path / "p.yaml").profile.system_prompt.sections[-1].id == "added"
    write_files(tmp_path, {"q.yaml": HEAD + "compaction: {enabled: maybe}\n"})
    with pytest.raises(PipelineError):
        load_profile(tmp_path / "q.yaml")


def test_unknown_profile_names():
    with pytest.raises(PipelineError) as err:
        load_profile("defualt")
    assert str(err.value) == "defualt: no such profile file (did you mean `builtin:default`?)"
    with pytest.raises(PipelineError) as err:
        load_profile("builtin:nope")
    assert str(err.value) == "unknown built-in profile `builtin:nope` (built-in profiles: default, examples/compaction-policy, examples/team, minimal, pi-1)"


def test_a_directory_is_not_a_profile(tmp_path):
    with pytest.raises(PipelineError) as err:
        load_profile(tmp_path)
    assert str(err.value) == f"{tmp_path}: cannot read profile: it is a directory, not a regular file (name a regular file)"
