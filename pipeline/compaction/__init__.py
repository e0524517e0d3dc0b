"""Compaction: token accounting, cut points and preparation (pi 0.84.0's rules, or pi 1.x's where the profile says so), with every word from the profile.

Typical use::

    from pipeline import compile_profile
    from pipeline.compaction import compact, make_summary_client, plan_session
    from pipeline.session import SessionFile

    profile = compile_profile("default").profile
    session = SessionFile.open("chat.jsonl")
    plan = plan_session(session, profile.compaction)        # CompactionPlan | NothingToCompact
    client = make_summary_client(profile, profile.summarizer)   # offline by default
    done = compact(session, profile, client)                # a CompactionOutcome: the entry, a mask, or why not

Stages (one module each): :mod:`~pipeline.compaction.tokens` (estimates, threshold),
:mod:`~pipeline.compaction.cut` (cut points, turn starts), :mod:`~pipeline.compaction.plan`
(the frozen :class:`CompactionPlan`), :mod:`~pipeline.compaction.serialize` (the
conversation as text), :mod:`~pipeline.compaction.fileops` (file lists),
:mod:`~pipeline.compaction.summary_schema` (``${schema}`` and the schema check),
:mod:`~pipeline.compaction.requests` (summary requests),
:mod:`~pipeline.compaction.summarize` (running the calls),
:mod:`~pipeline.compaction.branch` (branch summaries),
:mod:`~pipeline.compaction.engine` (sessions end to end),
:mod:`~pipeline.compaction.strategies` (masking), :mod:`~pipeline.compaction.driver` (the one
driver every caller compacts through: model overrides, strategy, one outcome),
:mod:`~pipeline.compaction.offline` (the offline summarizer, the profile's ``summary.offline``).
Overridden settings (``pipeline compact --reserve``) are the profile front end's business:
``compile_profile(source, overrides={"compaction.reserve_tokens": 8000})``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.lazy import lazy_attributes

#: Each name, by the module that defines it: imported on first use, so a start that needs
#: only the token estimate (the compaction check) imports none of the summary machinery.
_MODULES = {
    **dict.fromkeys(('BranchEntries', 'BranchPreparation', 'BranchResult', 'branch_entries', 'navigation_leaf', 'prepare_branch', 'summarize_branch'), 'branch'),
    **dict.fromkeys(('CutPoint', 'find_cut_point', 'find_turn_start'), 'cut'),
    **dict.fromkeys(('Compacted', 'Navigated', 'branch_session', 'compact_session', 'make_summary_client', 'plan_session', 'planned_requests', 'request_context'), 'engine'),
    **dict.fromkeys(('CompactionOutcome', 'Strategy', 'compact'), 'driver'),
    **dict.fromkeys(('CollectedFiles', 'FileOps', 'file_lists', 'format_file_lists'), 'fileops'),
    **dict.fromkeys(('CompactionPlan', 'NothingToCompact', 'PlannedMessage', 'plan_compaction'), 'plan'),
    **dict.fromkeys(('RequestContext', 'branch_request', 'history_request'), 'requests'),
    **dict.fromkeys(('missing_sections', 'render_schema'), 'summary_schema'),
    **dict.fromkeys(('SerializeOptions', 'serialize_conversation'), 'serialize'),
    **dict.fromkeys(('CompactionResult', 'SummaryFailed', 'plan_calls', 'summarize_plan'), 'summarize'),
    **dict.fromkeys(('ContextEstimate', 'context_tokens', 'estimate_context', 'estimate_tokens', 'should_compact'), 'tokens'),
}


__getattr__ = lazy_attributes(__name__, globals(), _MODULES)


if TYPE_CHECKING:  # the names as the type checker and editors see them
    from pipeline.compaction.branch import BranchEntries, BranchPreparation, BranchResult, branch_entries, navigation_leaf, prepare_branch, summarize_branch
    from pipeline.compaction.cut import CutPoint, find_cut_point, find_turn_start
    from pipeline.compaction.engine import Compacted, Navigated, branch_session, compact_session, make_summary_client, plan_session, planned_requests, request_context
    from pipeline.compaction.driver import CompactionOutcome, Strategy, compact
    from pipeline.compaction.fileops import CollectedFiles, FileOps, file_lists, format_file_lists
    from pipeline.compaction.plan import CompactionPlan, NothingToCompact, PlannedMessage, plan_compaction
    from pipeline.compaction.requests import RequestContext, branch_request, history_request
    from pipeline.compaction.summary_schema import missing_sections, render_schema
    from pipeline.compaction.serialize import SerializeOptions, serialize_conversation
    from pipeline.compaction.summarize import CompactionResult, SummaryFailed, plan_calls, summarize_plan
    from pipeline.compaction.tokens import ContextEstimate, context_tokens, estimate_context, estimate_tokens, should_compact

__all__ = [
    "BranchEntries", "BranchPreparation", "BranchResult", "CollectedFiles", "Compacted", "CompactionOutcome",
    "CompactionPlan",
    "CompactionResult", "ContextEstimate", "CutPoint", "FileOps", "Navigated", "NothingToCompact",
    "PlannedMessage", "RequestContext", "SerializeOptions", "Strategy", "SummaryFailed",
    "branch_entries", "branch_request", "branch_session", "compact", "compact_session",
    "context_tokens", "estimate_context", "estimate_tokens", "file_lists", "find_cut_point",
    "find_turn_start", "format_file_lists", "history_request", "make_summary_client", "missing_sections",
    "navigation_leaf", "plan_calls", "plan_compaction", "plan_session",
    "planned_requests", "prepare_branch", "render_schema", "request_context", "serialize_conversation",
    "should_compact", "summarize_branch", "summarize_plan",
]
