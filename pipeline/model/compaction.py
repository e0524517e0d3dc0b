"""The ``compaction`` block: when to compact, what compacting does, what it keeps, and
per-model overrides."""

from __future__ import annotations

from typing import Literal, Optional, Union

from pydantic import Field, field_validator

from pipeline.model.ref import ModelRef
from pipeline.model.base import MAX_CHARS, MAX_CHARS_PER_TOKEN, MAX_COUNT, MAX_TOKENS, FrozenDict, Strict
from pipeline.model.text import Text

class SummaryBudget(Strict):
    limit: Literal["reserve_share", "model"] = Field(
        "reserve_share",
        description=(
            "`reserve_share`: a summary's output budget is a share of reserve_tokens (below), capped by the"
            " model's maximum; `model`: the model's own output limit (`summarizer.max_tokens`, none when unset)"
        ),
    )
    history: float = Field(0.8, gt=0, le=1, description="history summary max tokens, fraction of reserve_tokens")
    turn_prefix: float = Field(0.5, gt=0, le=1, description="split-turn prefix summary, fraction of reserve_tokens")


class BranchSummarySettings(Strict):
    reserve_tokens: int = Field(16384, ge=0, le=MAX_TOKENS)
    max_tokens: int = Field(2048, gt=0, le=MAX_TOKENS, description="output budget of a branch summary")
    default_context_window: int = Field(
        128000, gt=0, le=MAX_TOKENS, description="window assumed when the model's is unknown"
    )
    summary_share_limit: float = Field(
        0.9, gt=0, le=1, description="summaries are still taken while the running total is below this share"
    )


class ReserveTrigger(Strict):
    """pi's rule: compact above ``window - reserve_tokens``."""

    reserve_tokens: int = Field(
        ge=0, le=MAX_TOKENS, description="compact when fewer than this many tokens of the window are left"
    )


class PercentTrigger(Strict):
    """Compact above a share of the window."""

    percent_of_window: float = Field(gt=0, le=100, description="compact above this percentage of the window")


class TokensTrigger(Strict):
    """Compact above a fixed context size, whatever the window."""

    tokens: int = Field(gt=0, le=MAX_TOKENS, description="compact when the context holds more tokens than this")


Trigger = Union[ReserveTrigger, PercentTrigger, TokensTrigger]
Strategy = Literal["summarize", "mask_tool_results", "hybrid"]


class Masking(Strict):
    """How ``mask_tool_results`` stands in for an old tool result."""

    placeholder: Optional[Text] = Field(
        None,
        description="required by `mask_tool_results` and `hybrid`; replaces the result's content;"
        " `${tool}` = the tool's name, `${chars}` = its length",
    )


class PinRule(Strict):
    """Messages whose text matches ``pattern`` (a regular expression) are pinned."""

    pattern: str = Field(min_length=1)
    roles: tuple[Literal["user", "assistant", "toolResult"], ...] = ("user",)


class Pins(Strict):
    """What survives every compaction verbatim, and where it goes."""

    first_request: bool = Field(False, description="pin the branch's first user request")
    messages: tuple[PinRule, ...] = ()
    files: tuple[str, ...] = Field((), description="files (relative to the session's cwd) pinned with their text")
    placement: Literal["before_summary", "after_summary"] = "before_summary"
    item: Optional[Text] = Field(
        None, description="one pinned text (required when anything is pinned); `${text}` = it, `${source}` = where from"
    )
    open: Optional[Text] = Field(None, description="before the pinned texts")
    close: Optional[Text] = Field(None, description="after the pinned texts")
    separator: str = Field("\n\n", description="between pinned texts")
    note: Optional[Text] = Field(
        None,
        description="appended (after a blank line) to summary requests when something is pinned; `${pinned}` = the texts",
    )


#: The keys a ``compaction.model_overrides`` entry may set (``enabled`` cannot be overridden, as in pi 1.6).
OVERRIDABLE = ("reserve_tokens", "keep_recent_tokens", "trigger", "strategy")


class ModelOverride(Strict):
    """Compaction settings for one ``provider/model``; a key left out falls back to the profile's."""

    reserve_tokens: Optional[int] = Field(None, ge=0, le=MAX_TOKENS)
    keep_recent_tokens: Optional[int] = Field(None, ge=0, le=MAX_TOKENS)
    trigger: Optional[Trigger] = None
    strategy: Optional[Strategy] = None
    context_window: Optional[int] = Field(None, gt=0, le=MAX_TOKENS, description="the model's window, for `validate`")


class Compaction(Strict):
    enabled: bool = True
    reserve_tokens: int = Field(16384, ge=0, le=MAX_TOKENS)
    keep_recent_tokens: int = Field(20000, ge=0, le=MAX_TOKENS)
    trigger: Optional[Trigger] = Field(
        None, description="when to compact; none = pi's rule with `reserve_tokens`"
    )
    strategy: Strategy = Field("summarize", description="what compacting does")
    masking: Masking = Masking.model_construct()  # built unvalidated: no schema is made at import
    pins: Pins = Pins.model_construct()
    model_overrides: dict[str, ModelOverride] = Field(
        default_factory=dict,
        description="`provider/model` -> settings of that model (each key left out falls back to the ones above)",
    )
    chars_per_token: int = Field(4, gt=0, le=MAX_CHARS_PER_TOKEN)
    image_chars: int = Field(4800, ge=0, le=MAX_CHARS, description="characters charged per image")
    tool_result_max_chars: int = Field(
        2000, gt=0, le=MAX_CHARS, description="tool results longer than this are cut in summaries"
    )
    summary_budget: SummaryBudget = SummaryBudget.model_construct()
    overflow_retries: int = Field(1, ge=0, le=MAX_COUNT, description="compact-and-retry attempts per overflow")
    branch: BranchSummarySettings = BranchSummarySettings.model_construct()
    plan_on: Literal["path", "projection"] = Field(
        "path",
        description=(
            "what a compaction plan is cut from: `path` = the branch's entries, from the previous compaction's"
            " first kept entry on (its summary counts toward keep_recent_tokens; pi 0.84); `projection` = the"
            " session projection: context edits applied, the previous compaction's kept tail already in place,"
            " cut after it, and a cut that would keep only an omitted (edited-away) reply moves past it (pi 1.x)"
        ),
    )
    estimate_on: Literal["messages", "projection"] = Field(
        "messages",
        description=(
            "the context size the auto-compaction check uses when a reply reports no usable usage, and the"
            " estimates the runtime reports: `messages` = the in-memory context, recorded system messages"
            " count nothing, no usage anchor at all means no compaction (pi 0.84); `projection` = system"
            " messages count (content, section texts, JSON of toolsAdded), no anchor gives the plain estimate,"
            " and once the branch has context edits the projection's estimate replaces the reply's usage (pi 1.x)"
        ),
    )
    cut_fallback: Literal["first", "last"] = Field(
        "first",
        description=(
            "the cut point taken when keep_recent_tokens is reached after the last one (trailing tool results"
            " over the budget): `first` = the oldest cut point, often leaving nothing to summarize (pi 0.84);"
            " `last` = the newest one (pi 1.x)"
        ),
    )

    @field_validator("model_overrides", mode="after")
    @classmethod
    def _frozen_overrides(cls, overrides: dict[str, ModelOverride]) -> dict[str, ModelOverride]:
        return FrozenDict(overrides)

    def threshold(self, context_window: int) -> float:
        """Compaction fires above this many tokens (``trigger``; none = ``window - reserve_tokens``)."""
        trigger = self.trigger
        if isinstance(trigger, TokensTrigger):
            return trigger.tokens
        if isinstance(trigger, PercentTrigger):
            return context_window * trigger.percent_of_window / 100
        reserve = trigger.reserve_tokens if isinstance(trigger, ReserveTrigger) else self.reserve_tokens
        return context_window - reserve

    def for_model(self, provider: str | None, model: str | None) -> "Compaction":
        """The settings of ``provider/model``: its ``model_overrides`` keys, these for the rest."""
        key = ModelRef(provider, model).key
        override = self.model_overrides.get(key) if key is not None else None
        if override is None:
            return self
        given = {name: getattr(override, name) for name in OVERRIDABLE if getattr(override, name) is not None}
        return self.model_copy(update=given) if given else self
