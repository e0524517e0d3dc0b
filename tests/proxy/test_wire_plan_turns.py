"""The runtime's cut of an OpenAI Responses or Gemini conversation respects the format's rules
(pipeline/proxy/turns.py): the body read as a session path (pipeline/proxy/history.py), cut by
`plan_compaction`, mapped back to an item where the format allows the kept part to start.

A Responses turn is one item per block: its reasoning, message and function_call items read
as one assistant message, so the cut never falls right after a reasoning item (with or without
a readable summary); a cut the runtime places where a kept output would lose its call moves to
the nearest allowed item before it, and only what lies before that item is summarized."""

from __future__ import annotations

import json
from typing import Any

from pipeline import compile_profile
from pipeline.compaction.plan import plan_compaction
from pipeline.model.compaction import Compaction
from pipeline.proxy.history import wire_path, wire_plan
from pipeline.proxy.turns import TURNS

OUTPUT = "a line of the file\n" * 40
SETTINGS: Compaction = compile_profile("default").profile.compaction


def _user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def _call(call: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": call, "name": "read", "arguments": json.dumps({"path": call})}


def _output(call: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call, "output": OUTPUT + call}


def _responses() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [_user("Read every file and fix the bug.")]
    for i in range(8):
        summary = [{"type": "summary_text", "text": f"think {i}"}] if i % 2 else []  # unreadable now and then
        items.append({"type": "reasoning", "id": f"rs{i}", "summary": summary, "encrypted_content": f"opaque-{i}"})
        calls = [f"c{i}a", f"c{i}b"] if i % 3 == 2 else [f"c{i}"]
        items += [_call(c) for c in calls] + [_output(c) for c in calls]
        if i == 4:
            items.append(_user("Also look at the tests."))
    return items


def _plans(kind: str, messages: list[Any]):
    for keep in range(100, 4000, 50):
        planned = wire_plan(kind, messages, 0, SETTINGS.model_copy(update={"keep_recent_tokens": keep}))
        if planned is not None:
            yield keep, planned


def _check(kind: str, messages: list[Any]) -> int:
    """Every plan's cut is allowed and summarizes only what lies before it; how many plans."""
    path, where = wire_path(kind, messages, 0)
    plans = 0
    for _, planned in _plans(kind, messages):
        plans += 1
        assert TURNS[kind].boundary(messages, planned.cut), planned.cut
        assert where[planned.plan.first_kept_entry_id] == planned.cut
        summarized = [*planned.plan.summarize_ids, *planned.plan.turn_prefix_ids]
        assert summarized and all(where[i] < planned.cut for i in summarized)
    return plans


def test_a_responses_turn_reads_as_one_assistant_message_and_is_cut_before_its_reasoning():
    items = _responses()
    path, where = wire_path("responses", items, 0)
    first_turn = [e for e in path if where[e.id] == 1]
    assert len(first_turn) == 1, "reasoning (unreadable) and its call are one entry, cut before the reasoning"
    roles = [e.raw["message"]["role"] for e in path]
    assert all(not (a == b == "assistant") for a, b in zip(roles, roles[1:])), roles
    turn = next(e for e in path if where[e.id] == 4)  # think 1, then its call
    assert [b["type"] for b in turn.raw["message"]["content"]] == ["thinking", "toolCall"]
    assert _check("responses", items) > 5
    for _, planned in _plans("responses", items):
        assert items[planned.cut - 1].get("type") != "reasoning"


def test_a_cut_that_would_orphan_a_kept_output_moves_to_the_call_before_it():
    # the user speaks between a call and its output: the runtime may keep from that message,
    # which would keep the output without its call
    items = [_user("Start."), _call("a"), _output("a"), {"type": "message", "role": "assistant",
                                                          "content": [{"type": "output_text", "text": "x" * 400}]},
             _user("Go on."), _call("b"), _user("Wait, read c first. " + "y" * 800), _output("b"),
             {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}]
    moved = 0
    for keep, planned in _plans("responses", items):
        path, where = wire_path("responses", items, 0)
        raw = plan_compaction(path, SETTINGS.model_copy(update={"keep_recent_tokens": keep}))
        assert not isinstance(raw, str)
        if where[raw.first_kept_entry_id] == 6:  # the runtime kept from "Wait": output b without call b
            moved += 1
            assert planned.cut == 5 and items[planned.cut] == _call("b")
            assert all(where[i] < 5 for i in [*planned.plan.summarize_ids, *planned.plan.turn_prefix_ids])
            assert "b" in raw.files.read and planned.plan.files.read == ("a",)  # call b is kept, not summarized
    assert moved, "no setting made the runtime cut at the forbidden place"
    _check("responses", items)


def test_gemini_cuts_keep_each_function_call_with_its_response():
    contents: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": "Read every file."}]}]
    for i in range(8):
        contents.append({"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {"path": f"f{i}"}},
                                                     "thoughtSignature": f"sig-{i}"}]})
        contents.append({"role": "user", "parts": [{"functionResponse": {"name": "read_file",
                                                                         "response": {"output": OUTPUT + str(i)}}}]})
    assert _check("gemini", contents) > 5
