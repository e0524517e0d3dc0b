"""Summary validity: answers that are never appended as if they were a summary.

An answer is **invalid** (``summary.validity.reject``) when the model stopped at its
output limit (``length``: the summary is cut off), asked for a tool (``tool_call``: a
summary request offers no tools, so the text is not the summary), or returned nothing but
whitespace (``empty``). An invalid answer is asked for again up to
``summary.validity.retries`` times (the request gets ``summary.validity.retry_note`` after
a blank line, ``${problem}`` = the kind); when every attempt is invalid the compaction
fails and nothing is written.

Every answer's verdict is a :class:`SummaryOutcome` (an event the engine returns and a
host can log); a rejected one also carries a located :class:`~pipeline.errors.Problem`
with a code of :mod:`pipeline.codes` (``provider.summary-length``,
``provider.summary-tool-call``, ``provider.summary-empty``; the schema check's is
``provider.summary-schema``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from pipeline.errors import Problem
from pipeline.llm.types import Completion, SummaryRequest
from pipeline.model.summary import Validity

Verdict = Literal["valid", "length", "tool_call", "empty", "schema"]

CODES: dict[str, str] = {
    "length": "provider.summary-length",
    "tool_call": "provider.summary-tool-call",
    "empty": "provider.summary-empty",
    "schema": "provider.summary-schema",
}

_WHAT = {
    "length": "the answer stopped at the output limit ({max_tokens} tokens), so the summary is cut off",
    "tool_call": "the answer calls a tool instead of being a summary",
    "empty": "the answer is empty",
}


@dataclass(frozen=True)
class SummaryOutcome:
    """The verdict on one answer: ``label`` (which call), ``attempt`` (1 = first), ``verdict``,
    ``retried`` (another call followed), and the problem for anything but ``valid``."""

    label: str
    attempt: int
    verdict: Verdict
    retried: bool = False
    problem: Problem | None = None

    @property
    def valid(self) -> bool:
        return self.verdict == "valid"

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"call": self.label, "attempt": self.attempt, "verdict": self.verdict,
                                  "retried": self.retried}
        if self.problem is not None:
            out["message"] = self.problem.message
            out["code"] = self.problem.code
        return out


def verdict_of(completion: Completion, validity: Validity) -> Verdict:
    """``valid``, or the first reason in ``validity.reject`` the answer hits."""
    hits = {
        "length": completion.stop_reason == "length",
        "tool_call": completion.stop_reason == "toolUse",
        "empty": not completion.text.strip(),
    }
    for kind in validity.reject:
        if hits[kind]:
            return kind  # type: ignore[return-value]
    return "valid"


def invalid_problem(label: str, verdict: Verdict, request: SummaryRequest, *, final: bool) -> Problem:
    """The located message for an invalid answer (an error when no retry is left)."""
    what = _WHAT[verdict].format(max_tokens=request.max_tokens)
    suffix = "; nothing was written" if final else "; asking again"
    return Problem(
        f"{label}: {what}{suffix}",
        key="summary.validity.reject",
        hint="raise the summary budget (compaction.reserve_tokens) or summary.validity.retries" if final else None,
        severity="error" if final else "warning",
        code=CODES[verdict],
    )


def retry_request(request: SummaryRequest, verdict: Verdict, validity: Validity) -> SummaryRequest:
    """The request of the next attempt: the same, plus ``retry_note`` when the profile has one."""
    if validity.retry_note is None:
        return request
    note = validity.retry_note.render(problem=verdict)
    return replace(request, user_text=request.user_text + "\n\n" + note)
