"""Running the summary calls of a plan (spec §7.4): the engine between plan and entry.

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

from dataclasses import dataclass, field
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
from pipeline.errors import Problem, ProviderError
from pipeline.llm.errors import LLMError
from pipeline.llm.types import Completion, SummaryClient, SummaryRequest
from pipeline.model.profile import SchemaSection
from pipeline.session.projection import convert_to_llm
from pipeline.session.entries import FileLists
from pipeline.session.messages import Usage
from pipeline.session.texts import ContextTexts

Progress = Callable[[str], None]


class SummaryFailed(ProviderError):
    """A summary call failed, or its answer broke the schema under ``on_schema_violation: fail``."""


@dataclass(frozen=True)
class Summarized:
    """One summary text with its usage and the warnings it raised."""

    text: str
    usage: Usage
    warnings: tuple[Problem, ...] = ()


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


def run_call(client: SummaryClient, call: Call, ctx: RequestContext, progress: Progress | None = None) -> Summarized:
    """One call with the schema check and, when the profile says so, one corrective retry."""
    completion = _complete(client, call)
    fmt, mode = ctx.summary.schema_format, ctx.summary.on_schema_violation
    missing = missing_sections(completion.text, call.schema, fmt)
    if not missing:
        return Summarized(completion.text, completion.usage)
    retry = corrective_request(call.request, missing, call.schema, ctx) if mode != "warn" else None
    usage = completion.usage
    if retry is not None:
        if progress is not None:
            progress(f"  the summary lacks {', '.join(missing)}; asking once more…")
        completion = _complete(client, Call(retry, f"{call.label} (corrective retry)", call.schema))
        usage = usage + completion.usage
        missing = missing_sections(completion.text, call.schema, fmt)
        if not missing:
            return Summarized(completion.text, usage)
    problem = _violation(call, missing, mode)
    if mode == "fail":
        raise SummaryFailed(problem)
    return Summarized(completion.text, usage, (problem,))


def plan_calls(plan: CompactionPlan, ctx: RequestContext, texts: ContextTexts, custom: str | None) -> list[Call]:
    """The calls a compaction of ``plan`` makes, in order (history first, then the turn prefix)."""
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
) -> CompactionResult:
    """Make the plan's calls and assemble the compaction summary (nothing is written)."""
    calls = plan_calls(plan, ctx, texts, custom_instructions)
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
    )


def _merge(plan: CompactionPlan, done: list[Summarized], ctx: RequestContext) -> tuple[str, Usage]:
    if not (plan.is_split_turn and plan.turn_prefix):
        return done[0].text, done[0].usage
    history = done[0].text if plan.summarize else ctx.summary.no_history.render()
    prefix = done[-1]
    usage = sum((d.usage for d in done), Usage())
    return history + ctx.summary.split_turn_separator.render() + prefix.text, usage
