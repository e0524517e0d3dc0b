"""A request's conversation as a session path, so the proxy plans and asks for a summary with the
runtime's own functions (:func:`~pipeline.compaction.plan.plan_compaction`,
:func:`~pipeline.compaction.driver.summarize_planned`): the same cut, split turn, previous
summary, file lists and summary requests as ``pipeline run`` for the same history.

* each message of the body after the leading system ones becomes the pi messages it reads as
  (:func:`~pipeline.proxy.readback.pi_groups`), one message entry each, chained by parent;
  a system message inside ``messages`` becomes none (it is kept whole, never summarized);
* consecutive assistant messages are one entry (a Responses turn is one item per block:
  ``reasoning``, ``message``, ``function_call``; pi has one assistant message for them), so
  the runtime cuts before the first of them, never right after a ``reasoning`` item; an
  entry's cut falls before the messages that read as nothing just before it (a reasoning
  item without a readable summary);
* in the Responses and Gemini formats, a cut the runtime places where
  :mod:`pipeline.proxy.turns` forbids one (a kept output whose call would be summarized)
  moves to the nearest allowed place before it, and the plan summarizes only what lies
  before that place;
* an Anthropic user message of tool results that also carries text reads as its results,
  the text added to the last one: a cut is then always at the start of a message of the
  body, never between a result and its call;
* a stored summary (:class:`~pipeline.proxy.store.Summary`) of the first ``messages`` messages
  is a compaction entry before the entry of message ``messages`` (its first kept entry); its file lists are those of the
  tool calls in the messages it replaced (the client sends them again every time), as the
  runtime's entry's ``details`` would hold them.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any, Optional

from pipeline.compaction.fileops import CollectedFiles, FileOps, collect_from_json, file_lists, seed_from_details
from pipeline.compaction.plan import CompactionPlan, NothingToCompact, PlannedMessage, plan_compaction
from pipeline.model.compaction import Compaction
from pipeline.proxy.readback import pi_groups
from pipeline.proxy.routes import Kind
from pipeline.proxy.store import Summary
from pipeline.proxy.turns import TURNS
from pipeline.session.entries import CompactionEntry, Entry, MessageEntry

_TIME = "1970-01-01T00:00:00.000Z"


@dataclass(frozen=True)
class WirePlan:
    """The runtime's plan of a request's conversation, and where it cuts the body's messages."""

    plan: CompactionPlan
    #: the index in the body's messages of the first kept one
    cut: int



def wire_path(kind: Kind, messages: list[Any], head: int,
              previous: Optional[Summary] = None) -> tuple[list[Entry], dict[str, int]]:
    """The session path of ``messages[head:]`` and, per entry id, the index of the body message
    its kept part would start at (the first of the messages it was read from)."""
    groups = [_folded(g) for g in pi_groups(kind, messages)]
    read: list[tuple[int, dict[str, Any]]] = []  # (where a cut before it falls, the message), in order
    compaction: Optional[int] = None  # where in ``read`` the stored summary's entry goes
    start = head  # the first body message not yet read into ``read``
    for index in range(head, len(messages)):
        if previous is not None and index == previous.messages:
            compaction, start = len(read), index
        for message in groups[index]:
            if read and len(read) != compaction and message["role"] == "assistant" == read[-1][1]["role"]:
                read[-1] = (read[-1][0], {**read[-1][1], "content": [*read[-1][1]["content"], *message["content"]]})
            else:
                read.append((start, message))
            start = index + 1
    text = previous.text if previous is not None else ""
    path: list[Entry] = []
    where: dict[str, int] = {}
    for number, (at, message) in enumerate(read):
        if number == compaction:
            path.append(_compaction(groups[head:at], text, f"m{number}", _parent(path)))
        entry = MessageEntry.from_json({"type": "message", "id": f"m{number}", "parentId": _parent(path),
                                        "timestamp": _TIME, "message": message})
        where[entry.id] = at
        path.append(entry)
    if compaction is not None and compaction == len(read):  # nothing after the stored summary
        path.append(_compaction(groups[head:], text, "end", _parent(path)))
    return path, where


def wire_plan(kind: Kind, messages: list[Any], head: int, settings: Compaction,
              previous: Optional[Summary] = None) -> Optional[WirePlan]:
    """The runtime's plan for the conversation (None: nothing to summarize). In the Responses
    and Gemini formats a cut the runtime places where :mod:`pipeline.proxy.turns` forbids one
    moves to the nearest allowed place before it where an entry starts, and the plan with it
    (:func:`_moved`)."""
    path, where = wire_path(kind, messages, head, previous)
    plan = plan_compaction(path, settings)
    if isinstance(plan, NothingToCompact):
        return None
    cut = where[plan.first_kept_entry_id]
    if kind not in TURNS or TURNS[kind].boundary(messages, cut):
        return WirePlan(plan, cut)
    done = previous.messages if previous is not None else head
    starts = set(where.values())  # never inside an entry: what is summarized and what is kept stay apart
    allowed = next((at for at in range(cut - 1, done, -1) if at in starts and TURNS[kind].boundary(messages, at)), None)
    return None if allowed is None else _moved(plan, path, where, allowed)


def _moved(plan: CompactionPlan, path: list[Entry], where: dict[str, int], cut: int) -> Optional[WirePlan]:
    """``plan`` with its kept part starting at body message ``cut`` (before the runtime's cut):
    only the messages read from before ``cut`` summarized, and only their files listed; a split
    turn's prefix that falls after it is no longer summarized (it is kept)."""
    first = next((e for e in path if e.id in where and where[e.id] >= cut), None)
    if first is None:
        return None
    summarize = tuple(m for m in plan.summarize if where.get(m.entry_id, cut) < cut)
    prefix = tuple(m for m in plan.turn_prefix if where.get(m.entry_id, cut) < cut)
    if not summarize and not prefix:
        return None
    return WirePlan(replace(plan, first_kept_entry_id=first.id, first_kept_index=path.index(first),
                            summarize=summarize, turn_prefix=prefix, is_split_turn=bool(prefix),
                            files=_files(plan, path, (*summarize, *prefix)),
                            turn_start_index=plan.turn_start_index if prefix else -1,
                            turn_start_entry_id=plan.turn_start_entry_id if prefix else None), cut)


def _files(plan: CompactionPlan, path: list[Entry], summarized: tuple[PlannedMessage, ...]) -> CollectedFiles:
    """The file lists of the moved plan: the previous summary's, then the summarized tool calls'."""
    ops = FileOps()
    if plan.previous_compaction_index >= 0:
        previous = path[plan.previous_compaction_index]
        seed_from_details(ops, previous.raw.get("details"), previous.raw.get("fromHook"))
    for message in summarized:
        if message.role == "assistant":
            collect_from_json(ops, message.entry.raw["message"])
    return ops.freeze()


def _parent(path: list[Entry]) -> Optional[str]:
    return path[-1].id if path else None


def _folded(group: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool results followed by a user's text: the text joins the last result (see the module docstring)."""
    if len(group) < 2 or group[-1]["role"] != "user" or group[-2]["role"] != "toolResult":
        return group
    last = copy.deepcopy(group[-2])
    last["content"] = [*last["content"], *group[-1]["content"]]
    return [*group[:-2], last]


def _compaction(replaced: list[list[dict[str, Any]]], text: str, kept: str, parent: Optional[str]) -> CompactionEntry:
    ops = FileOps()
    for group in replaced:
        for message in group:
            if message["role"] == "assistant":
                collect_from_json(ops, message)
    return CompactionEntry.create(id=f"c{kept}", parent_id=parent, timestamp=_TIME, summary=text,
                                  first_kept_entry_id=kept, tokens_before=0,
                                  details=file_lists(ops.freeze()).to_json())
