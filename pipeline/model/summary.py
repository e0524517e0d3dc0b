"""The ``summary`` block (what a summary must contain and how it returns to the context)
and the ``summarizer`` block (the model that writes it)."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import Field

from pipeline.model.base import MAX_CHARS, MAX_COUNT, MAX_TIMEOUT_S, MAX_TOKENS, Strict
from pipeline.model.text import Text

class SchemaItem(Strict):
    heading: str = Field(min_length=1)
    guidance: Optional[Text] = None


class SchemaSection(Strict):
    heading: str = Field(min_length=1)
    guidance: Optional[Text] = None
    items: tuple[SchemaItem, ...] = ()
    required: bool = True


class SchemaFormat(Strict):
    section_prefix: str = "## "
    item_prefix: str = "### "


class Instructions(Strict):
    initial: Text
    update: Text
    turn_prefix: Text
    branch: Text
    custom_label: Text = Field(description="put before custom instructions: `\\n\\n<label>: <instructions>`")
    schema_retry: Optional[Text] = Field(
        None,
        description=(
            "appended (after a blank line) to a summary request whose answer missed required schema sections,"
            " for one corrective retry; `${missing}` = the missing heading lines joined by `, `,"
            " `${schema}` = the rendered schema. Without it there is no corrective retry."
        ),
    )


class Tags(Strict):
    conversation: str = "conversation"
    previous_summary: str = "previous-summary"
    read_files: str = "read-files"
    modified_files: str = "modified-files"


class Labels(Strict):
    """Markers of the serialized conversation the summarizer reads."""

    user: str = "[User]: "
    assistant: str = "[Assistant]: "
    thinking: str = "[Assistant thinking]: "
    tool_calls: str = "[Assistant tool calls]: "
    tool_result: str = "[Tool result]: "


OfflineSource = Literal["requests", "last_request", "tool_calls", "files_read", "files_modified", "notes"]


class OfflineFill(Strict):
    """What the offline summarizer writes under one heading.

    ``heading`` names a schema section (``Goal``) or an item (``Progress/Done``); for
    ``turn_prefix`` fills it is a free heading. ``sources``: ``requests`` (the user's
    messages), ``last_request`` (the last one), ``tool_calls`` (calls made, as
    ``name(args)``), ``files_read``/``files_modified`` (paths of read/write/edit calls),
    ``notes`` (the assistant's last text). On an update, a fill that uses ``last_request``
    replaces the previous summary's lines; the others add to them.
    """

    heading: str = Field(min_length=1)
    sources: tuple[OfflineSource, ...] = Field(min_length=1)
    item: Text = Field(Text("- ${text}"), description="one line; `${text}` = the value")
    max_items: int = Field(20, gt=0, le=MAX_COUNT, description="keep at most this many lines (the most recent)")


class Offline(Strict):
    """Fixed words and layout of the offline summarizer (the embedded default, no network)."""

    empty: Text = Field(description="written under a heading that has nothing to show")
    max_item_chars: int = Field(
        240, gt=0, le=MAX_CHARS, description="longer values are cut (UTF-16 units) and get `ellipsis`"
    )
    ellipsis: str = "…"
    fill: tuple[OfflineFill, ...] = ()
    turn_prefix: tuple[OfflineFill, ...] = Field(
        (), description="headings of a split turn's prefix summary; empty = the schema with `fill`"
    )


class Validity(Strict):
    """Answers that are never a summary: cut off at the output limit, calling a tool, or empty."""

    reject: tuple[Literal["length", "tool_call", "empty"], ...] = Field(
        ("length", "tool_call", "empty"), description="which kinds of answer are invalid"
    )
    retries: int = Field(1, ge=0, le=MAX_COUNT, description="calls made again after an invalid answer")
    retry_note: Optional[Text] = Field(
        None, description="appended (after a blank line) to the request of a retry; `${problem}` = what was wrong"
    )


class Wrapper(Strict):
    open: Text
    close: Text


class Projection(Strict):
    compaction: Wrapper
    branch: Wrapper


class Summary(Strict):
    system_prompt: Text
    schema_: tuple[SchemaSection, ...] = Field(alias="schema")
    branch_schema: tuple[SchemaSection, ...] = ()
    schema_format: SchemaFormat = SchemaFormat.model_construct()
    on_schema_violation: Literal["retry", "warn", "fail"] = "retry"
    validity: Validity = Field(default_factory=lambda: Validity())
    instructions: Instructions
    tags: Tags = Tags.model_construct()
    labels: Labels = Labels.model_construct()
    serialize_thinking: bool = Field(True, description="the summarizer's transcript shows the assistant's thinking")
    turn_prefix_request: Optional[Text] = Field(
        None,
        description=(
            "the user text of a split turn's prefix request: `${conversation}` = the serialized prefix,"
            " `${instructions}` = instructions.turn_prefix plus custom instructions; unset = the conversation"
            " block followed by instructions.turn_prefix (custom instructions not added)"
        ),
    )
    truncation_marker: Text = Field(description="after a cut tool result; `${count}` characters were cut")
    split_turn_separator: Text = Field(description="between the history summary and the turn-prefix summary")
    no_history: Text = Field(description="stands for the history summary when a split turn has no history")
    branch_empty: Text = Field(description="the branch summary when there is nothing to summarize")
    branch_preamble: Text
    projection: Projection
    offline: Optional[Offline] = Field(None, description="words of the offline summarizer; required to use it")


class Summarizer(Strict):
    provider: Literal["offline", "openai", "anthropic"] = "offline"
    model: Optional[str] = None
    base_url: Optional[str] = None
    api_key_env: Optional[str] = Field(None, description="the NAME of the environment variable holding the key")
    max_tokens: Optional[int] = Field(None, gt=0, le=MAX_TOKENS, description="the model's maximum output tokens")
    reasoning: bool = Field(
        False, description="the model supports reasoning: summaries ask for the session's thinking level"
    )
    reasoning_effort: Optional[Literal["off", "minimal", "low", "medium", "high", "xhigh"]] = Field(
        None, description="the summarizer's own thinking level instead of the session's (with `reasoning: true`)"
    )
    context_window: Optional[int] = Field(None, gt=0, le=MAX_TOKENS)
    timeout_s: float = Field(120.0, gt=0, le=MAX_TIMEOUT_S)
    max_retries: int = Field(3, ge=0, le=MAX_COUNT)
    call_deadline_s: float = Field(
        300.0, gt=0, le=86400, description="wall-clock limit of one summary call, every attempt and retry wait included"
    )
    compaction_deadline_s: float = Field(
        900.0, gt=0, le=86400, description="wall-clock limit of one whole compaction or branch summary"
    )
    max_response_bytes: int = Field(
        8 * 1024 * 1024, ge=1024, le=1024**3, description="a larger response body is refused, never read further"
    )
    max_chars_per_token: int = Field(
        16, ge=1, le=1000, description="a summary longer than its token budget times this, in characters, is refused"
    )
