"""Planning a compaction (spec §7.3): pi 0.84.0's ``prepareCompaction`` as a frozen plan.

1. A path ending with a compaction is already compacted: nothing to do.
2. The previous compaction P (the last on the path) gives the previous summary; the
   slice starts at P's first kept entry (so what P kept is summarized again), or right
   after P when that id is not on the path.
3. ``tokens_before`` = the context estimate of the whole current context.
4. The cut (:func:`~pipeline.compaction.cut.find_cut_point`); the history is the slice
   up to the turn start (split) or the cut, compaction entries skipped; the split
   turn's prefix runs from the turn start to the cut. One message per entry (the first).
5. Both empty: nothing to do. Otherwise the file operations, seeded from P's details.

The new first kept entry can lie before P; re-projecting then shows P as a second
summary inside the kept part (§10.2 P5′), as pi does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence

from pipeline.compaction.cut import CutPoint, find_cut_point
from pipeline.compaction.fileops import (
    CollectedFiles,
    FileOps,
    collect_from_blocks,
    collect_from_json,
    file_lists,
    seed_from_details,
)
from pipeline.compaction.tokens import context_tokens_newest_first
from pipeline.model.compaction import Compaction
from pipeline.session.projection import context_entries_of_path, context_settings, entry_messages, entry_roles
from pipeline.session.entries import CompactionEntry, Entry, FileLists
from pipeline.gcpause import gc_paused
from pipeline.session.messages import AgentMessage, AssistantMessage

Reason = Literal["empty", "already_compacted", "too_small", "no_id"]

#: Why there is nothing to compact, for people (the CLI prints it).
REASONS: dict[str, str] = {
    "empty": "the session has no entries on its current branch",
    "already_compacted": "the branch already ends with a compaction",
    "too_small": "nothing would be summarized: everything fits within keep_recent_tokens",
    "no_id": "the first kept entry has no id (the session needs migration)",
}


@dataclass(frozen=True)
class PlannedMessage:
    """One message to summarize: the first message of ``entry`` (built when asked for)."""

    entry: Entry

    @property
    def entry_id(self) -> str:
        return self.entry.id

    @property
    def role(self) -> str:
        return entry_roles(self.entry)[0]

    @property
    def message(self) -> AgentMessage:
        return entry_messages(self.entry)[0]


@dataclass(frozen=True)
class CompactionPlan:
    """What a compaction will summarize and keep; nothing is called or written to make it."""

    first_kept_entry_id: str
    first_kept_index: int
    is_split_turn: bool
    turn_start_index: int
    tokens_before: int | float
    previous_summary: str | None
    previous_compaction_index: int
    summarize: tuple[PlannedMessage, ...]
    turn_prefix: tuple[PlannedMessage, ...]
    files: CollectedFiles
    settings: Compaction
    thinking_level: str | None = None

    @property
    def summarize_ids(self) -> list[str]:
        return [m.entry_id for m in self.summarize]

    @property
    def turn_prefix_ids(self) -> list[str]:
        return [m.entry_id for m in self.turn_prefix]

    @property
    def messages_to_summarize(self) -> list[AgentMessage]:
        return [m.message for m in self.summarize]

    @property
    def turn_prefix_messages(self) -> list[AgentMessage]:
        return [m.message for m in self.turn_prefix]

    @property
    def file_lists(self) -> FileLists:
        """Read-only and modified files, sorted."""
        return file_lists(self.files)

    def to_json(self) -> dict[str, object]:
        """The ``pipeline compact --plan --format json`` object."""
        lists = self.file_lists
        return {
            "firstKeptEntryId": self.first_kept_entry_id,
            "isSplitTurn": self.is_split_turn,
            "tokensBefore": self.tokens_before,
            "summarizeIds": self.summarize_ids,
            "turnPrefixIds": self.turn_prefix_ids,
            "previousSummary": self.previous_summary,
            "readFiles": list(lists.read_files),
            "modifiedFiles": list(lists.modified_files),
        }


@dataclass(frozen=True)
class NothingToCompact:
    """No compaction: ``reason`` is one of :data:`REASONS`."""

    reason: Reason

    @property
    def message(self) -> str:
        return REASONS[self.reason]

    def to_json(self) -> dict[str, object]:
        return {"plan": None, "reason": self.reason, "message": self.message}


def _previous(path: Sequence[Entry]) -> int:
    return next((i for i in range(len(path) - 1, -1, -1) if isinstance(path[i], CompactionEntry)), -1)


def _boundary_start(path: Sequence[Entry], previous: int) -> int:
    if previous < 0:
        return 0
    kept_id = path[previous].first_kept_entry_id  # type: ignore[union-attr]
    found = next((i for i, e in enumerate(path) if e.id == kept_id), -1)
    return found if found >= 0 else previous + 1


def _first_messages(path: Sequence[Entry], start: int, end: int) -> tuple[PlannedMessage, ...]:
    """The first message of each non-compaction entry in ``path[start:end]``."""
    return tuple(
        PlannedMessage(entry) for entry in path[start:end]
        if not isinstance(entry, CompactionEntry) and entry_roles(entry)
    )


def context_tokens_before(path: Sequence[Entry], settings: Compaction) -> int | float:
    """The context estimate of the path's current context (what pi stores as ``tokensBefore``):
    :func:`~pipeline.compaction.tokens.estimate_context`, reading from the newest message back."""
    entries = context_entries_of_path(path)
    newest_first = (m for e in reversed(entries) for m in reversed(entry_messages(e)))
    return context_tokens_newest_first(newest_first, settings)


def _files(path: Sequence[Entry], previous: int, history, prefix) -> CollectedFiles:
    ops = FileOps()
    if previous >= 0:
        entry = path[previous]
        seed_from_details(ops, entry.raw.get("details"), entry.raw.get("fromHook"))
    for planned in (*history, *prefix):
        if planned.role == AssistantMessage.role:  # only message entries hold assistant messages
            blocks = planned.entry.content_blocks()  # type: ignore[union-attr]
            if blocks is None:
                collect_from_json(ops, planned.entry.raw["message"])
            else:
                collect_from_blocks(ops, blocks)
    return ops.freeze()


def plan_compaction(path: Sequence[Entry], settings: Compaction) -> CompactionPlan | NothingToCompact:
    """pi's ``prepareCompaction`` for the root→leaf ``path`` with ``settings`` (keep/reserve/estimates)."""
    if not path:
        return NothingToCompact("empty")
    if isinstance(path[-1], CompactionEntry):
        return NothingToCompact("already_compacted")
    previous = _previous(path)
    start = _boundary_start(path, previous)
    tokens_before = context_tokens_before(path, settings)
    cut = find_cut_point(path, start, len(path), settings.keep_recent_tokens, settings)
    if not path[cut.first_kept_index].id:
        return NothingToCompact("no_id")
    with gc_paused(promote=True):  # one planned message per summarized entry, kept by the plan
        return _assemble(path, settings, previous, start, cut, tokens_before)


def _assemble(
    path: Sequence[Entry], settings: Compaction, previous: int, start: int, cut: CutPoint, tokens_before: int | float
) -> CompactionPlan | NothingToCompact:
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_index
    history = _first_messages(path, start, history_end)
    prefix = _first_messages(path, cut.turn_start_index, cut.first_kept_index) if cut.is_split_turn else ()
    if not history and not prefix:
        return NothingToCompact("too_small")
    prev_entry = path[previous] if previous >= 0 else None
    return CompactionPlan(
        first_kept_entry_id=path[cut.first_kept_index].id,
        first_kept_index=cut.first_kept_index,
        is_split_turn=cut.is_split_turn,
        turn_start_index=cut.turn_start_index,
        tokens_before=tokens_before,
        previous_summary=prev_entry.raw.get("summary") if prev_entry is not None else None,
        previous_compaction_index=previous,
        summarize=history,
        turn_prefix=prefix,
        files=_files(path, previous, history, prefix),
        settings=settings,
        thinking_level=context_settings(path)[0],
    )
