"""When compaction fires: the declared trigger, and the settings of one model.

* ``compaction.trigger`` absent or ``{reserve_tokens: N}``: pi's rule, compact when the
  context holds more than ``window - N`` tokens (absent: ``N = compaction.reserve_tokens``);
* ``{percent_of_window: P}``: more than ``window * P / 100``;
* ``{tokens: N}``: more than ``N``, whatever the window.

A window of 0 (unknown) makes the window rules fire on every check, as pi's does; the
``tokens`` rule does not look at the window.

:meth:`~pipeline.model.compaction.Compaction.for_model` (and the run plan's
:meth:`~pipeline.model.run_plan.CompactionCheck.for_model`) resolve
``compaction.model_overrides`` for one ``provider/model`` as pi 1.6's ``modelOverrides``: the exact key (case-sensitive; the model id may contain
``/``) overrides the keys it names, each key it leaves out falls back to the profile's
own value, and ``enabled`` cannot be overridden.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.model.compaction import Compaction, PercentTrigger, ReserveTrigger, TokensTrigger
from pipeline.model.run_plan import Firing

def threshold(settings: Firing, context_window: int) -> float:
    """Compaction fires when the context holds more tokens than this."""
    return settings.threshold(context_window)


def fires(tokens: int | float, context_window: int, settings: Firing) -> bool:
    """Whether compaction fires at ``tokens`` (``enabled`` and ``tokens > threshold``)."""
    return settings.enabled and tokens > threshold(settings, context_window)


def describe(settings: Compaction) -> str:
    """The rule in words (for ``--plan`` and reports)."""
    trigger = settings.trigger
    if isinstance(trigger, TokensTrigger):
        return f"tokens > {trigger.tokens}"
    if isinstance(trigger, PercentTrigger):
        return f"tokens > {trigger.percent_of_window:g}% of the window"
    reserve = trigger.reserve_tokens if isinstance(trigger, ReserveTrigger) else settings.reserve_tokens
    return f"tokens > window - {reserve}"


@dataclass(frozen=True)
class TriggerAnswer:
    """``compact --plan --window N``: would compaction fire now?"""

    tokens: int | float
    window: int
    threshold: float
    fires: bool
    rule: str

    def to_json(self) -> dict[str, object]:
        return {"tokens": self.tokens, "window": self.window, "threshold": self.threshold,
                "fires": self.fires, "rule": self.rule}


def would_trigger(tokens: int | float, window: int, settings: Compaction) -> TriggerAnswer:
    """The answer for a context of ``tokens`` in a window of ``window``."""
    return TriggerAnswer(tokens, window, threshold(settings, window), fires(tokens, window, settings),
                         describe(settings))
