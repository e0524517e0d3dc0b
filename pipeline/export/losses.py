"""The compaction, summary and retry part of a target's loss report, as a table.

Each target states what becomes of every compaction, summary and retry setting in a table
of :class:`Row`: the profile key, how the agent receives it (``native``, ``extension``,
``lost``), where (the file or key) or why it is lost, and the conditions under which the
row applies (the profile's trigger, strategy, pins...). :func:`carried` reads a table
against a profile, in the table's order; the keys a target writes stay in its own code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal, Mapping, Sequence

from pipeline.export.base import Carried, How

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pipeline.model.profile import Profile

When = Literal["enabled", "disabled", "trigger", "reserve", "not_reserve", "percent", "other_trigger", "tokens",
               "per_model", "not_summarize", "masks", "summarizes", "hybrid", "placeholder", "pins", "summarizer"]


def _trigger(profile: "Profile") -> Any:
    return profile.compaction.trigger


def _reserve(profile: "Profile") -> bool:
    return _trigger(profile) is None or hasattr(_trigger(profile), "reserve_tokens")


def _percent(profile: "Profile") -> bool:
    return _trigger(profile) is not None and hasattr(_trigger(profile), "percent_of_window")


def _tokens(profile: "Profile") -> bool:
    from pipeline.model.compaction import TokensTrigger

    return isinstance(_trigger(profile), TokensTrigger)


def _pins(profile: "Profile") -> bool:
    pins = profile.compaction.pins
    return bool(pins.first_request or pins.messages or pins.files)


#: each condition a row may name, on the profile
CONDITIONS: Mapping[str, Callable[["Profile"], bool]] = {
    "enabled": lambda p: p.compaction.enabled is not False,
    "disabled": lambda p: p.compaction.enabled is False,
    "trigger": lambda p: _trigger(p) is not None,
    "reserve": _reserve,
    "not_reserve": lambda p: not _reserve(p),
    "percent": _percent,
    "other_trigger": lambda p: _trigger(p) is not None and not _percent(p),
    "tokens": _tokens,
    "per_model": lambda p: True,  # one row for each compaction.model_overrides entry
    "not_summarize": lambda p: p.compaction.strategy != "summarize",
    "masks": lambda p: p.compaction.strategy == "mask_tool_results",
    "summarizes": lambda p: p.compaction.strategy != "mask_tool_results",
    "hybrid": lambda p: p.compaction.strategy not in ("summarize", "mask_tool_results"),
    "placeholder": lambda p: p.compaction.masking.placeholder is not None,
    "pins": _pins,
    "summarizer": lambda p: p.summarizer.provider != "offline",
}

#: the summary request's settings, in the report's order
SUMMARY_KEYS = ("system_prompt", "instructions.initial", "instructions.update", "instructions.turn_prefix",
                "instructions.branch", "schema", "branch_schema", "on_schema_violation", "validity", "labels", "tags")


@dataclass(frozen=True)
class Row:
    """One setting of a target's table: ``where`` for native and extension, ``why`` for lost;
    both may name ``{fields}`` that :func:`carried` fills in (``{settings}``: the file)."""

    key: str
    how: How = "lost"
    where: str = ""
    why: str = ""
    when: tuple[When, ...] = ()


def lost(why: str, *keys: str, when: tuple[When, ...] = ()) -> tuple[Row, ...]:
    """The rows of several settings lost for one reason."""
    return tuple(Row(key, why=why, when=when) for key in keys)


def summary_lost(why: str, keys: Sequence[str] = SUMMARY_KEYS) -> tuple[Row, ...]:
    """``summary.KEY`` lost for one reason, for each of ``keys`` (all of them by default)."""
    return lost(why, *(f"summary.{key}" for key in keys))


def own_summary(agent: str) -> tuple[Row, ...]:
    """The summary settings an agent that writes its own summary request has no form for: the
    turn split, branch summaries and the checks of the summary."""
    return (Row("summary.instructions.turn_prefix", why=f"{agent} does not split turns"),
            *lost(f"{agent} has no branch summaries", "summary.instructions.branch", "summary.branch_schema"),
            Row("summary.on_schema_violation", why=f"nothing checks {agent}'s summary for the headings"),
            Row("summary.validity", why=f"nothing checks {agent}'s summary"))


def carried(profile: "Profile", rows: Sequence[Row], **fields: str) -> list[Carried]:
    """The report of ``rows`` whose conditions all hold for ``profile``, in order; a
    ``per_model`` row once for each model override, its key ending in the model's id."""
    out: list[Carried] = []
    for row in rows:
        if not all(CONDITIONS[name](profile) for name in row.when):
            continue
        keys = [f"{row.key}.{m}" for m in profile.compaction.model_overrides] if "per_model" in row.when else [
            row.key]
        out += [Carried(key, row.how, row.where.format(**fields), row.why.format(**fields)) for key in keys]
    return out
