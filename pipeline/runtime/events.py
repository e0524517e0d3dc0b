"""Typed events of a conversation and of the agent loop (frozen dataclasses).

The conversation emits the policy's events (retries, compactions, failures); the loop
adds run, request and tool events. ``event.to_json()`` (:func:`event_json`) gives the
``--json`` line of one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Optional, Union

if TYPE_CHECKING:
    from pipeline.compaction.driver import CompactionOutcome
    from pipeline.errors import Problem


@dataclass(frozen=True)
class _Event:
    """What every event has: its ``kind`` (a class attribute, not a field) and its JSON form."""

    kind: ClassVar[str]

    def to_json(self) -> dict[str, Any]:
        """``{"type": kind, ...fields}`` for a JSON line (``pipeline run --json``)."""
        return {"type": self.kind, **asdict(self)}


@dataclass(frozen=True)
class RunStart(_Event):
    text: str
    kind = "run_start"


@dataclass(frozen=True)
class RunEnd(_Event):
    """The run ended; ``answer`` is the last reply's text, ``stop_reason`` its stop reason."""

    answer: str
    stop_reason: Optional[str]
    kind = "run_end"


@dataclass(frozen=True)
class Request(_Event):
    """A model request is about to be sent (``index`` counts the run's requests from 0)."""

    index: int
    messages: int
    tools: tuple[str, ...]
    kind = "request"


@dataclass(frozen=True)
class Reply(_Event):
    stop_reason: Optional[str]
    error: Optional[str]
    kind = "reply"


@dataclass(frozen=True)
class TextDelta(_Event):
    """A piece of the answer text as it streams (from a client that streams text)."""

    text: str
    kind = "text_delta"


@dataclass(frozen=True)
class ToolStart(_Event):
    call_id: str
    name: str
    arguments: Any
    kind = "tool_start"


@dataclass(frozen=True)
class ToolEnd(_Event):
    call_id: str
    name: str
    is_error: bool
    kind = "tool_end"


@dataclass(frozen=True)
class CompactionStart(_Event):
    """``reason``: ``manual``, ``threshold`` or ``overflow``; ``tokens_before`` when known."""

    reason: str
    kind = "compaction_start"


@dataclass(frozen=True)
class CompactionEnd(_Event):
    """``entry_id``/``first_kept_entry_id``/``tokens_before``/``tokens_after`` of the compaction
    written (``None`` when nothing was compacted); ``tokens_after`` is pi's ``estimatedTokensAfter``,
    every message of the compacted context estimated from its characters (no usage anchors it);
    ``will_retry``: the request is sent again; ``error``: the compaction (or the recovery) failed;
    ``warnings``: the summary's problems the profile lets through (``Problem``s, e.g. a summary still
    missing required headings after the corrective retry, with ``summary.on_schema_violation: warn``)."""

    reason: str
    entry_id: Optional[str] = None
    first_kept_entry_id: Optional[str] = None
    tokens_before: Optional[float] = None
    tokens_after: Optional[float] = None
    will_retry: bool = False
    error: Optional[str] = None
    warnings: tuple[Problem, ...] = ()
    kind = "compaction_end"

    @classmethod
    def of(cls, reason: str, done: CompactionOutcome, after: Optional[float], will_retry: bool) -> "CompactionEnd":
        """The end of a compaction the driver carried out: its summary entry, else its mask entry."""
        entry, mask = done.entry, done.mask
        if entry is not None:
            return cls(reason, entry.id, entry.first_kept_entry_id, entry.tokens_before, after,
                       will_retry=will_retry, warnings=done.warnings)
        return cls(reason, done.mask_entry.id if done.mask_entry else None, None,
                   mask.tokens_before if mask else None, after, will_retry=will_retry)


@dataclass(frozen=True)
class RetryStart(_Event):
    """A transient error: retry ``attempt`` of ``max_attempts`` after ``delay_ms``."""

    attempt: int
    max_attempts: int
    delay_ms: float
    error: Optional[str]
    kind = "retry_start"


@dataclass(frozen=True)
class RetryEnd(_Event):
    success: bool
    attempt: int
    error: Optional[str] = None
    kind = "retry_end"


@dataclass(frozen=True)
class Failure(_Event):
    """The run ended in an error that the runtime could not recover from."""

    error: str
    kind = "failure"


Event = Union[RunStart, RunEnd, Request, Reply, TextDelta, ToolStart, ToolEnd, CompactionStart, CompactionEnd,
              RetryStart, RetryEnd, Failure]
Listener = Callable[[Event], None]


def event_json(event: Event) -> dict[str, Any]:
    """``{"type": kind, ...fields}`` for a JSON line (``event.to_json()``)."""
    return event.to_json()


__all__ = [
    "CompactionEnd", "CompactionStart", "Event", "Failure", "Listener", "Reply", "Request", "RetryEnd",
    "RetryStart", "RunEnd", "RunStart", "TextDelta", "ToolEnd", "ToolStart", "event_json",
]
