"""Where to cut a path (spec §7.1, §7.2): cut points, turn starts, the cut itself.

Entry classes, from what an entry projects to (:func:`pipeline.session.projection.entry_messages`):

* **cut point** — a non-compaction entry yielding a user, assistant, bashExecution,
  custom, branchSummary or compactionSummary message (never a tool result, never
  metadata, never an empty branch summary);
* **turn start** — the same without assistant messages;
* **invisible** — yields nothing (model/thinking changes, labels, custom entries,
  session info, empty branch summaries).

:func:`find_cut_point` is pi's ``findCutPoint``, oddity included: after pulling
invisible entries into the kept part the cut may sit on one that precedes a user
message; it is no turn start, so the previous complete turn is reported as a split
turn's prefix (§10.2 C8, C26).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from pipeline.compaction.tokens import estimate_tokens
from pipeline.model.compaction import Compaction
from pipeline.session.projection import entry_messages, entry_roles
from pipeline.session.entries import CompactionEntry, Entry

CUT_POINT_ROLES = frozenset({"user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"})
TURN_START_ROLES = CUT_POINT_ROLES - {"assistant"}
_DEFAULT = Compaction()


def _has_role(entry: Entry, roles: frozenset[str]) -> bool:
    if isinstance(entry, CompactionEntry):
        return False
    return any(role in roles for role in entry_roles(entry))


def is_cut_point(entry: Entry) -> bool:
    """The kept part may start at this entry."""
    return _has_role(entry, CUT_POINT_ROLES)


def is_turn_start(entry: Entry) -> bool:
    """This entry opens a turn (a user-side message)."""
    return _has_role(entry, TURN_START_ROLES)


def is_invisible(entry: Entry) -> bool:
    """Not a compaction and contributes nothing to the context."""
    return not isinstance(entry, CompactionEntry) and not entry_roles(entry)


def valid_cut_points(entries: Sequence[Entry], start: int, end: int) -> list[int]:
    """Indices in ``[start, end)`` where a cut may land, in order."""
    return [i for i in range(start, end) if is_cut_point(entries[i])]


def find_turn_start(entries: Sequence[Entry], index: int, start: int) -> int:
    """The turn start at or before ``index`` (down to ``start``), or -1."""
    for i in range(index, start - 1, -1):
        if is_turn_start(entries[i]):
            return i
    return -1


def entry_tokens(entry: Entry, settings: Compaction = _DEFAULT) -> int:
    """Estimated tokens of everything an entry projects to (compactions included)."""
    return sum(estimate_tokens(message, settings) for message in entry_messages(entry))


@dataclass(frozen=True)
class CutPoint:
    """pi's ``CutPointResult``: keep from ``first_kept_index``; a split turn starts at ``turn_start_index``."""

    first_kept_index: int
    turn_start_index: int
    is_split_turn: bool


def _budget_cut(entries: Sequence[Entry], start: int, end: int, keep: int, cuts: list[int], settings: Compaction) -> int:
    """Walk back from the newest entry; the first cut point at/after where ``keep`` is reached."""
    total = 0
    for i in range(end - 1, start - 1, -1):
        tokens = entry_tokens(entries[i], settings)
        if tokens == 0:
            continue
        total += tokens
        if total >= keep:
            return next((c for c in cuts if c >= i), cuts[0])
    return cuts[0]


def _pull_invisible(entries: Sequence[Entry], cut: int, start: int) -> int:
    """Move the cut back over invisible entries just before it (not past a compaction or ``start``)."""
    while cut > start and is_invisible(entries[cut - 1]):
        cut -= 1
    return cut


def find_cut_point(
    entries: Sequence[Entry], start: int, end: int, keep_recent_tokens: int, settings: Compaction = _DEFAULT
) -> CutPoint:
    """pi's ``findCutPoint`` over ``entries[start:end]``, keeping at least ``keep_recent_tokens``."""
    cuts = valid_cut_points(entries, start, end)
    if not cuts:
        return CutPoint(start, -1, False)
    cut = _pull_invisible(entries, _budget_cut(entries, start, end, keep_recent_tokens, cuts, settings), start)
    if is_turn_start(entries[cut]):
        return CutPoint(cut, -1, False)
    turn_start = find_turn_start(entries, cut, start)
    return CutPoint(cut, turn_start, turn_start != -1)
