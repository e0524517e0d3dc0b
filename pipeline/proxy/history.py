"""A request's conversation as a session path, so the proxy plans and asks for a summary with the
runtime's own functions (:func:`~pipeline.compaction.plan.plan_compaction`,
:func:`~pipeline.compaction.driver.summarize_planned`): the same cut, split turn, previous
summary, file lists and summary requests as ``pipeline run`` for the same history.

* each message of the body after the leading system ones becomes the pi messages it reads as
  (:func:`~pipeline.proxy.readback.pi_groups`), one message entry each, chained by parent;
  a system message inside ``messages`` becomes none (it is kept whole, never summarized);
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
from dataclasses import dataclass
from typing import Any, Optional

from pipeline.compaction.fileops import FileOps, collect_from_json, file_lists
from pipeline.compaction.plan import CompactionPlan, NothingToCompact, plan_compaction
from pipeline.model.compaction import Compaction
from pipeline.proxy.readback import pi_groups
from pipeline.proxy.routes import Kind
from pipeline.proxy.store import Summary
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
    """The session path of ``messages[head:]`` and, per entry id, the index of its message."""
    groups = [_folded(g) for g in pi_groups(kind, messages)]
    path: list[Entry] = []
    where: dict[str, int] = {}
    for index in range(head, len(messages)):
        if previous is not None and index == previous.messages:
            path.append(_compaction(groups[head:index], previous.text, f"m{index}.0", _parent(path)))
        for number, message in enumerate(groups[index]):
            entry = MessageEntry.from_json({"type": "message", "id": f"m{index}.{number}", "parentId": _parent(path),
                                            "timestamp": _TIME, "message": message})
            where[entry.id] = index
            path.append(entry)
    return path, where


def wire_plan(kind: Kind, messages: list[Any], head: int, settings: Compaction,
              previous: Optional[Summary] = None) -> Optional[WirePlan]:
    """The runtime's plan for the conversation (None: nothing to summarize)."""
    path, where = wire_path(kind, messages, head, previous)
    plan = plan_compaction(path, settings)
    if isinstance(plan, NothingToCompact):
        return None
    return WirePlan(plan, where[plan.first_kept_entry_id])


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
