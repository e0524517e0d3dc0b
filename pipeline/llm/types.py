"""Provider-neutral request and response of one summary call.

A :class:`SummaryRequest` is what the compaction engine asks for (one system prompt, one
user message, an output cap, an optional reasoning level); a :class:`Completion` is what
comes back, in pi's vocabulary (stop reasons, usage shape), whatever the wire format.
Any object with ``provider``, ``build_body`` and ``complete`` is a :class:`SummaryClient`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Mapping, Protocol, runtime_checkable

from pipeline.errors import did_you_mean
from pipeline.llm.errors import LLMConfigError
from pipeline.session.messages import Usage

StopReason = Literal["stop", "length", "toolUse", "error", "aborted"]

#: Reasoning levels a request may carry (pi's thinking levels); ``None`` and ``"off"`` mean none.
REASONING_LEVELS = ("minimal", "low", "medium", "high", "xhigh")
_OFF = (None, "off")


@dataclass(frozen=True, kw_only=True)
class SummaryRequest:
    """One summary call: a system prompt, one user message, an output cap.

    ``reasoning`` is one of :data:`REASONING_LEVELS`, or ``None``/``"off"`` for none;
    ``kind`` ("history", "turn_prefix", "branch", ...) is informational (logs only);
    an empty ``model`` means "the client's default model". Fields are keyword-only.
    The prompt texts are left out of ``repr`` (they can be very long).
    """

    system_prompt: str = field(repr=False)
    user_text: str = field(repr=False)
    max_tokens: int
    model: str = ""
    reasoning: str | None = None
    kind: str = "history"

    def __post_init__(self) -> None:
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            raise LLMConfigError(f"max_tokens must be a positive integer, got {self.max_tokens!r}")
        if self.reasoning not in _OFF and self.reasoning not in REASONING_LEVELS:
            raise LLMConfigError(
                f"unknown reasoning level {self.reasoning!r}; expected off or one of {', '.join(REASONING_LEVELS)}",
                hint=did_you_mean(str(self.reasoning), (*REASONING_LEVELS, "off")),
            )

    @property
    def reasoning_level(self) -> str | None:
        """The reasoning level to ask for, or ``None`` when reasoning is off."""
        return None if self.reasoning in _OFF else self.reasoning


@dataclass(frozen=True)
class Completion:
    """The model's answer: text blocks joined by ``"\\n"``, optional thinking, usage."""

    text: str
    usage: Usage
    stop_reason: StopReason
    model: str
    provider: str
    thinking: str | None = None


@runtime_checkable
class SummaryClient(Protocol):
    """What the compaction engine needs from a client (HTTP or offline)."""

    provider: str

    def build_body(self, request: SummaryRequest) -> Mapping[str, object]:
        """The exact request body the client would send (needs no key, sends nothing)."""
        ...

    def complete(self, request: SummaryRequest) -> Completion:
        """Send the request (with retries) and return the completion, or raise ``LLMError``."""
        ...
