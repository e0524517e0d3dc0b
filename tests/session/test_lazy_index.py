"""Lazily indexed entries equal what a full parse of every line gives.

Opening a file indexes plain message lines by their head (type, id, parent, timestamp,
role) and reads a line's JSON again only when it is asked for; every other line keeps
its parsed object. Whatever the path, the entries, their JSON, the typed messages, the
problems and the projection must be the ones an eager parse of every line gives.
"""

from __future__ import annotations

import json

import pytest

from pipeline.session import SessionFile, SessionTree, build_context
from pipeline.session.entries import MessageEntry
from pipeline.session.reader import FileLines, Scanner, entry_or_none, parse_line

from .conftest import DATA, mask_texts, session_files


def _eager(path) -> tuple[list, list]:
    """Entries and line problems from a full parse of every line (the reader's slow path)."""
    scanner, header, entries = Scanner(str(path)), None, []
    data = path.read_bytes()
    lines = [line + b"\n" for line in data.split(b"\n")[:-1]] + ([data.rsplit(b"\n", 1)[-1]] if not data.endswith(b"\n") else [])
    for number, obj in scanner.scan(iter(lines)):
        if header is None:
            header = obj
        elif obj.get("type") == "session":
            scanner.report("a second session header (ignored, as pi ignores it)", "session.extra-header", "warning")
        else:
            entry = entry_or_none(obj, number, str(path), scanner.problems)
            if entry is not None:
                entries.append(entry)
    return entries, scanner.problems


@pytest.mark.parametrize("name", [n for n in session_files() if "/v1" not in n and "/v2" not in n])
def test_lazy_entries_equal_eager_ones(name):
    path = DATA / name
    session = SessionFile.open(path)
    eager, line_problems = _eager(path)
    tree_problems = SessionTree(eager).problems(str(path))
    assert sorted(map(repr, session.problems)) == sorted(map(repr, [*line_problems, *tree_problems]))
    assert [(e.id, e.parent_id, e.timestamp, e.line, e.type) for e in session.entries] == \
        [(e.id, e.parent_id, e.timestamp, e.line, e.type) for e in eager]
    assert [e.raw for e in session.entries] == [e.raw for e in eager]
    for lazy, full in zip(session.entries, eager):
        if isinstance(lazy, MessageEntry):
            assert lazy.role == full.role and lazy.message == full.message
    texts = mask_texts()
    assert build_context(session, texts).to_json() == build_context(SessionTree(eager), texts).to_json()


def test_the_real_sessions_are_indexed_not_held():
    session = SessionFile.open(DATA / "real" / "long-coding.jsonl")
    messages = [e for e in session.entries if isinstance(e, MessageEntry)]
    assert messages and all(e.indexed and e.data is None for e in messages)
    entry = messages[3]
    line = (DATA / "real" / "long-coding.jsonl").read_bytes().split(b"\n")[entry.line - 1]
    assert entry.message.raw == json.loads(line)["message"] and entry.data is None


def test_unusual_message_lines_keep_their_object(tmp_path):
    """A missing parentId, a null content, an unknown role: read in full, reported as before."""
    header = '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}'
    lines = [
        header,
        '{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","content":"hi","timestamp":1}}',
        '{"type":"message","id":"a2","timestamp":"t","message":{"role":"user","content":"no parent key","timestamp":2}}',
        '{"type":"message","id":"a3","parentId":"a2","timestamp":"t","message":{"role":"user","content":null,"timestamp":3}}',
        '{"type":"message","id":"a4","parentId":"a3","timestamp":"t","message":{"role":"robot","content":"?"}}',
        '{"type":"future_thing","id":"a5","parentId":"a4","timestamp":"t","x":{"y":[1,2]}}',
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    session = SessionFile.open(path)
    indexed = {e.id: getattr(e, "indexed", False) for e in session.entries}
    assert indexed == {"a1": True, "a2": False, "a3": False, "a4": False, "a5": False}
    codes = [(p.code, p.location.line) for p in session.problems]
    assert ("session.bad-entry", 3) in codes and ("session.unknown-type", 5) in codes
    assert ("session.unknown-type", 6) in codes
    context = build_context(session, mask_texts())
    assert [m.raw.get("content") for m in context.messages] == ["no parent key", []]  # a2 is a root


def test_a_copy_round_trips_every_line_byte_for_byte(tmp_path):
    """Indexed lines, kept objects and unknown entry types are all written back as read."""
    source = DATA / "edge" / "tree.jsonl"
    original = source.read_bytes()
    copy = SessionFile.open(source).save_as(tmp_path / "copy.jsonl")
    kept = [line for line in original.split(b"\n") if line]
    written = (tmp_path / "copy.jsonl").read_bytes().split(b"\n")
    assert b'"future_thing"' in original
    for line in written:
        if line:
            assert line in kept
    real = DATA / "real" / "compacted-branched.jsonl"
    SessionFile.open(real).save_as(tmp_path / "real.jsonl")
    assert (tmp_path / "real.jsonl").read_bytes() == real.read_bytes()
    assert copy.entries


def test_a_line_is_read_again_from_the_descriptor_kept_open(tmp_path):
    """Renaming another file over the path does not change what an open session reads."""
    real = DATA / "real" / "short-chat.jsonl"
    path = tmp_path / "s.jsonl"
    path.write_bytes(real.read_bytes())
    session = SessionFile.open(path)
    other = tmp_path / "other.jsonl"
    other.write_bytes(b"x" * len(real.read_bytes()))
    other.replace(path)
    entry = next(e for e in session.entries if isinstance(e, MessageEntry))
    assert entry.message.raw["role"] == "user"


def test_parse_line_falls_back_to_the_readers_decoder():
    assert parse_line(b'{"a":"\\ud83d"}') == {"a": "\ud83d"}  # a lone surrogate: msgspec refuses it
    assert parse_line(b'{"a":"\xff"}') == {"a": "\ufffd"}  # not UTF-8: replaced, as pi reads it
    assert parse_line(b'{"a":1e400}') == {"a": float("inf")}
    assert isinstance(FileLines, type)


@pytest.mark.parametrize("name", ["real/long-coding.jsonl", "real/multi-compaction.jsonl", "real/compacted-branched.jsonl"])
def test_content_blocks_collect_the_files_the_json_does(name):
    from pipeline.compaction.fileops import FileOps, collect_from_blocks, collect_from_json

    session = SessionFile.open(DATA / name)
    assistants = [e for e in session.entries if isinstance(e, MessageEntry) and e.role == "assistant"]
    by_blocks, by_json = FileOps(), FileOps()
    for entry in assistants:
        blocks = entry.content_blocks()
        assert blocks is not None
        collect_from_blocks(by_blocks, blocks)
        collect_from_json(by_json, entry.raw["message"])
    assert by_blocks.freeze() == by_json.freeze() and by_json.read


def test_content_blocks_are_none_when_content_is_not_a_list_of_objects(tmp_path):
    header = '{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}'
    odd = '{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"assistant","content":["x"]}}'
    path = tmp_path / "s.jsonl"
    path.write_text(header + "\n" + odd + "\n")
    [entry] = SessionFile.open(path).entries
    assert entry.indexed and entry.content_blocks() is None
