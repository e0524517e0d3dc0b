"""Summary requests, built only from the profile (docs/pi-rules.md#summary-requests, docs/pi-rules.md#branch-summaries).

Every request is one system prompt (``summary.system_prompt``) and one user text:

* history: ``<conversation>`` block, the previous summary in its tag when there is one,
  then ``instructions.initial`` or ``instructions.update`` (``${schema}`` = the rendered
  ``summary.schema``), then ``\\n\\n<custom_label>: <custom instructions>`` when given;
  output budget ``floor(summary_budget.history · reserve_tokens)`` capped by the model's
  maximum (``summarizer.max_tokens``);
* turn prefix (split turn): ``<conversation>`` block + ``instructions.turn_prefix``,
  budget ``summary_budget.turn_prefix``;
* branch: ``<conversation>`` block + ``instructions.branch`` (``${schema}`` = the branch
  schema) + custom instructions (or the custom instructions alone when they replace the
  profile's), budget ``compaction.branch.max_tokens`` (the model's maximum under
  ``summary_budget.limit: model``), never reasoning;
* corrective retry: the original user text + blank line + ``instructions.schema_retry``.

Texts are rendered here; the tags come from ``summary.tags``. Nothing is cached: each
request is a new, independent call. Every request is a :class:`ConversationRequest`:
besides what is sent it carries ``user_requests``, the texts of the conversation's
genuine user messages (compaction and branch summaries, extension messages and
``!command`` runs become user messages for the model, but are nobody's request); the
offline summarizer reads them, HTTP clients send only the request fields.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from pipeline.compaction.summary_schema import render_schema
from pipeline.compaction.serialize import SerializeOptions, content_text, serialize_conversation
from pipeline.llm.types import SummaryRequest
from pipeline.model.compaction import Compaction
from pipeline.model.summary import SchemaSection, Summary
from pipeline.session.messages import AgentMessage, LlmMessage, UserMessage


@dataclass(frozen=True, kw_only=True)
class ConversationRequest(SummaryRequest):
    """A summary request that knows which parts of its conversation the user typed.

    ``user_requests``: the texts of the genuine user messages (role ``user`` before
    ``convert_to_llm``), in order, as the serialized conversation shows them; ``None``
    when unknown (then every user part of the conversation counts as one).
    """

    user_requests: tuple[str, ...] | None = field(default=None, repr=False)


def user_requests(messages: Iterable[AgentMessage]) -> tuple[str, ...]:
    """The texts of the genuine user messages among agent messages (before ``convert_to_llm``)."""
    texts = (content_text(m.content, "") for m in messages if isinstance(m, UserMessage))
    return tuple(text for text in texts if text)


@dataclass(frozen=True)
class RequestContext:
    """Everything a request needs besides the messages: the profile's texts and budgets."""

    summary: Summary
    compaction: Compaction
    model: str = ""
    max_output_tokens: int | None = None
    reasoning: str | None = None

    @property
    def serialize_options(self) -> SerializeOptions:
        """Labels, truncation marker and cut length for the conversation text."""
        return SerializeOptions(
            labels=self.summary.labels,
            truncation_marker=self.summary.truncation_marker,
            tool_result_max_chars=self.compaction.tool_result_max_chars,
            thinking=self.summary.serialize_thinking,
        )

    @property
    def branch_schema(self) -> tuple[SchemaSection, ...]:
        """The schema a branch summary follows (the main schema when none is set)."""
        return self.summary.branch_schema or self.summary.schema_


def output_budget(fraction: float, reserve_tokens: int, model_max: int | None, limit: str = "reserve_share") -> int:
    """``min(floor(fraction · reserve), model_max)`` (the cap only when it is set and > 0); with
    ``limit="model"`` the model's own maximum when it is known (the share stands in when not)."""
    if limit == "model" and model_max:
        return model_max
    budget = math.floor(fraction * reserve_tokens)
    return min(budget, model_max) if model_max else budget


def conversation_block(messages: Sequence[LlmMessage], ctx: RequestContext) -> str:
    """``<conversation>\\n{serialized}\\n</conversation>\\n\\n`` with the profile's tag."""
    tag = ctx.summary.tags.conversation
    text = serialize_conversation(messages, ctx.serialize_options)
    return f"<{tag}>\n{text}\n</{tag}>\n\n"


def _with_custom(instructions: str, custom: str | None, ctx: RequestContext) -> str:
    if not custom:
        return instructions
    return f"{instructions}\n\n{ctx.summary.instructions.custom_label.render()}: {custom}"


def history_request(
    messages: Sequence[LlmMessage],
    ctx: RequestContext,
    *,
    previous_summary: str | None = None,
    custom_instructions: str | None = None,
    asked: tuple[str, ...] | None = None,
) -> ConversationRequest:
    """The history summary: a first summary, or an update of ``previous_summary``.

    ``asked``: the genuine user requests among ``messages`` (:func:`user_requests`)."""
    texts = ctx.summary.instructions
    schema = render_schema(ctx.summary.schema_, ctx.summary.schema_format)
    user = conversation_block(messages, ctx)
    if previous_summary:
        tag = ctx.summary.tags.previous_summary
        user += f"<{tag}>\n{previous_summary}\n</{tag}>\n\n"
    base = (texts.update if previous_summary else texts.initial).render(schema=schema)
    user += _with_custom(base, custom_instructions, ctx)
    shares = ctx.compaction.summary_budget
    budget = output_budget(shares.history, ctx.compaction.reserve_tokens, ctx.max_output_tokens, shares.limit)
    return _request(ctx, user, budget, reasoning=ctx.reasoning, kind="history", asked=asked)


def turn_prefix_request(
    messages: Sequence[LlmMessage], ctx: RequestContext, *, asked: tuple[str, ...] | None = None,
    custom_instructions: str | None = None,
) -> ConversationRequest:
    """The split turn's prefix summary: ``summary.turn_prefix_request`` when the profile sets it
    (custom instructions added to the instructions), else the conversation block + instructions."""
    frame = ctx.summary.turn_prefix_request
    instructions = ctx.summary.instructions.turn_prefix.render()
    if frame is None:
        user = conversation_block(messages, ctx) + instructions
    else:
        conversation = serialize_conversation(messages, ctx.serialize_options)
        user = frame.render(conversation=conversation, instructions=_with_custom(instructions, custom_instructions, ctx))
    shares = ctx.compaction.summary_budget
    budget = output_budget(shares.turn_prefix, ctx.compaction.reserve_tokens, ctx.max_output_tokens, shares.limit)
    return _request(ctx, user, budget, reasoning=ctx.reasoning, kind="turn_prefix", asked=asked)


def branch_request(
    messages: Sequence[LlmMessage],
    ctx: RequestContext,
    *,
    custom_instructions: str | None = None,
    replace_instructions: bool = False,
    asked: tuple[str, ...] | None = None,
) -> ConversationRequest:
    """A branch summary; custom instructions are added, or replace the profile's when asked."""
    if replace_instructions and custom_instructions:
        instructions = custom_instructions
    else:
        schema = render_schema(ctx.branch_schema, ctx.summary.schema_format)
        base = ctx.summary.instructions.branch.render(schema=schema)
        instructions = _with_custom(base, custom_instructions, ctx)
    user = conversation_block(messages, ctx) + instructions
    budget = ctx.compaction.branch.max_tokens
    if ctx.compaction.summary_budget.limit == "model" and ctx.max_output_tokens:
        budget = ctx.max_output_tokens
    return _request(ctx, user, budget, reasoning=None, kind="branch", asked=asked)


def corrective_request(
    request: SummaryRequest, missing: Sequence[str], sections: Sequence[SchemaSection], ctx: RequestContext
) -> SummaryRequest | None:
    """The retry of ``request`` asking for the ``missing`` headings (``None``: the profile has no text)."""
    text = ctx.summary.instructions.schema_retry
    if text is None:
        return None
    schema = render_schema(sections, ctx.summary.schema_format)
    extra = text.render(missing=", ".join(missing), schema=schema)
    user = f"{request.user_text}\n\n{extra}"
    asked = getattr(request, "user_requests", None)
    kind = f"{request.kind}_retry"
    return _request(ctx, user, request.max_tokens, reasoning=request.reasoning, kind=kind, asked=asked)


def _request(
    ctx: RequestContext, user: str, budget: int, *, reasoning: str | None, kind: str, asked: tuple[str, ...] | None
) -> ConversationRequest:
    return ConversationRequest(
        system_prompt=ctx.summary.system_prompt.render(),
        user_text=user,
        max_tokens=budget,
        model=ctx.model,
        reasoning=reasoning,
        kind=kind,
        user_requests=asked,
    )

