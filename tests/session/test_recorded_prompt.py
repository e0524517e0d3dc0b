"""pi 1.x's recorded system prompt as types (issue 19, item 4): the reader makes a
``SystemMessage`` of a ``system`` message and a ``ContextEditEntry`` of a ``context_edit``
entry, the store writes them, and the replay rule and the current system message have one
home (``pipeline.session.system``)."""

from __future__ import annotations

import json

from pipeline.session import ContextEditEntry, MessageEntry, SessionFile, SystemMessage
from pipeline.session.projection import project_path
from pipeline.session.system import apply_sections, current_system_message, replay


def _lines(*entries: dict) -> str:
    head = {"type": "session", "version": 3, "id": "s", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}
    return "\n".join(json.dumps(e) for e in (head, *entries)) + "\n"


def _entry(kind: str, id: str, parent: str | None, **fields) -> dict:
    return {"type": kind, "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z", **fields}


SYSTEM = {"role": "system", "content": "", "sections": {"a": "A", "b": "B"}, "timestamp": 5,
          "toolsAdded": [{"name": "read", "description": "r", "parameters": {}}]}
PATCH = {"role": "system", "content": "note", "sections": {"a": None, "c": "C", "b": "B2"}, "timestamp": 9,
         "toolsRemoved": [{"name": "read"}], "toolsAdded": [{"name": "ls", "description": "l", "parameters": {}}]}
USER = {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 6}


def _session(tmp_path) -> SessionFile:
    path = tmp_path / "s.jsonl"
    path.write_text(_lines(
        _entry("message", "e1", None, message=SYSTEM),
        _entry("message", "e2", "e1", message=USER),
        _entry("context_edit", "e3", "e2", targetId="e2", replacement=None),
        _entry("message", "e4", "e3", message=PATCH),
    ))
    return SessionFile.open(path)


def test_the_reader_makes_system_messages_and_context_edits(tmp_path):
    session = _session(tmp_path)
    entries = {e.id: e for e in session.entries}
    first = entries["e1"]
    assert isinstance(first, MessageEntry) and first.role == "system"
    assert isinstance(first.message, SystemMessage)
    assert dict(first.message.sections) == {"a": "A", "b": "B"}
    assert [t["name"] for t in first.message.tools_added] == ["read"]
    edit = entries["e3"]
    assert isinstance(edit, ContextEditEntry) and edit.target_id == "e2" and edit.replacement is None
    # both are known types: no "unknown type" report
    assert not [p for p in session.problems if p.code == "session.unknown-type"]


def test_the_projection_applies_the_typed_edit(tmp_path):
    projected = project_path(_session(tmp_path).path_to())
    shown = [(item.entry.id, [m.role for m in item.messages]) for item in projected]
    assert shown == [("e1", ["system"]), ("e2", []), ("e3", []), ("e4", ["system"])]


def test_the_replay_rule():
    assert list(apply_sections({"a": "1", "b": "2"}, {"a": "x", "c": "3", "b": None}).items()) == [("a", "x"), ("c", "3")]
    assert apply_sections({"a": "1"}, None) == {"a": "1"}
    state = replay([SystemMessage(SYSTEM), USER, PATCH])  # views and raw objects alike; non-system skipped
    assert list(state.sections.items()) == [("b", "B2"), ("c", "C")]
    assert list(state.tools) == ["ls"] and state.contents == ("note",) and state.timestamp == 5 and state.count == 2


def test_the_current_system_message():
    assert current_system_message([USER]) is None
    assert current_system_message([SYSTEM, PATCH]) == {
        "role": "system", "content": "note", "sections": {"b": "B2", "c": "C"},
        "toolsAdded": [{"name": "ls", "description": "l", "parameters": {}}], "timestamp": 5,
    }
    # a system message without a timestamp gives 0, as pi-ai does
    assert current_system_message([{"role": "system", "content": [{"type": "text", "text": "t"}]}]) == {
        "role": "system", "content": "t", "timestamp": 0}


def test_the_store_writes_them(tmp_path):
    session = SessionFile.create(tmp_path / "w.jsonl", cwd="/w")
    written = session.append_message(SystemMessage(SYSTEM))
    user = session.append_message(USER)
    edit = session.append_context_edit(user.id, None)
    assert isinstance(edit, ContextEditEntry) and edit.target_id == user.id
    again = SessionFile.open(tmp_path / "w.jsonl")
    assert isinstance(again.get(written.id).message, SystemMessage)
    assert isinstance(again.get(edit.id), ContextEditEntry)
    assert [json.loads(line)["type"] for line in (tmp_path / "w.jsonl").read_text().splitlines()[1:]] == \
        ["message", "message", "context_edit"]


def test_one_value_and_one_replay_for_the_recorded_prompt():
    """Issue 30, item 5: the replay goes on from an earlier state exactly as over the whole run,
    bare section patches apply as the sections of system messages would, and the state's
    prompt is the one a model without mid-conversation system messages is sent."""
    from pipeline.session.system import SystemState

    whole = replay([SYSTEM, USER, PATCH])
    assert replay([PATCH], replay([SYSTEM, USER])) == whole
    assert SystemState(sections=SYSTEM["sections"]).patched([PATCH["sections"]]).sections == whole.sections
    assert list(whole.record) == ["b", "c"] and whole.prompt() == "note\n\nB2\n\nC"
    assert whole.prompt(" | ") == "note | B2 | C"
    assert SystemState(sections={"x": "", "y": "Y"}).prompt() == "Y"  # empty parts dropped
