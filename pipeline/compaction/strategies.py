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

from pipeline.compaction.plan import CompactionPlan
from pipeline.compaction.tokens import estimate_tokens
from pipeline.errors import Problem, ProfileError
from pipeline.js import u16len
from pipeline.model.compaction import Compaction
from pipeline.session.entries import MessageEntry
from pipeline.session.masks import masked_message


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
