"""Where to cut (docs/pi-rules.md#cut-points): cut points, turn starts, the cut itself.

Entry classes, from what an entry projects to (:func:`pipeline.session.projection.entry_messages`
on a path; on a projection, what the entry shows after context edits):

* **cut point** — a non-compaction entry yielding a user, assistant, bashExecution,
  custom, branchSummary or compactionSummary message (never a tool result, never
  metadata, never an empty branch summary);
* **turn start** — the same without assistant messages;
* **invisible** — yields nothing (model/thinking changes, labels, custom entries,
  session info, empty branch summaries; on a projection also edited-away entries).

:func:`find_cut_point` is pi's ``findCutPoint``, oddity included: after pulling
invisible entries into the kept part the cut may sit on one that precedes a user
message; it is no turn start, so the previous complete turn is reported as a split
turn's prefix (docs/pi-rules.md#cut-points-and-plans C8, C26). Walking a projection (:data:`PROJECTION`) it is pi 1.x's
``findProjectedCutPoint``, with its recovery rule (:func:`recovery_suffix`); the cut
point taken when the budget is reached after the last one is ``compaction.cut_fallback``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from pipeline.compaction.tokens import estimate_tokens, projected_tokens
from pipeline.model.compaction import Compaction
from pipeline.session.entries import CompactionEntry, Entry, MessageEntry
from pipeline.session.messages import AssistantMessage
from pipeline.session.projection import ProjectedEntry, entry_messages, entry_roles
from pipeline.session.system import is_context_edit

CUT_POINT_ROLES = frozenset({"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"})
TURN_START_ROLES = CUT_POINT_ROLES - {"assistant"}
_DEFAULT = Compaction.model_construct()  # the defaults, unvalidated: no schema is built at import


@dataclass(frozen=True)
class EntryView:
    """How the cut reads the items it walks: the entry behind one, its roles, its messages.

    :data:`PATH` walks session entries as written (0.84.0); :data:`PROJECTION` walks
    :class:`~pipeline.session.projection.ProjectedEntry` items (1.x), where a context
    edit may have removed an entry's messages (``omits`` is then true).
    """

    source: Callable[[Any], Entry]
    roles: Callable[[Any], tuple[str, ...]]
    tokens: Callable[[Any, Compaction], int]
    omits: bool


def _path_tokens(entry: Entry, settings: Compaction) -> int:
    return sum(estimate_tokens(message, settings) for message in entry_messages(entry))


def _projected_tokens(item: ProjectedEntry, settings: Compaction) -> int:
    return sum(projected_tokens(message, settings) for message in item.messages)


PATH = EntryView(lambda e: e, entry_roles, _path_tokens, False)
PROJECTION = EntryView(lambda p: p.entry, lambda p: tuple(m.role for m in p.messages), _projected_tokens, True)


def _has_role(item: Any, roles: frozenset[str], view: EntryView) -> bool:
    if isinstance(view.source(item), CompactionEntry):
        return False
    return any(role in roles for role in view.roles(item))


def is_cut_point(entry: Any, view: EntryView = PATH) -> bool:
    """The kept part may start at this entry."""
    return _has_role(entry, CUT_POINT_ROLES, view)


def is_turn_start(entry: Any, view: EntryView = PATH) -> bool:
    """This entry opens a turn (a user-side message)."""
    return _has_role(entry, TURN_START_ROLES, view)


def is_invisible(entry: Any, view: EntryView = PATH) -> bool:
    """Not a compaction and contributes nothing to the context."""
    return not isinstance(view.source(entry), CompactionEntry) and not view.roles(entry)


def valid_cut_points(entries: Sequence[Any], start: int, end: int, view: EntryView = PATH) -> list[int]:
    """Indices in ``[start, end)`` where a cut may land, in order."""
    return [i for i in range(start, end) if is_cut_point(entries[i], view)]


def find_turn_start(entries: Sequence[Any], index: int, start: int, view: EntryView = PATH) -> int:
    """The turn start at or before ``index`` (down to ``start``), or -1."""
    for i in range(index, start - 1, -1):
        if is_turn_start(entries[i], view):
            return i
    return -1


def entry_tokens(entry: Any, settings: Compaction = _DEFAULT, view: EntryView = PATH) -> int:
    """Estimated tokens of everything an entry projects to (compactions included)."""
    return view.tokens(entry, settings)


@dataclass(frozen=True)
class CutPoint:
    """pi's ``CutPointResult``: keep from ``first_kept_index``; a split turn starts at ``turn_start_index``."""

    first_kept_index: int
    turn_start_index: int
    is_split_turn: bool


def _budget_cut(
    entries: Sequence[Any], start: int, end: int, keep: int, cuts: list[int], settings: Compaction, view: EntryView
) -> tuple[int, bool]:
    """Walk back from the newest entry; the first cut point at/after where ``keep`` is reached
    (none there: ``compaction.cut_fallback``), and whether it was reached."""
    total = 0
    for i in range(end - 1, start - 1, -1):
        tokens = entry_tokens(entries[i], settings, view)
        if tokens == 0:
            continue
        total += tokens
        if total >= keep:
            fallback = cuts[-1] if settings.cut_fallback == "last" else cuts[0]
            return next((c for c in cuts if c >= i), fallback), True
    return cuts[0], False


def _pull_invisible(entries: Sequence[Any], cut: int, start: int, view: EntryView) -> int:
    """Move the cut back over invisible entries just before it (not past a compaction or ``start``)."""
    while cut > start and is_invisible(entries[cut - 1], view):
        cut -= 1
    return cut


def find_cut_point(
    entries: Sequence[Any], start: int, end: int, keep_recent_tokens: int, settings: Compaction = _DEFAULT,
    view: EntryView = PATH,
) -> CutPoint:
    """pi's ``findCutPoint`` over ``entries[start:end]``, keeping at least ``keep_recent_tokens``
    (on a projection: 1.x's ``findProjectedCutPoint``, with its recovery rule)."""
    cuts = valid_cut_points(entries, start, end, view)
    if not cuts:
        return CutPoint(start, -1, False)
    cut, reached = _budget_cut(entries, start, end, keep_recent_tokens, cuts, settings, view)
    if reached and view.omits and recovery_suffix(entries[cut + 1 : end]):
        cut += 1
    cut = _pull_invisible(entries, cut, start, view)
    if is_turn_start(entries[cut], view):
        return CutPoint(cut, -1, False)
    turn_start = find_turn_start(entries, cut, start, view)
    return CutPoint(cut, turn_start, turn_start != -1)


# --------------------------------------------------------------------------- recovery (pi 1.x)


def _visible_as_written(item: ProjectedEntry) -> bool:
    return not is_context_edit(item.entry) and bool(entry_roles(item.entry))


def _omitted(item: ProjectedEntry) -> bool:
    return not item.messages and _visible_as_written(item)


def recovery_suffix(suffix: Sequence[ProjectedEntry]) -> bool:
    """After the cut only a recovery attempt is left: an omitted (context-edited away)
    assistant reply and nothing the model would see, no compaction, and no edit that
    replaces an entry outside that suffix. The cut then moves one entry on, so the
    omitted attempt is not kept while the input before it is summarized."""
    omitted_ids = {item.entry.id for item in suffix if _omitted(item)}
    for item in suffix:
        entry = item.entry
        if isinstance(entry, CompactionEntry) or (_visible_as_written(item) and item.messages):
            return False
        if is_context_edit(entry) and entry.raw.get("replacement", 0) is not None \
                and entry.raw.get("targetId") not in omitted_ids:
            return False
    return any(
        isinstance(item.entry, MessageEntry) and item.entry.role == AssistantMessage.role and _omitted(item)
        for item in suffix
    )
