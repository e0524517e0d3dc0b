"""The append-only store: creating, appending, ids, timestamps, refusals, copies."""

from __future__ import annotations

import json
import re

import pytest

from pipeline.errors import PipelineError
from pipeline.js import js_json
from pipeline.session import (
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    MessageEntry,
    SessionFile,
    UserMessage,
    parse_entry,
)

from .conftest import DATA

ISO_MS_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def _user(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def test_create_writes_a_pi_header(tmp_path):
    path = tmp_path / "s.jsonl"
    session = SessionFile.create(path, cwd="/w")
    header = json.loads(path.read_text())
    assert list(header) == ["type", "version", "id", "timestamp", "cwd"]
    assert header["type"] == "session" and header["version"] == 3 and header["cwd"] == "/w"
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", header["id"])
    assert ISO_MS_Z.match(header["timestamp"])
    assert len(session.entries) == 0
    assert session.leaf_id is None


def test_create_refuses_an_existing_file(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text("x")
    with pytest.raises(PipelineError, match="already exists"):
        SessionFile.create(path, cwd="/w")
    assert path.read_text() == "x"


def test_appends_one_line_each_and_never_rewrites(tmp_path):
    path = tmp_path / "s.jsonl"
    session = SessionFile.create(path, cwd="/w")
    before = path.read_bytes()
    first = session.append_message(_user("one"))
    after_one = path.read_bytes()
    second = session.append_message(_user("two"))
    data = path.read_bytes()
    assert after_one.startswith(before) and data.startswith(after_one)
    lines = data.decode().split("\n")
    assert lines[-1] == "" and len(lines) == 4
    assert json.loads(lines[1])["id"] == first.id and json.loads(lines[2])["parentId"] == first.id
    assert (first.line, second.line) == (2, 3)
    assert session.leaf_id == second.id


def test_append_messages_writes_a_chain_under_the_leaf_in_one_write(tmp_path, monkeypatch):
    import pipeline.session.log as log

    path = tmp_path / "s.jsonl"
    session = SessionFile.create(path, cwd="/w")
    first = session.append_message(_user("one"))
    writes = []
    real_write = log._write_all
    monkeypatch.setattr(log, "_write_all", lambda fd, data: (writes.append(data), real_write(fd, data)))
    chain = session.append_messages([_user("two"), UserMessage.create("three", 2), _user("four")])
    assert len(writes) == 1  # one write (and one fsync) for the lot
    assert [e.parent_id for e in chain] == [first.id, chain[0].id, chain[1].id]
    assert [e.line for e in chain] == [3, 4, 5] and session.leaf_id == chain[-1].id
    assert len({first.id, *(e.id for e in chain)}) == 4
    reloaded = SessionFile.open(path)
    assert [e.raw for e in reloaded.entries] == [e.raw for e in session.entries]
    assert [e.line for e in reloaded.entries] == [2, 3, 4, 5]
    assert [json.loads(line)["message"]["content"] for line in path.read_text().splitlines()[3:5]] == [
        "three", [{"type": "text", "text": "four"}]]
    assert session.append_messages([]) == [] and len(writes) == 1


def test_append_messages_catches_up_and_repairs_a_torn_line(tmp_path):
    path = tmp_path / "s.jsonl"
    mine = SessionFile.create(path, cwd="/w")
    theirs = SessionFile.open(path)
    other = theirs.append_message(_user("theirs"))
    with open(path, "ab") as out:
        out.write(b'{"type":"message","id":"torn')  # a writer cut short
    with mine.exclusive():  # under a held lock, as the replay appends
        chain = mine.append_messages([_user("a"), _user("b")])
    assert chain[0].parent_id == other.id and (chain[0].line, chain[1].line) == (4, 5)
    reopened = SessionFile.open(path)
    assert [e.id for e in reopened.entries] == [other.id, chain[0].id, chain[1].id]
    assert reopened.torn_line is None


def test_new_entries_have_pi_ids_timestamps_and_key_order(tmp_path):
    session = SessionFile.create(tmp_path / "s.jsonl", cwd="/w")
    entry = session.append_message(_user("x"))
    assert re.fullmatch(r"[0-9a-f]{8}", entry.id)
    assert ISO_MS_Z.match(entry.timestamp)
    assert list(entry.raw) == ["type", "id", "parentId", "timestamp", "message"]
    custom = session.append_custom("ext", {"a": 1})
    assert list(custom.raw) == ["type", "customType", "data", "id", "parentId", "timestamp"]
    compaction = session.append_compaction("s", entry.id, 10)
    assert list(compaction.raw) == ["type", "id", "parentId", "timestamp", "summary", "firstKeptEntryId", "tokensBefore"]


def test_new_id_is_redrawn_on_collision(tmp_path):
    from pipeline.session import new_entry_id

    draws = iter(["aaaaaaaa-1", "aaaaaaaa-2", "bbbbbbbb-3"])
    assert new_entry_id({"aaaaaaaa"}, lambda: next(draws)) == "bbbbbbbb"
    always = lambda: "cccccccc-0000-4000-8000-000000000000"  # noqa: E731
    assert new_entry_id({"cccccccc"}, always) == always()  # pi's fallback after 100 collisions


def test_created_entries_match_pi_bytes():
    """Rebuilding every entry of a pi-written file through our constructors gives pi's line."""
    lines = (DATA / "generated" / "all-types.jsonl").read_text().splitlines()[1:]
    rebuilt = 0
    for line in lines:
        entry = parse_entry(json.loads(line))
        clone = _rebuild(entry)
        if clone is not None:
            assert js_json(clone.raw) == line
            rebuilt += 1
    assert rebuilt == len(lines)


def _rebuild(e):
    head = {"id": e.id, "parent_id": e.parent_id, "timestamp": e.timestamp}
    raw = e.raw
    if isinstance(e, MessageEntry):
        return type(e).create(message=e.message, **head)
    if isinstance(e, CompactionEntry):
        return type(e).create(summary=e.summary, first_kept_entry_id=e.first_kept_entry_id,
                              tokens_before=e.tokens_before, details=e.details, usage=e.usage,
                              from_hook=e.from_hook, **head)
    if isinstance(e, CustomMessageEntry):
        return type(e).create(custom_type=e.custom_type, content=e.content, display=e.display,
                              details=raw.get("details"), **head)
    if isinstance(e, CustomEntry):
        return type(e).create(custom_type=e.custom_type, data=e.data, **head)
    kwargs = {
        "branch_summary": lambda: dict(from_id=e.from_id, summary=e.summary, details=e.details, usage=e.usage,
                                       from_hook=e.from_hook),
        "label": lambda: dict(target_id=e.target_id, label=raw.get("label")),
        "session_info": lambda: dict(name=e.name),
        "model_change": lambda: dict(provider=e.provider, model_id=e.model_id),
        "thinking_level_change": lambda: dict(thinking_level=e.thinking_level),
    }[e.type]()
    return type(e).create(**kwargs, **head)


def test_append_refuses_taken_ids_and_missing_parents(tmp_path):
    session = SessionFile.create(tmp_path / "s.jsonl", cwd="/w")
    first = session.append_message(_user("one"))
    size = (tmp_path / "s.jsonl").stat().st_size
    dup = MessageEntry.create(id=first.id, parent_id=None, timestamp="2026-01-01T00:00:00.000Z", message=_user("d"))
    with pytest.raises(PipelineError, match="already taken"):
        session.append(dup)
    orphan = MessageEntry.create(id="12345678", parent_id="nope", timestamp="2026-01-01T00:00:00.000Z",
                                 message=_user("o"))
    with pytest.raises(PipelineError, match="does not exist"):
        session.append(orphan)
    with pytest.raises(PipelineError, match="no entry"):
        session.append_label("missing", "x")
    assert (tmp_path / "s.jsonl").stat().st_size == size


def test_branch_and_reset_leaf_choose_the_parent(tmp_path):
    session = SessionFile.create(tmp_path / "s.jsonl", cwd="/w")
    a = session.append_message(_user("a"))
    session.append_message(_user("b"))
    session.branch(a.id)
    c = session.append_message(_user("c"))
    session.reset_leaf()
    d = session.append_message(_user("d"))
    assert c.parent_id == a.id and d.parent_id is None
    assert [e.id for e in session.children(a.id)] == [session.entries[1].id, c.id]
    summary = session.append_branch_summary(None, "from the root")
    assert summary.parent_id is None and summary.raw["fromId"] == "root"


def test_session_info_name_is_cleaned_like_pi(tmp_path):
    session = SessionFile.create(tmp_path / "s.jsonl", cwd="/w")
    info = session.append_session_info("  my\r\n\nname \n")
    assert info.name == "my name" and session.name == "my name"


def test_appended_file_reloads_identically(tmp_path):
    path = tmp_path / "s.jsonl"
    session = SessionFile.create(path, cwd="/w")
    session.append_model_change("p", "m")
    msg = session.append_message(UserMessage.create("hi", 5))
    session.append_label(msg.id, "mark")
    reloaded = SessionFile.open(path)
    assert [e.raw for e in reloaded.entries] == [e.raw for e in session.entries]
    assert reloaded.labels() == {msg.id: "mark"} and reloaded.problems == []


def test_migrated_files_are_read_only_but_can_be_saved_as_v3(copy_session, tmp_path):
    path = copy_session("edge/v1.jsonl")
    original = path.read_bytes()
    session = SessionFile.open(path)
    assert session.migrated_from == 1
    assert any(p.code == "session.migrated" for p in session.problems)
    with pytest.raises(PipelineError, match="version-1"):
        session.append_message(_user("x"))
    assert path.read_bytes() == original  # never rewritten
    copy = session.save_as(tmp_path / "v3.jsonl")
    assert copy.migrated_from is None and copy.header.version == 3
    assert [e.raw for e in copy.entries] == [e.raw for e in session.entries]
    copy.append_message(_user("now appendable"))
    reopened = SessionFile.open(tmp_path / "v3.jsonl")
    assert [p.code for p in reopened.problems] == ["session.bad-entry"]  # pi's migration drops a forward index
    assert reopened.problems[0].key == "firstKeptEntryId" and reopened.problems[0].severity == "warning"


def test_resolve_id_accepts_unique_prefixes():
    session = SessionFile.open(DATA / "real" / "short-chat.jsonl")
    last = session.entries[-1].id
    assert session.resolve_id(last[:5]) == last
    with pytest.raises(PipelineError, match="no such entry"):
        session.resolve_id("zzzz")
