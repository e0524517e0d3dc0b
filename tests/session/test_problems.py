"""Damage is reported, located and never silently dropped (the files pi loads are in the
oracle vectors; here: what we report about them, and files pi could not load at all)."""

from __future__ import annotations

import os

import pytest

from pipeline.errors import PipelineError
from pipeline.js import js_json
from pipeline.session import LAST, SessionFile, build_context, build_session_context

from .conftest import DATA, mask_texts

HEADER = {"type": "session", "version": 3, "id": "h", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/"}


def _entry(id, parent, text="x"):
    return {"type": "message", "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": text, "timestamp": 1}}


def _write(tmp_path, rows) -> SessionFile:
    path = tmp_path / "s.jsonl"
    path.write_text("".join((r if isinstance(r, str) else js_json(r)) + "\n" for r in rows), encoding="utf-8")
    return SessionFile.open(path)


def _codes(session: SessionFile) -> list[tuple[str, int, str]]:
    return [(p.code, p.location.line, p.severity) for p in session.problems]


def test_bad_lines_are_located():
    session = SessionFile.open(DATA / "edge" / "lines.jsonl")
    assert _codes(session) == [
        ("session.blank-line", 3, "warning"),
        ("session.not-json", 5, "error"),
        ("session.not-object", 6, "error"),
        ("session.extra-header", 7, "warning"),
        ("session.blank-line", 8, "warning"),
        ("session.torn-line", 11, "error"),
    ]
    assert session.torn_line == 11
    assert str(session.problems[1]) == f"{DATA / 'edge' / 'lines.jsonl'}:5: invalid JSON at column 1: expected a value; skipped"


def test_tree_damage_is_located():
    session = SessionFile.open(DATA / "edge" / "tree.jsonl")
    assert _codes(session) == [
        ("session.duplicate-id", 5, "error"),
        ("session.unknown-type", 6, "warning"),
        ("session.dangling-parent", 8, "error"),
    ]
    assert "first at line 3" in session.problems[0].message


def test_unknown_entries_are_kept_and_written_back_untouched(tmp_path):
    session = SessionFile.open(DATA / "edge" / "tree.jsonl")
    unknown = session.get("b0000005")
    assert unknown.type == "unknown" and unknown.entry_type == "future_thing"
    copy = session.save_as(tmp_path / "copy.jsonl")
    lines = (DATA / "edge" / "tree.jsonl").read_text().splitlines()
    assert js_json(copy.get("b0000005").raw) == lines[5]


def test_parent_cycles_are_reported_and_paths_stop(tmp_path):
    session = _write(tmp_path, [HEADER, _entry("aaaaaaaa", "bbbbbbbb"), _entry("bbbbbbbb", "aaaaaaaa"),
                                _entry("cccccccc", "cccccccc"), _entry("dddddddd", "bbbbbbbb", "leaf")])
    assert [(c, line) for c, line, _ in _codes(session)] == [("session.cycle", 2), ("session.cycle", 4)]
    assert [e.id for e in session.path_to("dddddddd")] == ["aaaaaaaa", "bbbbbbbb", "dddddddd"]
    context = build_context(session, mask_texts(), "cccccccc")
    assert [m.content for m in context.messages] == ["x"]


def test_message_entry_without_message_is_reported_and_left_out(tmp_path):
    broken = {"type": "message", "id": "bbbbbbbb", "parentId": "aaaaaaaa", "timestamp": "t"}
    session = _write(tmp_path, [HEADER, _entry("aaaaaaaa", None), broken, _entry("cccccccc", "aaaaaaaa")])
    assert ("session.bad-entry", 3, "error") in _codes(session)
    assert [e.id for e in session.entries] == ["aaaaaaaa", "cccccccc"]
    assert len(build_session_context(session).messages) == 2


def test_entry_without_id_is_reported(tmp_path):
    session = _write(tmp_path, [HEADER, {"type": "label", "targetId": "x", "label": "y"}])
    assert ("session.bad-entry", 2, "error") in _codes(session)
    assert len(session.entries) == 0


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "no JSON line"),
        ("\n\n", "no JSON line"),
        # issue 34, item 7: a file whose only line was cut says which line
        ('{"type":"session","version":3,"id":"ab', "s.jsonl:1: not a pi session file: no JSON line in it "
                                                   "(line 1: torn last line (a write was cut short))"),
        ('\n\nhello\n', "s.jsonl:3: not a pi session file: no JSON line in it (line 3: invalid JSON"),
        ('{"type":"message","id":"a"}\n' + js_json(HEADER) + "\n", ":1: not a pi session file"),
        ('garbage\n{"type":"session","id":5}\n', ":2: not a pi session file"),
    ],
)
def test_not_a_session(tmp_path, content, message):
    path = tmp_path / "s.jsonl"
    path.write_text(content)
    with pytest.raises(PipelineError) as info:
        SessionFile.open(path)
    assert message in str(info.value)


def test_header_may_follow_garbage_lines_like_pi(tmp_path):
    session = _write(tmp_path, ["junk", HEADER, _entry("aaaaaaaa", None)])
    assert [(c, line) for c, line, _ in _codes(session)] == [("session.not-json", 1)]
    assert session.header.line == 2 and len(session.entries) == 1


def test_missing_and_unreadable_files(tmp_path):
    with pytest.raises(PipelineError, match="cannot read session file"):
        SessionFile.open(tmp_path / "missing.jsonl")
    with pytest.raises(PipelineError, match="cannot read session file"):
        SessionFile.open(tmp_path)


def test_fifos_and_devices_are_refused_without_blocking(tmp_path):
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)  # opening it for reading would wait for a writer forever
    with pytest.raises(PipelineError, match=r"cannot read session file: it is a FIFO \(named pipe\), not a regular file"):
        SessionFile.open(fifo)
    with pytest.raises(PipelineError, match="cannot read session file: it is a device, not a regular file"):
        SessionFile.open("/dev/zero")  # one endless line: reading it would fill memory


def test_a_line_nested_beyond_the_parser_is_reported_not_raised(tmp_path):
    deep = '{"type":"custom","customType":"x","id":"b","parentId":"a","data":' + "[" * 100_000 + "]" * 100_000 + "}"
    session = _write(tmp_path, [HEADER, _entry("a", None), deep])
    assert [(c, line) for c, line, _ in _codes(session)] == [("session.too-deep", 3)]
    assert [e.id for e in session.entries] == ["a"]


def test_js_json_constants_are_not_json(tmp_path):
    session = _write(tmp_path, [HEADER, '{"type":"x","id":"a","parentId":null,"n":NaN}'])
    assert [(c, line) for c, line, _ in _codes(session)] == [("session.not-json", 2)]


def test_leaf_rules_follow_pi():
    session = SessionFile.open(DATA / "generated" / "compactions.jsonl")
    last = session.entries[-1].id
    assert build_session_context(session, None).messages == ()
    by_unknown = build_session_context(session, "no-such-id")
    assert by_unknown == build_session_context(session, last) == build_session_context(session, LAST)
