"""Serialization for the summarizer (docs/pi-rules.md#serializing-for-the-summarizer, docs/pi-rules.md#serialization) and file lists (docs/pi-rules.md#file-lists) against pi."""

from __future__ import annotations

import pytest

from pipeline.compaction.fileops import FileOps, file_lists, format_file_lists
from pipeline.compaction.requests import RequestContext
from pipeline.compaction.serialize import SerializeOptions, serialize_conversation
from pipeline.compaction.fileops import collect, seed_from_details
from pipeline.compaction.serialize import truncate
from pipeline.model.summary import Labels, Tags
from pipeline.model.text import Text
from pipeline.session import ContextTexts, SessionFile, build_session_context, convert_to_llm, parse_message

from .conftest import ROOT, masked_profile, vectors


def _options(profile=None) -> SerializeOptions:
    profile = profile or masked_profile()
    return RequestContext(profile.summary, profile.compaction).serialize_options


def _agent_messages(case: dict) -> list:
    if "messages" in case:
        return [parse_message(m) for m in case["messages"]]
    session = SessionFile.open(ROOT / case["session"])
    return list(build_session_context(session).messages[: case["count"]])


@pytest.mark.parametrize(
    "case", vectors("serialize")["serialize"], ids=lambda c: c.get("session", "odd").rsplit("/", 1)[-1]
)
def test_serialization_equals_pi(case):
    texts = ContextTexts.from_profile(masked_profile())
    llm = convert_to_llm(_agent_messages(case), texts)
    assert serialize_conversation(llm, _options()) == case["expected"]


@pytest.mark.parametrize("case", vectors("serialize")["file_ops"], ids=["calls", "odd"])
def test_file_operations_equal_pi(case):
    ops = FileOps()
    if "previousDetails" in case:
        seed_from_details(ops, case["previousDetails"])
    collect((parse_message(m) for m in case["messages"]), ops)
    lists = file_lists(ops)
    got = {
        "fileOps": ops.freeze().to_json(),
        "readFiles": list(lists.read_files),
        "modifiedFiles": list(lists.modified_files),
        "formatted": format_file_lists(lists),
    }
    assert got == case["expected"]


def test_spec_file_list_example():
    """docs/pi-rules.md#serialization: calls read b.ts, read a.ts, edit a.ts, write c.ts, read "", read {file}, Read e.ts, grep f,
    read {path:5}, read B.ts."""
    calls = [("read", {"path": "b.ts"}), ("read", {"path": "a.ts"}), ("edit", {"path": "a.ts"}),
             ("write", {"path": "c.ts"}), ("read", {"path": ""}), ("read", {"file": "x"}), ("Read", {"path": "e.ts"}),
             ("grep", {"path": "f"}), ("read", {"path": 5}), ("read", {"path": "B.ts"})]
    message = parse_message({"role": "assistant", "timestamp": 1, "content": [
        {"type": "toolCall", "id": str(i), "name": n, "arguments": a} for i, (n, a) in enumerate(calls)]})
    text = format_file_lists(file_lists(collect([message])))
    assert text == "\n\n<read-files>\nB.ts\nb.ts\n</read-files>\n\n<modified-files>\na.ts\nc.ts\n</modified-files>"


def test_tags_and_labels_come_from_the_profile():
    lists = file_lists(collect([parse_message({"role": "assistant", "timestamp": 1, "content": [
        {"type": "toolCall", "id": "1", "name": "read", "arguments": {"path": "r"}},
        {"type": "toolCall", "id": "2", "name": "write", "arguments": {"path": "w"}}]})]))
    assert format_file_lists(lists, Tags(read_files="seen", modified_files="changed")) == (
        "\n\n<seen>\nr\n</seen>\n\n<changed>\nw\n</changed>"
    )
    labels = Labels(user="U> ", assistant="A> ", thinking="T> ", tool_calls="C> ", tool_result="R> ")
    options = SerializeOptions(labels, Text("<cut ${count}>"), 3)
    messages = [
        parse_message({"role": "user", "content": "hi", "timestamp": 1}),
        parse_message({"role": "assistant", "timestamp": 1, "content": [
            {"type": "thinking", "thinking": "t"}, {"type": "text", "text": "x"},
            {"type": "toolCall", "id": "1", "name": "ls", "arguments": {"a": 1}}]}),
        parse_message({"role": "toolResult", "toolCallId": "1", "toolName": "ls", "timestamp": 1,
                       "content": [{"type": "text", "text": "abcdef"}]}),
    ]
    assert serialize_conversation(messages, options) == "U> hi\n\nT> t\n\nA> x\n\nC> ls(a=1)\n\nR> abc<cut 3>"


def test_truncation_counts_utf16_units():
    assert truncate("😀" * 1001, 2000, Text("|${count}")) == "😀" * 1000 + "|2"
    assert truncate("x" * 2000, 2000, Text("|${count}")) == "x" * 2000
