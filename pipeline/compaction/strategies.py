"""Compaction strategies (``compaction.strategy``), each a function the runtime or ``pipeline compact`` calls.

* ``summarize`` (pi's, the default): :func:`~pipeline.compaction.engine.compact_session`;
* ``mask_tool_results``: every tool result older than the kept window (the entries the
  plan would summarize, turn prefix included) that is not masked yet is shown as
  ``compaction.masking.placeholder`` from now on; the tool calls stay. The decision is one
  ``custom`` entry (:mod:`pipeline.session.masks`): nothing written is rewritten, pi
  0.84.0 opens the file and ignores the entry;
* ``hybrid``: mask first; summarize too when the context after masking still fires the
  trigger (``compaction.trigger``) for the given window (window 0, unknown: it does).

:func:`mask_plan` is pure (what masking would do); :func:`run_strategy` executes it on
a session file. Settings are the model's own (``compaction.model_overrides``) when
``provider``/``model`` are given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pipeline.compaction.engine import Compacted, compact_session, plan_session
from pipeline.compaction.plan import CompactionPlan, NothingToCompact
from pipeline.compaction.tokens import estimate_tokens
from pipeline.compaction.triggers import fires, settings_for
from pipeline.errors import Problem, ProfileError
from pipeline.js import u16len
from pipeline.llm.types import SummaryClient
from pipeline.model.compaction import Compaction
from pipeline.model.profile import Profile
from pipeline.session.entries import CustomEntry, MessageEntry
from pipeline.session.masks import MASK_TYPE, mask_data, masked_entries, masked_message
from pipeline.session.store import SessionFile


@dataclass(frozen=True)
class MaskPlan:
    """What masking would do: ``{entry id: placeholder}``, and the context size before and after."""

    placeholders: dict[str, str]
    tokens_before: float
    tokens_after: float

    @property
    def saved(self) -> float:
        return self.tokens_before - self.tokens_after


@dataclass(frozen=True)
class StrategyResult:
    """What one compaction did: ``strategy``, the mask entry and the summary (either may be ``None``)."""

    strategy: Literal["summarize", "mask_tool_results", "hybrid"]
    mask: MaskPlan | None
    mask_entry: CustomEntry | None
    compacted: Compacted | None
    nothing: NothingToCompact | None = None

    @property
    def did_anything(self) -> bool:
        return self.mask_entry is not None or self.compacted is not None


def _result_chars(message) -> int:
    return sum(u16len(b.text) for b in message.content if getattr(b, "type", None) == "text")


def mask_plan(plan: CompactionPlan, settings: Compaction, already: dict[str, str]) -> MaskPlan:
    """The tool results of ``plan``'s summarized part (and turn prefix) not masked yet, with their placeholders."""
    placeholder = settings.masking.placeholder
    if placeholder is None:
        raise ProfileError(Problem("masking needs `compaction.masking.placeholder`", key="compaction.masking.placeholder",
                                   code="profile.compaction-rule"))
    found: dict[str, str] = {}
    saved = 0
    for planned in (*plan.summarize, *plan.turn_prefix):
        entry = planned.entry
        if not isinstance(entry, MessageEntry) or entry.role != "toolResult" or entry.id in already:
            continue
        message = planned.message
        text = placeholder.render(tool=message.tool_name or "", chars=str(_result_chars(message)))
        found[entry.id] = text
        saved += estimate_tokens(message, settings) - estimate_tokens(masked_message(message, text), settings)
    return MaskPlan(found, plan.tokens_before, max(plan.tokens_before - saved, 0))


def _settings(profile: Profile, provider: str | None, model: str | None) -> Compaction:
    return settings_for(profile.compaction, provider, model)


def run_strategy(
    session: SessionFile,
    profile: Profile,
    client: SummaryClient,
    *,
    window: int = 0,
    provider: str | None = None,
    model: str | None = None,
    strategy: str | None = None,
    **compact_options,
) -> StrategyResult:
    """Compact ``session`` with the profile's strategy (or ``strategy``); see the module doc."""
    settings = _settings(profile, provider, model)
    chosen = strategy or settings.strategy
    if chosen == "summarize":
        done = compact_session(session, profile, client, settings=settings, **compact_options)
        return _summarized(chosen, None, None, done)
    plan = plan_session(session, settings)
    if isinstance(plan, NothingToCompact):
        return StrategyResult(chosen, None, None, None, plan)  # type: ignore[arg-type]
    masking = mask_plan(plan, settings, masked_entries(session.path_to()))
    entry = None
    if masking.placeholders:
        session.ensure_appendable("add entries to", "mask that")
        entry = session.append_custom(MASK_TYPE, mask_data(masking.placeholders))
    if chosen == "hybrid" and fires(masking.tokens_after, window, settings):
        done = compact_session(session, profile, client, settings=settings, **compact_options)
        return _summarized(chosen, masking, entry, done)
    return StrategyResult(chosen, masking, entry, None)  # type: ignore[arg-type]


def _summarized(strategy, masking, entry, done) -> StrategyResult:
    if isinstance(done, NothingToCompact):
        return StrategyResult(strategy, masking, entry, None, done)
    return StrategyResult(strategy, masking, entry, done)

