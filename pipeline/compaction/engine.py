"""Compaction of a session file end to end: plan, summarize, append, project again.

:func:`compact_session` plans on the current branch of a :class:`SessionFile`, makes the
summary calls, and only after they all succeeded appends one ``compaction`` entry (pi's
shape: ``summary``, ``firstKeptEntryId``, ``tokensBefore``, ``details``, ``usage``,
``fromHook``) through the session store, which writes it as one line with one ``write``
and ``fsync``. A failure or an interrupt before that leaves the file byte for byte as it
was. The summary calls run without the file's lock; under it the engine looks at what
other writers appended meanwhile and plans again: a branch another run compacted meanwhile
is left alone (nothing to compact), a branch that changed otherwise is summarized again
(at most :data:`MAX_REPLANS` times), so two runs never compact the same leaf twice. :func:`branch_session` does the same for moving to another point of the tree with a
branch summary. :func:`make_summary_client` turns the profile's ``summarizer`` into a
client: the offline summarizer or an HTTP client of :mod:`pipeline.llm`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.compaction.branch import BranchResult, branch_entries, navigation_leaf, summarize_branch
from pipeline.compaction.pins import pinned_block, request_note
from pipeline.compaction.plan import CompactionPlan, NothingToCompact, plan_compaction
from pipeline.compaction.requests import RequestContext
from pipeline.compaction.summarize import CompactionResult, Progress, plan_calls, summarize_plan
from pipeline.errors import Location, Problem, SessionError
from pipeline.llm.deadline import compaction_deadline
from pipeline.llm.types import REASONING_LEVELS, SummaryClient
from pipeline.model.compaction import Compaction
from pipeline.model.profile import Profile
from pipeline.model.summary import Summarizer
from pipeline.session.projection import LlmContext, build_context, context_settings
from pipeline.session.entries import BranchSummaryEntry, CompactionEntry
from pipeline.session.store import SessionFile
from pipeline.model.run_plan import ContextTexts


def make_summary_client(profile: Profile, summarizer: Summarizer) -> SummaryClient:
    """The offline summarizer, or an HTTP client of :mod:`pipeline.llm` (the key is read per call)."""
    if summarizer.provider == "offline":
        from pipeline.compaction.offline import OfflineClient

        return OfflineClient(profile.summary, model=summarizer.model or "offline")
    from pipeline.llm.clients import summarizer_client

    return summarizer_client(summarizer)


def request_context(
    profile: Profile, settings: Compaction, summarizer: Summarizer, thinking_level: str | None = None
) -> RequestContext:
    """The texts and budgets of every request; reasoning = the thinking level when the model supports it."""
    level = summarizer.reasoning_effort or thinking_level  # the summarizer's own effort wins
    reasoning = level if summarizer.reasoning and level in REASONING_LEVELS else None
    return RequestContext(
        summary=profile.summary,
        compaction=settings,
        model=summarizer.model or "",
        max_output_tokens=summarizer.max_tokens,
        reasoning=reasoning,
    )


@dataclass(frozen=True)
class Compacted:
    """A finished compaction: the stored entry, what produced it, and the context after it."""

    entry: CompactionEntry
    result: CompactionResult
    context: LlmContext


def plan_session(session: SessionFile, settings: Compaction) -> CompactionPlan | NothingToCompact:
    """The plan for the session's current branch (nothing is called or written)."""
    return plan_compaction(session.path_to(), settings)


def planned_requests(
    plan: CompactionPlan, profile: Profile, summarizer: Summarizer, *, custom_instructions: str | None = None,
    thinking_level: str | None = None,
) -> list:
    """The requests a compaction of ``plan`` would send (history, then turn prefix).

    ``thinking_level`` replaces the session's (the plan's) for the summary calls; either
    way it is only asked for when ``summarizer.reasoning`` is set."""
    ctx = request_context(profile, plan.settings, summarizer, thinking_level or plan.thinking_level)
    calls = plan_calls(plan, ctx, ContextTexts.from_profile(profile), custom_instructions)
    return [call.request for call in calls]


def compact_session(
    session: SessionFile,
    profile: Profile,
    client: SummaryClient,
    *,
    settings: Compaction | None = None,
    summarizer: Summarizer | None = None,
    custom_instructions: str | None = None,
    progress: Progress | None = None,
    thinking_level: str | None = None,
) -> Compacted | NothingToCompact:
    """Compact the current branch; the entry is appended only after every summary call succeeded.

    ``thinking_level`` (``off``…``xhigh``) replaces the session's thinking level for the
    summary calls; reasoning is asked for only when ``summarizer.reasoning`` is set."""
    settings = settings or profile.compaction
    summarizer = summarizer or profile.summarizer
    plan = plan_session(session, settings)
    if isinstance(plan, NothingToCompact):
        return plan
    session.ensure_appendable("add entries to", "compact that")
    texts = ContextTexts.from_profile(profile)
    with compaction_deadline(summarizer.compaction_deadline_s):
        for _ in range(MAX_REPLANS + 1):
            ctx = request_context(profile, settings, summarizer, thinking_level or plan.thinking_level)
            pinned = pinned_block(session, settings)
            result = summarize_plan(plan, client, ctx, texts, custom_instructions=custom_instructions,
                                    progress=progress, note=request_note(pinned.block, settings.pins))
            result = pinned.apply(result, settings.pins)
            with session.exclusive() as appended:
                fresh = plan_session(session, settings) if appended else plan
                if isinstance(fresh, NothingToCompact):
                    return fresh  # another writer compacted this branch meanwhile
                if _same_plan(fresh, plan):
                    entry = session.append_compaction(
                        result.summary, result.first_kept_entry_id, result.tokens_before,
                        details=result.details, usage=result.usage.to_json(), from_hook=False,
                        system_snapshot=bool(profile.runtime and profile.runtime.record_system_prompt),
                    )
                    return Compacted(entry, result, build_context(session, texts))  # type: ignore[arg-type]
            plan = fresh  # the branch changed under us: summarize what it is now (outside the lock)
    raise SessionError(Problem(
        f"the session changed {MAX_REPLANS + 1} times while it was being compacted; nothing was written",
        Location(str(session.path)), code="session.busy", hint="run the compaction again when it is quiet",
    ))


#: How often a compaction plans again when other writers changed the branch during its summary calls.
MAX_REPLANS = 3


def _same_plan(a: CompactionPlan, b: CompactionPlan) -> bool:
    """Whether two plans summarize and keep the same (a summary made for one fits the other)."""
    return a.to_json() == b.to_json() and a.thinking_level == b.thinking_level


@dataclass(frozen=True)
class Navigated:
    """A move in the tree: the new leaf, the branch summary entry (if one was written), the context."""

    leaf_id: str | None
    entry: BranchSummaryEntry | None
    result: BranchResult | None
    context: LlmContext


def branch_session(
    session: SessionFile,
    profile: Profile,
    client: SummaryClient,
    target_id: str,
    *,
    summarizer: Summarizer | None = None,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    progress: Progress | None = None,
) -> Navigated:
    """Move from the current leaf to ``target_id`` with a summary of the branch left behind.

    As pi's ``navigateTree``: no summary when nothing lies between the leaf and the common
    ancestor (the leaf just moves, in memory); otherwise the summary (or the profile's
    ``branch_empty`` text when no message is left) becomes a ``branch_summary`` entry under
    the new leaf, written only after the summary succeeded.
    """
    target = session.get(target_id)
    if target is None:
        raise SessionError(Problem(f"no entry {target_id!r}", Location(str(session.path)), code="session.no-entry"))
    texts = ContextTexts.from_profile(profile)
    old_leaf, new_leaf = session.leaf_id, navigation_leaf(target)
    if target_id == old_leaf:
        return Navigated(old_leaf, None, None, build_context(session, texts))  # type: ignore[arg-type]
    collected = branch_entries(session.tree, old_leaf, target_id)
    session.ensure_appendable("add entries to", "compact that")
    if not collected.entries:
        _move(session, new_leaf)
        return Navigated(session.leaf_id, None, None, build_context(session, texts))  # type: ignore[arg-type]
    summarizer = summarizer or profile.summarizer
    ctx = request_context(profile, profile.compaction, summarizer, context_settings(session.path_to())[0])
    with compaction_deadline(summarizer.compaction_deadline_s):
        result = summarize_branch(
            collected.entries, client, ctx, texts, context_window=summarizer.context_window,
            custom_instructions=custom_instructions, replace_instructions=replace_instructions, progress=progress,
        )
    usage = result.usage.to_json() if result.usage is not None else None
    entry = session.append_branch_summary(new_leaf, result.summary, details=result.details, usage=usage, from_hook=False)
    return Navigated(session.leaf_id, entry, result, build_context(session, texts))  # type: ignore[arg-type]


def _move(session: SessionFile, leaf: str | None) -> None:
    if leaf is None:
        session.reset_leaf()
    else:
        session.branch(leaf)
