"""Branch summaries (docs/pi-rules.md#branch-summaries): summarizing the branch the user leaves when moving in the tree.

* :func:`branch_entries` — from the old leaf back to (excluding) the deepest common
  ancestor with the target, in chronological order;
* :func:`prepare_branch` — newest → oldest within the token budget, tool results left
  out, compactions and branch summaries as summary messages (even empty ones; one is
  still taken past the budget while the running total is below
  ``branch.summary_share_limit`` of it); file operations from every visited message and
  from the details of pi-made branch summaries on the whole branch;
* :func:`summarize_branch` — the call (or ``summary.branch_empty`` without a call when
  nothing is left) → ``branch_preamble`` + answer + file lists;
* :func:`navigation_leaf` — where the leaf goes: the target's parent for a user message
  or a custom_message target, else the target.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from pipeline.compaction.fileops import CollectedFiles, FileOps, collect_from_message, file_lists
from pipeline.compaction.fileops import format_file_lists, seed_from_details
from pipeline.compaction.requests import RequestContext, branch_request, user_requests
from pipeline.compaction.summarize import Call, Progress, run_call
from pipeline.compaction.tokens import estimate_tokens
from pipeline.errors import Problem
from pipeline.llm.types import SummaryClient
from pipeline.model.compaction import Compaction
from pipeline.session.projection import branch_summary_message, convert_to_llm, entry_messages
from pipeline.session.entries import BranchSummaryEntry, CompactionEntry, CustomMessageEntry, Entry, FileLists, MessageEntry
from pipeline.session.messages import AgentMessage, Usage, UserMessage
from pipeline.model.run_plan import ContextTexts
from pipeline.session.tree import SessionTree


@dataclass(frozen=True)
class BranchEntries:
    """pi's ``collectEntriesForBranchSummary`` result."""

    entries: tuple[Entry, ...]
    common_ancestor_id: str | None


def branch_entries(tree: SessionTree, old_leaf_id: str | None, target_id: str) -> BranchEntries:
    """Entries from ``old_leaf_id`` back to the common ancestor with ``target_id``, oldest first."""
    if not old_leaf_id:
        return BranchEntries((), None)
    ancestor = tree.common_ancestor(old_leaf_id, target_id)
    out, current, seen = [], old_leaf_id, set()
    while current and current != ancestor and current not in seen:
        entry = tree.get(current)
        if entry is None:
            break
        seen.add(current)
        out.append(entry)
        current = entry.parent_id
    return BranchEntries(tuple(reversed(out)), ancestor)


def branch_message(entry: Entry) -> AgentMessage | None:
    """What an entry contributes to a branch summary (tool results and metadata: nothing)."""
    if isinstance(entry, MessageEntry):
        return None if entry.role == "toolResult" else entry.message
    if isinstance(entry, (CustomMessageEntry, CompactionEntry)):
        return entry_messages(entry)[0]
    if isinstance(entry, BranchSummaryEntry):
        found = entry_messages(entry)
        return found[0] if found else branch_summary_message(entry)
    return None


@dataclass(frozen=True)
class BranchPreparation:
    """pi's ``prepareBranchEntries`` result."""

    messages: tuple[AgentMessage, ...]
    files: CollectedFiles
    total_tokens: int

    @property
    def file_lists(self) -> FileLists:
        return file_lists(self.files)


def _seed(entries: Sequence[Entry]) -> FileOps:
    ops = FileOps()
    for entry in entries:
        if isinstance(entry, BranchSummaryEntry):
            seed_from_details(ops, entry.raw.get("details"), entry.raw.get("fromHook"))
    return ops


def prepare_branch(entries: Sequence[Entry], token_budget: int, settings: Compaction) -> BranchPreparation:
    """Messages newest → oldest within ``token_budget`` (0 = no limit), and the file operations."""
    ops, taken, total = _seed(entries), [], 0
    share = settings.branch.summary_share_limit
    for entry in reversed(entries):
        message = branch_message(entry)
        if message is None:
            continue
        collect_from_message(ops, message)
        tokens = estimate_tokens(message, settings)
        if token_budget > 0 and total + tokens > token_budget:
            if isinstance(entry, (CompactionEntry, BranchSummaryEntry)) and total < token_budget * share:
                taken.append(message)
                total += tokens
            break
        taken.append(message)
        total += tokens
    return BranchPreparation(tuple(reversed(taken)), ops.freeze(), total)


def branch_budget(settings: Compaction, context_window: int | None) -> int:
    """``(context window, or the profile's default) − branch.reserve_tokens``."""
    return (context_window or settings.branch.default_context_window) - settings.branch.reserve_tokens


@dataclass(frozen=True)
class BranchResult:
    """The text of a ``branch_summary`` entry, its details and usage (``None``: no call was made)."""

    summary: str
    files: FileLists
    usage: Usage | None
    produced_by: str | None
    warnings: tuple[Problem, ...] = ()

    @property
    def details(self) -> dict[str, object]:
        """pi's ``details`` (``readFiles``, ``modifiedFiles``), plus ``producedBy`` for offline summaries."""
        return self.files.to_json(self.produced_by)


def summarize_branch(
    entries: Sequence[Entry],
    client: SummaryClient,
    ctx: RequestContext,
    texts: ContextTexts,
    *,
    context_window: int | None = None,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    progress: Progress | None = None,
) -> BranchResult:
    """pi's ``generateBranchSummary`` with the profile's texts."""
    prepared = prepare_branch(entries, branch_budget(ctx.compaction, context_window), ctx.compaction)
    if not prepared.messages:
        return BranchResult(ctx.summary.branch_empty.render(), FileLists(), None, None)
    llm = convert_to_llm(prepared.messages, texts)
    request = branch_request(llm, ctx, custom_instructions=custom_instructions, replace_instructions=replace_instructions,
                             asked=user_requests(prepared.messages))
    if progress is not None:
        progress("summarizing the branch (1/1)…")
    schema = () if replace_instructions and custom_instructions else ctx.branch_schema
    done = run_call(client, Call(request, "summarizing the branch", schema), ctx, progress)
    lists = prepared.file_lists
    text = ctx.summary.branch_preamble.render() + done.text + format_file_lists(lists, ctx.summary.tags)
    return BranchResult(text, lists, done.usage, client.provider, done.warnings)


def navigation_leaf(target: Entry) -> str | None:
    """The leaf after moving to ``target``: its parent for a user message or custom_message, else itself."""
    if isinstance(target, MessageEntry) and isinstance(target.message, UserMessage):
        return target.parent_id
    if isinstance(target, CustomMessageEntry):
        return target.parent_id
    return target.id
