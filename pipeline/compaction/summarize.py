"""Running the summary calls of a plan (docs/pi-rules.md#summary-requests): the engine between plan and entry.

* not split: one history call (first summary, or update of the previous one);
* split turn: the history call (or ``summary.no_history`` without a call when there is
  no history), then the turn-prefix call, sequentially; the texts are joined with
  ``summary.split_turn_separator``; usage is summed;
* then the file lists are appended (tags from ``summary.tags``).

**Schema check** (history and branch summaries): an answer lacking the heading line of a
required section is handled per ``summary.on_schema_violation``:

* ``retry`` — one corrective call (``instructions.schema_retry``); if the answer still
  lacks a section, a warning is recorded and that answer is kept (losing the whole
  compaction over a missing heading would be worse than an imperfect summary);
* ``warn`` — no extra call; a warning is recorded and the answer kept;
* ``fail`` — one corrective call; if the answer still lacks a section the compaction
  fails and nothing is written.

Without ``instructions.schema_retry`` there is no corrective call (``retry`` behaves as
``warn``, ``fail`` fails at once). Any client with ``complete(request)`` works: the HTTP
clients of :mod:`pipeline.llm` and the offline summarizer alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

from pipeline.compaction.fileops import format_file_lists
from pipeline.compaction.plan import CompactionPlan
from pipeline.compaction.requests import (
    RequestContext,
    corrective_request,
    history_request,
    turn_prefix_request,
    user_requests,
)
from pipeline.compaction.summary_schema import missing_sections
from pipeline.compaction.validity import SummaryOutcome, invalid_problem, retry_request, verdict_of
from pipeline.errors import Problem, ProviderError
from pipeline.llm.errors import LLMError
from pipeline.llm.types import Completion, SummaryClient, SummaryRequest
from pipeline.model.summary import SchemaSection
from pipeline.session.projection import convert_to_llm
from pipeline.session.entries import FileLists
from pipeline.session.messages import Usage
from pipeline.model.run_plan import ContextTexts

Progress = Callable[[str], None]


class SummaryFailed(ProviderError):
    """A summary call failed, its answers were all invalid (``summary.validity``), or its answer
    broke the schema under ``on_schema_violation: fail``. ``outcomes``: the verdicts so far."""

    def __init__(self, problems, *, outcomes: tuple = (), **kwargs) -> None:
        super().__init__(problems, **kwargs)
        self.outcomes = outcomes


@dataclass(frozen=True)
class Summarized:
    """One summary text with its usage and the warnings it raised."""

    text: str
    usage: Usage
    warnings: tuple[Problem, ...] = ()
    outcomes: tuple[SummaryOutcome, ...] = ()


@dataclass(frozen=True)
class CompactionResult:
    """What the compaction entry stores (pi's ``CompactionResult``) plus warnings."""

    summary: str
    first_kept_entry_id: str
    tokens_before: int | float
    usage: Usage
    files: FileLists
    produced_by: str
    warnings: tuple[Problem, ...] = field(default=())
    outcomes: tuple[SummaryOutcome, ...] = field(default=())

    @property
    def details(self) -> dict[str, object]:
        """pi's ``details`` (``readFiles``, ``modifiedFiles``), plus ``producedBy`` for offline summaries."""
        return self.files.to_json(self.produced_by)


@dataclass(frozen=True)
class Call:
    """One planned call: the request, a label for progress and errors, the schema it must follow."""

    request: SummaryRequest
    label: str
    schema: tuple[SchemaSection, ...] = ()


def _complete(client: SummaryClient, call: Call) -> Completion:
    try:
        completion = client.complete(call.request)
    except LLMError as err:
        raise SummaryFailed(Problem(f"{call.label} failed: {err.message}", hint=err.problems[0].hint, code=err.code)) from None
    if completion.stop_reason in ("error", "aborted"):
        raise SummaryFailed(Problem(f"{call.label} failed: the model stopped with {completion.stop_reason}", code="provider.error"))
    return completion


def _violation(call: Call, missing: Sequence[str], mode: str) -> Problem:
    return Problem(
        f"{call.label}: the summary lacks required section(s) {', '.join(missing)}",
        key="summary.schema",
        severity="error" if mode == "fail" else "warning",
        code="provider.summary-schema",
    )


def _valid_complete(
    client: SummaryClient, call: Call, ctx: RequestContext, progress: Progress | None, outcomes: list
) -> tuple[Completion, Usage]:
    """A call whose answer passes ``summary.validity`` (retried as it says), with the usage of every attempt."""
    validity, request, usage = ctx.summary.validity, call.request, Usage()
    for attempt in range(1, validity.retries + 2):
        completion = _complete(client, Call(request, call.label, call.schema))
        usage = usage + completion.usage
        verdict = verdict_of(completion, validity)
        if verdict == "valid":
            return completion, usage
        final = attempt > validity.retries
        problem = invalid_problem(call.label, verdict, request, final=final)
        outcomes.append(SummaryOutcome(call.label, attempt, verdict, not final, problem))
        if final:
            raise SummaryFailed(problem, outcomes=tuple(outcomes))
        if progress is not None:
            progress(f"  {problem.message}…")
        request = retry_request(call.request, verdict, validity)
    raise AssertionError("unreachable")


def run_call(client: SummaryClient, call: Call, ctx: RequestContext, progress: Progress | None = None) -> Summarized:
    """One call with the validity and schema checks and, when the profile says so, retries."""
    outcomes: list[SummaryOutcome] = []
    completion, usage = _valid_complete(client, call, ctx, progress, outcomes)
    fmt, mode = ctx.summary.schema_format, ctx.summary.on_schema_violation
    missing = missing_sections(completion.text, call.schema, fmt)
    if not missing:
        outcomes.append(SummaryOutcome(call.label, len(outcomes) + 1, "valid"))
        return Summarized(completion.text, usage, (), tuple(outcomes))
    retry = corrective_request(call.request, missing, call.schema, ctx) if mode != "warn" else None
    if retry is not None:
        if progress is not None:
            progress(f"  the summary lacks {', '.join(missing)}; asking once more…")
        outcomes.append(SummaryOutcome(call.label, len(outcomes) + 1, "schema", True, _violation(call, missing, "retry")))
        completion, more = _valid_complete(client, Call(retry, f"{call.label} (corrective retry)", call.schema),
                                           ctx, progress, outcomes)
        usage = usage + more
        missing = missing_sections(completion.text, call.schema, fmt)
        if not missing:
            outcomes.append(SummaryOutcome(call.label, len(outcomes) + 1, "valid"))
            return Summarized(completion.text, usage, (), tuple(outcomes))
    problem = _violation(call, missing, mode)
    outcomes.append(SummaryOutcome(call.label, len(outcomes) + 1, "schema", False, problem))
    if mode == "fail":
        raise SummaryFailed(problem, outcomes=tuple(outcomes))
    return Summarized(completion.text, usage, (problem,), tuple(outcomes))


def plan_calls(
    plan: CompactionPlan, ctx: RequestContext, texts: ContextTexts, custom: str | None, note: str | None = None
) -> list[Call]:
    """The calls a compaction of ``plan`` makes, in order (history first, then the turn prefix).

    ``note`` (what is pinned, :mod:`pipeline.compaction.pins`) is appended to each request after a blank line."""
    calls = _calls(plan, ctx, texts, custom)
    if note is None:
        return calls
    return [replace(c, request=replace(c.request, user_text=c.request.user_text + "\n\n" + note)) for c in calls]


def _calls(plan: CompactionPlan, ctx: RequestContext, texts: ContextTexts, custom: str | None) -> list[Call]:
    calls = []
    split = plan.is_split_turn and bool(plan.turn_prefix)
    if plan.summarize or not split:
        messages = plan.messages_to_summarize
        request = history_request(
            convert_to_llm(messages, texts), ctx, previous_summary=plan.previous_summary,
            custom_instructions=custom, asked=user_requests(messages),
        )
        calls.append(Call(request, "summarizing history", ctx.summary.schema_))
    if split:
        messages = plan.turn_prefix_messages
        request = turn_prefix_request(
            convert_to_llm(messages, texts), ctx, asked=user_requests(messages), custom_instructions=custom
        )
        calls.append(Call(request, "summarizing the split turn's prefix"))
    return calls


def summarize_plan(
    plan: CompactionPlan,
    client: SummaryClient,
    ctx: RequestContext,
    texts: ContextTexts,
    *,
    custom_instructions: str | None = None,
    progress: Progress | None = None,
    note: str | None = None,
) -> CompactionResult:
    """Make the plan's calls and assemble the compaction summary (nothing is written)."""
    calls = plan_calls(plan, ctx, texts, custom_instructions, note)
    done = []
    for number, call in enumerate(calls, 1):
        if progress is not None:
            progress(f"{call.label} ({number}/{len(calls)})…")
        done.append(run_call(client, call, ctx, progress))
    text, usage = _merge(plan, done, ctx)
    lists = plan.file_lists
    return CompactionResult(
        summary=text + format_file_lists(lists, ctx.summary.tags),
        first_kept_entry_id=plan.first_kept_entry_id,
        tokens_before=plan.tokens_before,
        usage=usage,
        files=lists,
        produced_by=client.provider,
        warnings=tuple(w for d in done for w in d.warnings),
        outcomes=tuple(o for d in done for o in d.outcomes),
    )


def _merge(plan: CompactionPlan, done: list[Summarized], ctx: RequestContext) -> tuple[str, Usage]:
    if not (plan.is_split_turn and plan.turn_prefix):
        return done[0].text, done[0].usage
    history = done[0].text if plan.summarize else ctx.summary.no_history.render()
    prefix = done[-1]
    usage = sum((d.usage for d in done), Usage())
    return history + ctx.summary.split_turn_separator.render() + prefix.text, usage
