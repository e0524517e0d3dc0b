"""The one compaction driver: every caller compacts a session through :func:`compact`.

The runtime's conversation, the adapters' bridge (through :meth:`pipeline.Pipeline.compact`),
``pipeline compact``, ``pipeline eval`` and ``pipeline replay`` (on a scratch session) all call
it, so they apply the same settings in the same way:

* the settings are the model's own (``compaction.model_overrides``, resolved by
  :meth:`~pipeline.model.compaction.Compaction.for_model` for ``provider``/``model``);
* the strategy is ``compaction.strategy`` of those settings (or the caller's): ``summarize``
  (pi's summary, :func:`~pipeline.compaction.engine.compact_session`), ``mask_tool_results``
  (one mask entry, :func:`~pipeline.compaction.strategies.mask_plan`) or ``hybrid`` (mask,
  then summarize when the context after masking still fires the trigger for ``window``);
* the answer is one :class:`CompactionOutcome`: the summary entry written, the mask
  applied, or nothing with its reason; tokens before and after; the warnings.

A host without a session (``pipeline proxy``, which sees a conversation in a request body)
plans a path of its own and summarizes it through :func:`summarize_planned`: the same summary
requests, checks and retries as a session's compaction.

Failures are raised as they come (the session unchanged): a provider's as
:class:`~pipeline.errors.ProviderError`, a busy session as
:class:`~pipeline.errors.SessionError`; what a caller does with them is its business.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional, Sequence

from pipeline.compaction.engine import compact_session, plan_session
from pipeline.compaction.plan import CompactionPlan, NothingToCompact
from pipeline.compaction.strategies import MaskPlan, mask_plan, masked_savings
from pipeline.compaction.summarize import CompactionResult, Progress
from pipeline.compaction.tokens import tokens_after_compaction
from pipeline.compaction.triggers import fires
from pipeline.errors import Problem
from pipeline.llm.types import SummaryClient
from pipeline.model.compaction import Compaction
from pipeline.model.profile import Profile
from pipeline.session.entries import CompactionEntry, CustomEntry
from pipeline.session.masks import MASK_TYPE, mask_data, masked_entries
from pipeline.session.messages import LlmMessage
from pipeline.session.projection import LlmContext
from pipeline.session.store import SessionFile

__all__ = ["CompactionOutcome", "Strategy", "compact", "summarize_planned"]

Strategy = Literal["summarize", "mask_tool_results", "hybrid"]
STRATEGIES: tuple[Strategy, ...] = ("summarize", "mask_tool_results", "hybrid")


@dataclass(frozen=True)
class CompactionOutcome:
    """What one compaction did.

    ``entry``/``result``/``context``: the summary written (its entry, what produced it, the
    context after it); ``mask``/``mask_entry``: the tool results masked (the plan and its
    entry); ``nothing``: why no summary was written (a plan that found nothing). Both a
    mask and a summary are set when ``hybrid`` did both. ``tokens_before``/``tokens_after``:
    the context's estimated size around it (``None`` when nothing was done); ``warnings``:
    the summary's."""

    strategy: Strategy
    settings: Compaction
    entry: Optional[CompactionEntry] = None
    result: Optional[CompactionResult] = None
    context: Optional[LlmContext] = None
    mask: Optional[MaskPlan] = None
    mask_entry: Optional[CustomEntry] = None
    nothing: Optional[NothingToCompact] = None
    tokens_before: Optional[float] = None
    tokens_after: Optional[float] = None
    warnings: tuple[Problem, ...] = ()

    @property
    def summarized(self) -> bool:
        """A compaction entry was written."""
        return self.entry is not None

    @property
    def masked(self) -> bool:
        """A mask entry was written."""
        return self.mask_entry is not None

    @property
    def did_anything(self) -> bool:
        return self.summarized or self.masked

    @property
    def reason(self) -> Optional[str]:
        """Why nothing was done: the plan's reason (``too_small``...), ``nothing_to_mask``; ``None`` when something was."""
        if self.did_anything:
            return None
        return self.nothing.reason if self.nothing is not None else "nothing_to_mask"

    @property
    def message(self) -> Optional[str]:
        """:attr:`reason` in words."""
        if self.did_anything:
            return None
        return self.nothing.message if self.nothing is not None else "no tool result left to mask"


def compact(
    session: SessionFile,
    profile: Profile,
    client: SummaryClient,
    *,
    provider: Optional[str] = None,
    model: Optional[str] = None,
    window: int = 0,
    strategy: Optional[str] = None,
    instructions: Optional[str] = None,
    progress: Optional[Progress] = None,
    thinking_level: Optional[str] = None,
) -> CompactionOutcome:
    """Compact ``session``'s current branch with the settings of ``provider/model`` and
    their strategy (or ``strategy``); see the module docstring."""
    settings = profile.compaction.for_model(provider, model)
    chosen = strategy or settings.strategy
    if chosen not in STRATEGIES:
        raise ValueError(f"unknown compaction strategy {chosen!r}; expected one of {', '.join(STRATEGIES)}")
    if chosen == "summarize":
        return _summarize(CompactionOutcome(chosen, settings), session, profile, client, instructions,
                          progress, thinking_level)
    plan = plan_session(session, settings)
    if isinstance(plan, NothingToCompact):
        return CompactionOutcome(chosen, settings, nothing=plan)
    path = session.path_to()
    already = masked_entries(path)
    masking = mask_plan(plan, settings, already, already_saved=masked_savings(path, settings, already))
    entry = None
    if masking.placeholders:
        session.ensure_appendable("add entries to", "mask that")
        entry = session.append_custom(MASK_TYPE, mask_data(masking.placeholders))
    outcome = CompactionOutcome(
        chosen, settings, mask=masking, mask_entry=entry,
        tokens_before=masking.tokens_before if entry else None, tokens_after=masking.tokens_after if entry else None,
    )
    if chosen == "hybrid" and fires(masking.tokens_after, window, settings):
        return _summarize(outcome, session, profile, client, instructions, progress, thinking_level)
    return outcome


def _summarize(
    outcome: CompactionOutcome, session: SessionFile, profile: Profile, client: SummaryClient,
    instructions: Optional[str], progress: Optional[Progress], thinking_level: Optional[str],
) -> CompactionOutcome:
    from dataclasses import replace

    settings = outcome.settings
    done = compact_session(session, profile, client, settings=settings, custom_instructions=instructions,
                           progress=progress, thinking_level=thinking_level)
    if isinstance(done, NothingToCompact):
        return replace(outcome, nothing=done)
    before = outcome.tokens_before if outcome.tokens_before is not None else done.entry.tokens_before
    return replace(
        outcome, entry=done.entry, result=done.result, context=done.context, tokens_before=before,
        tokens_after=tokens_after_compaction(done.context.agent_messages, settings), warnings=tuple(done.result.warnings),
    )


def summarize_planned(plan: CompactionPlan, profile: Profile, client: SummaryClient, *, model: str = "") -> CompactionResult:
    """The summary of ``plan`` as a session's compaction makes it (the history summary or its
    update of the plan's previous summary, the split turn's prefix, the file lists, the
    validity and schema checks and their retries), within ``summarizer.compaction_deadline_s``;
    nothing is written. ``model``: the summary model when the summarizer names none.

    For a host without a session (``pipeline proxy``), which plans a path of its own with
    :func:`~pipeline.compaction.plan.plan_compaction`; raises as :func:`compact`."""
    from dataclasses import replace

    from pipeline.compaction.engine import request_context
    from pipeline.compaction.summarize import summarize_plan
    from pipeline.llm.deadline import compaction_deadline
    from pipeline.model.run_plan import ContextTexts

    summarizer = profile.summarizer
    ctx = request_context(profile, plan.settings, summarizer, plan.thinking_level)
    ctx = replace(ctx, model=ctx.model or model)
    with compaction_deadline(summarizer.compaction_deadline_s):
        return summarize_plan(plan, client, ctx, ContextTexts.from_profile(profile))
