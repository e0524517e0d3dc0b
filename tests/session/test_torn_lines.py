"""Torn lines: damage while last, a warning once a later append repaired them; bad JSON in words.

A torn last line is an error (`pipeline session check` exits 1): the entry being
written is lost and the next append must start on a fresh line. Once an append did
that, the fragment is a complete line that is a JSON object cut short: a warning
(`session.repaired-torn-line`), so the file is clean again. Any other line that does
not parse stays an error, with the decoder's reason in words and its column.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.cli import main
from pipeline.js import js_json
from pipeline.session import SessionFile
from pipeline.session.jsonline import is_cut_object

from .conftest import DATA

REAL_LINES = [
    line
    for name in ("short-chat", "long-coding", "compacted-branched")
    for line in (DATA / "real" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
]


def _user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def _torn_file(tmp_path, cut=lambda length: length // 2):
    """A session whose last write stopped part way through an entry line (as a crash leaves it);
    ``cut(length)`` is how many bytes of the line were written."""
    path = tmp_path / "s.jsonl"
    session = SessionFile.create(path, cwd="/w")
    session.append_message(_user("first"))
    line = js_json(session.append_message(_user("second")).raw).encode("utf-8")  # what a crashed writer was writing
    with open(path, "ab") as out:
        out.write(line[: cut(len(line))])
    return path


def _check(capsys, path) -> tuple[int, str]:
    code = main(["session", "check", str(path)])
    return code, capsys.readouterr().out


def test_torn_last_line_is_damage_until_an_append_repairs_it(capsys, tmp_path):
    path = _torn_file(tmp_path)
    code, out = _check(capsys, path)
    assert code == 1 and f"{path}:4: torn last line" in out and "1 errors" in out

    SessionFile.open(path).append_message(_user("after the crash"))
    code, out = _check(capsys, path)
    assert code == 0, out
    assert f"{path}:4: warning: torn line (a write was cut short), repaired by a later append; skipped" in out
    assert out.rstrip().endswith("0 errors, 1 warnings")
    reopened = SessionFile.open(path)
    assert [e.message.content[0].text for e in reopened.entries] == ["first", "second", "after the crash"]
    assert reopened.torn_line is None


def test_json_report_after_the_repair(capsys, tmp_path):
    path = _torn_file(tmp_path)
    SessionFile.open(path).append_message(_user("next"))
    code = main(["session", "check", str(path), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["ok"] is True and report["tornLine"] is None
    assert [(p["code"], p["line"], p["severity"]) for p in report["problems"]] == [
        ("session.repaired-torn-line", 4, "warning")]


@pytest.mark.parametrize("cut", [1, 2, 9, 40, 111, 150, -3, -1])
def test_a_cut_anywhere_in_an_entry_is_repaired(tmp_path, cut):
    path = _torn_file(tmp_path, lambda length: cut % length)
    SessionFile.open(path).append_message(_user("next"))
    assert [(p.code, p.severity) for p in SessionFile.open(path).problems] == [
        ("session.repaired-torn-line", "warning")]


def test_a_cut_inside_a_multibyte_character_is_repaired(tmp_path):
    path = tmp_path / "s.jsonl"
    session = SessionFile.create(path, cwd="/w")
    line = js_json(session.append_message(_user("naïve café ✓")).raw).encode("utf-8")
    with open(path, "ab") as out:
        out.write(line[: line.index("✓".encode()) + 1])  # one byte of a three-byte character
    session = SessionFile.open(path)
    assert session.torn_line == 3
    session.append_message(_user("next"))
    assert [p.code for p in SessionFile.open(path).problems] == ["session.repaired-torn-line"]


@pytest.mark.parametrize(
    "bad, reason",
    [
        ("garbage", "invalid JSON at column 1: expected a value"),
        ('{"type":"custom","id":"x"} trailing', "invalid JSON at column 28: more text after the JSON value"),
        ('{"type":"custom","text":"a\tb"}', "invalid JSON at column 27: a raw control character inside a string"),
        ('{"type" "custom"}', "invalid JSON at column 9: expected ':' after a key"),
        ('{"a":1 "b":2}', "invalid JSON at column 8: expected ',' or a closing bracket"),
        ("{'a':1}", "invalid JSON at column 2: expected a key in double quotes"),
        ('{"a":"\\q"}', "invalid JSON at column 7: an invalid escape in a string"),
        ('{"a":NaN}', "invalid JSON: NaN is not JSON"),
    ],
)
def test_other_bad_lines_stay_errors_with_a_readable_reason(tmp_path, bad, reason):
    path = tmp_path / "s.jsonl"
    session = SessionFile.create(path, cwd="/w")
    session.append_message(_user("first"))
    with open(path, "a", encoding="utf-8") as out:
        out.write(bad + "\n")
    SessionFile.open(path).append_message(_user("after"))
    [problem] = SessionFile.open(path).problems
    assert (problem.code, problem.severity, problem.location.line) == ("session.not-json", "error", 3)
    assert problem.message.startswith(reason) and problem.message.endswith("; skipped")


def test_a_fragment_that_swallowed_an_entry_is_an_error(tmp_path):
    """pi does not repair torn lines: its next entry lands on the fragment's line. When the
    fragment ended where a value was due, the merged line is still a cut-short object, but
    the entry inside it is lost: that stays damage."""
    path = tmp_path / "s.jsonl"
    session = SessionFile.create(path, cwd="/w")
    first = session.append_message(_user("first"))
    entry = js_json(session.append_message(_user("second")).raw)
    fragment = entry[: entry.index('"message":') + len('"message":')]
    lost = js_json({**json.loads(entry), "id": "0000beef", "parentId": first.id})
    with open(path, "a", encoding="utf-8") as out:
        out.write(fragment + lost + "\n")
    assert is_cut_object(fragment + lost[:-3]) and not is_cut_object(fragment + lost)
    assert [p.code for p in SessionFile.open(path).problems] == ["session.not-json"]


def test_appending_after_a_last_line_without_newline_drops_the_warning(tmp_path):
    path = tmp_path / "s.jsonl"
    session = SessionFile.create(path, cwd="/w")
    line = js_json(session.append_message(_user("first")).raw)
    path.write_text(path.read_text(encoding="utf-8").removesuffix("\n"), encoding="utf-8")
    session = SessionFile.open(path)
    assert [p.code for p in session.problems] == ["session.no-newline"]
    session.append_message(_user("second"))
    assert session.problems == [] and SessionFile.open(path).problems == []
    assert path.read_text(encoding="utf-8").splitlines()[1] == line


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(REAL_LINES), st.floats(min_value=0, max_value=1, exclude_max=True))
def test_every_prefix_of_a_real_entry_is_a_cut_object(line, share):
    cut = 1 + int(share * (len(line) - 1))
    assert is_cut_object(line[:cut])


@pytest.mark.parametrize("text", ["", " {", "[1,", '{"a":1}', '{"a":tru e', '{"a":1.e', '{"a":"x\x01',
                                  '{"a":"\\q', '{"a"}', '{"a":1,}', '{,'])
def test_what_is_not_a_cut_object(text):
    assert not is_cut_object(text)
