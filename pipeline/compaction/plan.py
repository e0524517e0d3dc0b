"""Planning a compaction (docs/pi-rules.md#planning-a-compaction): pi's ``prepareCompaction`` as a frozen plan.

With ``compaction.plan_on: path`` (pi 0.84.0):

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
summary inside the kept part (docs/pi-rules.md#cut-points-and-plans P5′), as pi does.

With ``plan_on: projection`` (pi 1.x) the same steps run on the session projection
(:func:`~pipeline.session.projection.project_path`: context edits applied, P first with
its kept tail after it): the slice starts right after P, ``tokens_before`` is
:func:`~pipeline.compaction.tokens.projected_context_tokens`, and the history is what the
entries show (edited messages as edited, system messages left out). Indices in the plan
are positions on the path either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence

from pipeline.compaction.cut import PATH, PROJECTION, CutPoint, EntryView, find_cut_point
from pipeline.compaction.fileops import (
    CollectedFiles,
    FileOps,
    collect_from_blocks,
    collect_from_json,
    file_lists,
    seed_from_details,
)
from pipeline.compaction.tokens import context_tokens_newest_first, is_system_message, projected_context_tokens
from pipeline.model.compaction import Compaction
from pipeline.session.projection import (
    ProjectedEntry,
    context_entries_of_path,
    context_settings,
    entry_messages,
    entry_roles,
    project_path,
)
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
    """One message to summarize: the first message of ``entry`` (built when asked for), or
    ``edited``, the message a context edit made of it (planning on the projection)."""

    entry: Entry
    edited: AgentMessage | None = None

    @property
    def entry_id(self) -> str:
        return self.entry.id

    @property
    def role(self) -> str:
        return self.edited.role if self.edited is not None else entry_roles(self.entry)[0]

    @property
    def message(self) -> AgentMessage:
        return self.edited if self.edited is not None else entry_messages(self.entry)[0]


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
    turn_start_entry_id: str | None = None
    planned_entries: int = 0  # how many entries the cut walked (the path's, or its projection's)

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


def _first_messages(items: Sequence[object], start: int, end: int, view: EntryView) -> tuple[PlannedMessage, ...]:
    """The messages to summarize of ``items[start:end]``: on a path the first message of each
    non-compaction entry; on a projection what each non-compaction entry shows (system
    messages are prompt state, not conversation)."""
    if view is PATH:
        return tuple(
            PlannedMessage(entry) for entry in items[start:end]  # type: ignore[misc]
            if not isinstance(entry, CompactionEntry) and entry_roles(entry)  # type: ignore[arg-type]
        )
    out: list[PlannedMessage] = []
    for item in items[start:end]:
        if isinstance(item.entry, CompactionEntry):  # type: ignore[attr-defined]
            continue
        for message in item.messages:  # type: ignore[attr-defined]
            if not is_system_message(message):
                out.append(PlannedMessage(item.entry, message if item.edited else None))  # type: ignore[attr-defined]
    return tuple(out)


def context_tokens_before(path: Sequence[Entry], settings: Compaction) -> int | float:
    """The context estimate of the path's current context (what pi stores as ``tokensBefore``):
    :func:`~pipeline.compaction.tokens.estimate_context`, reading from the newest message back."""
    entries = context_entries_of_path(path)
    newest_first = (m for e in reversed(entries) for m in reversed(entry_messages(e)))
    return context_tokens_newest_first(newest_first, settings)


def _files(previous: Entry | None, history, prefix) -> CollectedFiles:
    ops = FileOps()
    if previous is not None:
        entry = previous
        seed_from_details(ops, entry.raw.get("details"), entry.raw.get("fromHook"))
    for planned in (*history, *prefix):
        if planned.role != AssistantMessage.role:
            continue
        if planned.edited is not None:
            collect_from_json(ops, planned.edited.raw)
        else:  # only message entries hold assistant messages
            blocks = planned.entry.content_blocks()  # type: ignore[union-attr]
            if blocks is None:
                collect_from_json(ops, planned.entry.raw["message"])  # type: ignore[union-attr]
            else:
                collect_from_blocks(ops, blocks)
    return ops.freeze()


def plan_compaction(path: Sequence[Entry], settings: Compaction) -> CompactionPlan | NothingToCompact:
    """pi's ``prepareCompaction`` for the root→leaf ``path`` with ``settings`` (keep/reserve/estimates;
    ``plan_on`` says whether the path itself or its projection is cut)."""
    if not path:
        return NothingToCompact("empty")
    if isinstance(path[-1], CompactionEntry):
        return NothingToCompact("already_compacted")
    if settings.plan_on == "projection":
        return _plan_projection(path, settings)
    previous = _previous(path)
    start = _boundary_start(path, previous)
    tokens_before = context_tokens_before(path, settings)
    cut = find_cut_point(path, start, len(path), settings.keep_recent_tokens, settings)
    if not path[cut.first_kept_index].id:
        return NothingToCompact("no_id")
    with gc_paused(promote=True):  # one planned message per summarized entry, kept by the plan
        return _assemble(_Basis(path, path, PATH), settings, previous, start, cut, tokens_before)


def _plan_projection(path: Sequence[Entry], settings: Compaction) -> CompactionPlan | NothingToCompact:
    """pi 1.x: cut the session projection (:func:`~pipeline.session.projection.project_path`)
    after the newest compaction that shows a summary (its kept tail is already in place)."""
    with gc_paused(promote=True):  # one projected entry per entry on the path, kept by the plan
        projected = project_path(path)
        previous = next(
            (i for i, p in enumerate(projected) if isinstance(p.entry, CompactionEntry) and p.messages), -1
        )
        start = previous + 1
        tokens_before = projected_context_tokens(projected, path, settings)
        cut = find_cut_point(projected, start, len(projected), settings.keep_recent_tokens, settings, PROJECTION)
        if cut.first_kept_index >= len(projected):
            return NothingToCompact("too_small")
        if not projected[cut.first_kept_index].entry.id:
            return NothingToCompact("no_id")
        return _assemble(_Basis(path, projected, PROJECTION), settings, previous, start, cut, tokens_before)


@dataclass(frozen=True)
class _Basis:
    """What a plan is cut from: the path, and the items the cut walks (the path or its projection)."""

    path: Sequence[Entry]
    items: Sequence[Entry] | Sequence[ProjectedEntry]
    view: EntryView

    def entry(self, index: int) -> Entry:
        return self.view.source(self.items[index])

    def path_index(self, index: int) -> int:
        """Where ``items[index]`` is on the path (-1 for -1)."""
        if index < 0 or self.view is PATH:
            return index
        entry = self.entry(index)
        return next(i for i, e in enumerate(self.path) if e is entry)


def _assemble(
    basis: _Basis, settings: Compaction, previous: int, start: int, cut: CutPoint, tokens_before: int | float
) -> CompactionPlan | NothingToCompact:
    items, view = basis.items, basis.view
    history_end = cut.turn_start_index if cut.is_split_turn else cut.first_kept_index
    history = _first_messages(items, start, history_end, view)
    prefix = _first_messages(items, cut.turn_start_index, cut.first_kept_index, view) if cut.is_split_turn else ()
    if not history and not prefix:
        return NothingToCompact("too_small")
    prev_entry = basis.entry(previous) if previous >= 0 else None
    return CompactionPlan(
        first_kept_entry_id=basis.entry(cut.first_kept_index).id,
        first_kept_index=basis.path_index(cut.first_kept_index),
        is_split_turn=cut.is_split_turn,
        turn_start_index=basis.path_index(cut.turn_start_index),
        tokens_before=tokens_before,
        previous_summary=prev_entry.raw.get("summary") if prev_entry is not None else None,
        previous_compaction_index=basis.path_index(previous),
        summarize=history,
        turn_prefix=prefix,
        files=_files(prev_entry, history, prefix),
        settings=settings,
        thinking_level=context_settings(basis.path)[0],
        turn_start_entry_id=basis.entry(cut.turn_start_index).id if cut.is_split_turn else None,
        planned_entries=len(items),
    )
