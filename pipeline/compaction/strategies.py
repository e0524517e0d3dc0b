"""Compaction strategies (``compaction.strategy``), driven by :func:`pipeline.compaction.driver.compact`.

* ``summarize`` (pi's, the default): :func:`~pipeline.compaction.engine.compact_session`;
* ``mask_tool_results``: every tool result older than the kept window (the entries the
  plan would summarize, turn prefix included) that is not masked yet is shown as
  ``compaction.masking.placeholder`` from now on; the tool calls stay. The decision is one
  ``custom`` entry (:mod:`pipeline.session.masks`): nothing written is rewritten, pi
  0.84.0 opens the file and ignores the entry;
* ``hybrid``: mask first; summarize too when the context after masking still fires the
  trigger (``compaction.trigger``) for the given window (window 0, unknown: it does).

:func:`mask_plan` is pure (what masking would do); the driver
(:mod:`pipeline.compaction.driver`) writes it to a session file, with the model's own
settings (``compaction.model_overrides``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from pipeline.compaction.plan import CompactionPlan
from pipeline.compaction.tokens import estimate_context, estimate_tokens
from pipeline.errors import Problem, ProfileError
from pipeline.js import u16len
from pipeline.model.compaction import Compaction
from pipeline.session.entries import Entry, MessageEntry
from pipeline.session.masks import masked_message
from pipeline.session.projection import context_entries_of_path, entry_messages


@dataclass(frozen=True)
class MaskPlan:
    """What masking would do: ``{entry id: placeholder}``, and the context size before and after."""

    placeholders: dict[str, str]
    tokens_before: float
    tokens_after: float

    @property
    def saved(self) -> float:
        return self.tokens_before - self.tokens_after


def _result_chars(message) -> int:
    return sum(u16len(b.text) for b in message.content if getattr(b, "type", None) == "text")


def masked_savings(path: Sequence[Entry], settings: Compaction, already: Mapping[str, str]) -> float:
    """How much smaller the context of ``path`` is estimated with the masks ``already`` applied.

    A plan's ``tokens_before`` estimates the unmasked messages; what a provider is sent
    shows the placeholders. Both lists are estimated alike (pi's ``estimateContextTokens``),
    so a masked result that a recorded usage already counted makes no difference, and
    one estimated message by message (after the last usage, or with no usage at all)
    counts as its placeholder."""
    if not already:
        return 0
    pairs = [(e.id, m) for e in context_entries_of_path(path) for m in entry_messages(e)]
    plain = [m for _, m in pairs]
    shown = [masked_message(m, already[i]) if i in already else m for i, m in pairs]
    return estimate_context(plain, settings).tokens - estimate_context(shown, settings).tokens


def mask_plan(plan: CompactionPlan, settings: Compaction, already: dict[str, str], *,
              already_saved: float = 0) -> MaskPlan:
    """The tool results of ``plan``'s summarized part (and turn prefix) not masked yet, with their placeholders.

    ``already_saved`` (:func:`masked_savings`): what the masks ``already`` take off the
    plan's ``tokens_before``, so the sizes are those of the context as sent."""
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
    before = max(plan.tokens_before - already_saved, 0)
    return MaskPlan(found, before, max(before - saved, 0))
