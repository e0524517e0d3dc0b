"""The profile language: pydantic models, strict (``extra="forbid"``) and frozen.

A profile is plain data. Every sentence the model sees is a :class:`~pipeline.model.text.Text`
field here; every threshold pi hard-codes is a number here. The models check what one
field can check (types, ranges, enums); checks that span fields or need the variable
context of a field live in :mod:`pipeline.checks`. ``docs/profile.md`` documents every
key; ``pipeline schema`` prints the JSON Schema generated from these classes.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, NoReturn, Optional, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator, model_validator

from pipeline.agentdir import DEFAULT_AGENT_DIR
from pipeline.model.text import Text

#: Upper bounds of numbers (docs/profile.md, "Numbers"): far above any real model, low
#: enough that a stray digit is caught and every value stays exact in JSON (pi reads
#: numbers as JavaScript doubles).
MAX_TOKENS = 100_000_000  # token counts and windows
MAX_CHARS = 1_000_000_000  # character counts
MAX_COUNT = 10_000  # retries, items
MAX_CHARS_PER_TOKEN = 1_000
MAX_DELAY_MS = 3_600_000  # one hour
MAX_TIMEOUT_S = 86_400.0  # one day

#: Render inputs a section condition can test for presence.
InputName = Literal[
    "custom_prompt",
    "append_prompt",
    "context_files",
    "skills",
    "tool_guidelines",
    "caller_guidelines",
]

SectionKind = Literal[
    "text",
    "custom_prompt",
    "tool_list",
    "rules",
    "append_prompt",
    "context_files",
    "skills",
]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)


class FrozenDict(dict):
    """A dict that refuses changes: the one mapping a frozen profile holds stays frozen.

    It is still a ``dict`` (pydantic serializes it as one); copies and pickles rebuild it.
    """

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("this mapping belongs to a frozen profile and cannot be changed")

    __setitem__ = __delitem__ = __ior__ = _refuse  # type: ignore[assignment]
    clear = pop = popitem = setdefault = update = _refuse  # type: ignore[assignment]

    def __reduce__(self) -> tuple:
        return (FrozenDict, (dict(self),))

    def __copy__(self) -> "FrozenDict":
        return self

    def __deepcopy__(self, memo: dict) -> "FrozenDict":
        from copy import deepcopy

        return FrozenDict({key: deepcopy(value, memo) for key, value in self.items()})


# --------------------------------------------------------------------------- system prompt


class When(Strict):
    """A condition; every listed test must hold (an empty condition always holds)."""

    tools_include: tuple[str, ...] = Field((), description="every one of these tools is selected")
    tools_exclude: tuple[str, ...] = Field((), description="none of these tools is selected")
    present: tuple[InputName, ...] = Field((), description="every one of these inputs is present (non-empty)")
    absent: tuple[InputName, ...] = Field((), description="every one of these inputs is absent (empty)")
    selected_any: tuple[str, ...] = Field(
        (), description="at least one of these tools is selected, declared or hidden"
    )


class Rule(Strict):
    """One entry of a `rules` section: a fixed text, or the guidelines an input brings."""

    text: Optional[Text] = None
    from_: Optional[Literal["tool_guidelines", "caller_guidelines"]] = Field(None, alias="from")
    when: Optional[When] = None

    @model_validator(mode="after")
    def _one_source(self) -> "Rule":
        if (self.text is None) == (self.from_ is None):
            raise ValueError("a rule has exactly one of `text` or `from`")
        return self


class Section(Strict):
    """One block of the system prompt. Order in the list is output order.

    Layout: ``separator`` + ``open`` + (``heading`` + newline) + body + ``close``,
    where the body is ``text`` (kind ``text``), the caller's input (``custom_prompt``,
    ``append_prompt``) or the items joined by ``item_separator``. A list section with
    no items renders ``empty`` instead of its items, or is left out when ``empty`` is
    not set. The first rendered section drops its separator.
    """

    id: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.-]*$")
    name: Optional[str] = Field(
        None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_.-]*$",
        description=(
            "the section's name in the prompt's record of named sections (default: the id); sections sharing"
            " a name are alternatives: the first one that renders is that named section"
        ),
    )
    kind: SectionKind = "text"
    when: Optional[When] = None
    replaced_by_custom_prompt: bool = Field(
        False, description="left out when the caller gives a custom prompt"
    )
    separator: str = Field("\n\n", description="text between the previous rendered section and this one")
    open: Text = Text("")
    heading: Optional[Text] = None
    text: Optional[Text] = None
    item: Optional[Text] = None
    item_separator: str = "\n"
    empty: Optional[Text] = None
    close: Text = Text("")
    rules: tuple[Rule, ...] = ()
    escape: Literal["none", "xml"] = Field("none", description="escaping of inserted item values")
    wrap: Literal["none", "tag"] = Field(
        "none", description="`tag`: the rendered section is put between `<name>` + newline and newline + `</name>`"
    )
    snippets: Literal["one_line", "as_given"] = Field(
        "one_line",
        description=(
            "tool_list: `one_line` collapses a snippet's line breaks and space runs (blank ones are not listed);"
            " `as_given` inserts it unchanged (only empty ones are not listed)"
        ),
    )

    @property
    def record_name(self) -> str:
        """The section's name in the record of named sections."""
        return self.name or self.id


class Tool(Strict):
    """What the system prompt says about one tool the host may offer (its catalog entry)."""

    snippet: Optional[Text] = Field(None, description="one line for the tool list; no snippet = not listed")
    guidelines: tuple[Text, ...] = Field((), description="rules the tool brings while it is selected")
    description: Optional[Text] = Field(
        None, description="the tool's description in the model request (default: the snippet)"
    )


class CallerSections(Strict):
    """Named sections a caller brings (``RenderContext.sections``), and the rule their names follow."""

    pattern: str = Field(
        "[A-Za-z_][A-Za-z0-9_.-]*", description="a name must match this regular expression as a whole"
    )
    reserved: tuple[str, ...] = Field((), description="names a caller may not use")
    wrap: Literal["none", "tag"] = Field("none", description="`tag`: wrapped like a section with `wrap: tag`")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        try:
            re.compile(pattern)
        except re.error as err:
            raise ValueError(f"not a valid regular expression: {err}") from None
        return pattern

    def refusal(self, name: str) -> Optional[str]:
        """Why ``name`` is refused, or None when it is accepted."""
        if name in self.reserved:
            return "is reserved"
        if re.fullmatch(self.pattern, name) is None:
            return f"does not match the name rule {self.pattern}"
        return None


class PatchTexts(Strict):
    """How a patch of named sections is framed for a model that reads it mid-conversation."""

    changed: Text = Field(description="opens a changed or added section (its text follows after a blank line)")
    removed: Text = Field(description="stands for a section that is no longer part of the prompt")
    separator: str = Field("\n\n", description="between the parts of the framed patch")


#: pi's context-file names, tried in this order in each directory (the first that exists is used).
DEFAULT_CONTEXT_FILES = ("AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")


class SystemPrompt(Strict):
    context_file_names: tuple[Annotated[str, Field(min_length=1, pattern=r"^[^/\\]+$")], ...] = Field(
        DEFAULT_CONTEXT_FILES,
        description=(
            "project instruction files looked for in the agent directory and in every directory from the"
            " root down to the cwd; in each, the first name that exists is used"
        ),
    )
    default_tools: tuple[str, ...] = Field(
        ("read", "bash", "edit", "write"), description="tools selected when the caller names none"
    )
    tools: dict[str, Tool] = Field(
        default_factory=dict,
        description="tool catalog: snippet and guidelines per tool name, used when the host brings none",
    )
    sections: tuple[Section, ...] = ()
    join: Optional[str] = Field(
        None,
        description=(
            "when set: rendered sections are joined with this text and a section that renders empty is"
            " dropped; the sections' own `separator` is not used"
        ),
    )
    caller_sections: Optional[CallerSections] = Field(
        None, description="named sections a caller may add or put in place of a section of the same name"
    )
    patch: Optional[PatchTexts] = Field(None, description="framing of a mid-conversation section patch")

    @model_validator(mode="after")
    def _one_layout(self) -> "SystemPrompt":
        if self.join is not None:
            set_by_hand = [s.id for s in self.sections if "separator" in s.model_fields_set]
            if set_by_hand:
                raise ValueError(
                    f"`join` is set, so the sections' `separator` is not used: remove it from {', '.join(set_by_hand)}"
                )
        return self

    @field_validator("tools", mode="after")
    @classmethod
    def _read_only(cls, tools: dict[str, Tool]) -> dict[str, Tool]:
        """The catalog cannot be changed after validation (the profile is frozen)."""
        return FrozenDict(tools)


# --------------------------------------------------------------------------- templates

#: The template dialects a source may be read as (``pi`` is the default).
Dialect = Literal["pi", "claude-code", "opencode", "gemini", "codex"]
#: Bare ``templates.sources`` keywords: pi's two directories, then each dialect's own.
SOURCE_KEYWORDS = ("project", "global", "claude-code", "opencode", "gemini", "codex")


class DialectSource(Strict):
    """A template source read in another tool's dialect: ``{dialect: claude-code, path: x}``."""

    dialect: Dialect = Field(description="the tool whose file format and argument language the files use")
    path: Optional[str] = Field(
        None,
        description="a directory or file, relative to the profile file; none: the dialect's own directories",
    )


def _source_kind(value: Any) -> str:
    return "[dialect]" if isinstance(value, (dict, DialectSource)) else "[name]"


#: "global", "project", a dialect keyword, a path, or a {dialect, path} mapping (a mapping
#: is checked as one, a scalar as text, so an error names one expectation; the bracketed
#: tags are left out of key paths like pydantic's own)
TemplateSource = Annotated[
    Union[Annotated[str, Tag("[name]")], Annotated[DialectSource, Tag("[dialect]")]],
    Discriminator(_source_kind),
]


#: ``templates.global_dir`` that stands for pi's agent directory (``$PI_CODING_AGENT_DIR/prompts`` when set).
DEFAULT_GLOBAL_DIR = DEFAULT_AGENT_DIR + "/prompts"


class Templates(Strict):
    sources: tuple[TemplateSource, ...] = Field(
        ("project", "global"),
        description=(
            'where prompt templates come from: "project", "global", a dialect ("claude-code",'
            ' "opencode", "gemini", "codex"), paths, or {dialect, path}; order = precedence'
            " (the first template of a name wins)"
        ),
    )
    global_dir: str = Field(
        DEFAULT_GLOBAL_DIR,
        description="the user's template directory; the default follows $PI_CODING_AGENT_DIR when that is set",
    )
    project_dir: str = Field(".pi/prompts", description="the project's template directory, relative to the cwd")
    argument_splitting: Literal["pi-0.84", "pi-1.6"] = Field(
        "pi-0.84",
        description=(
            "how `/name args` is split into arguments: `pi-0.84` (quotes anywhere, no escapes, empty quotes give"
            " nothing) or `pi-1.6` (quotes only at a word's start, `\\` before the open quote, empty quotes give"
            " an empty argument, an unclosed quote is literal)"
        ),
    )


# --------------------------------------------------------------------------- compaction


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
    masking: Masking = Masking()
    pins: Pins = Pins()
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
        override = self.model_overrides.get(f"{provider}/{model}") if provider and model else None
        if override is None:
            return self
        given = {name: getattr(override, name) for name in OVERRIDABLE if getattr(override, name) is not None}
        return self.model_copy(update=given) if given else self


# --------------------------------------------------------------------------- retry


class Retry(Strict):
    """Retries of agent turns that end in a transient error (pi's ``retry`` settings)."""

    enabled: bool = Field(True, description="retry a turn that ended in a transient provider error")
    max_retries: int = Field(3, ge=0, le=MAX_COUNT, description="retries per turn before the error is reported")
    base_delay_ms: int = Field(
        2000, ge=0, le=MAX_DELAY_MS, description="wait before retry n: base_delay_ms * 2^(n-1)"
    )


# --------------------------------------------------------------------------- summary


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


# --------------------------------------------------------------------------- context conversion


class BashExecutionTexts(Strict):
    """How a user's own shell command (`!cmd`) is shown to the model."""

    ran: Text
    output: Text
    no_output: Text
    cancelled: Text
    exit_code: Text
    truncated: Text


class Context(Strict):
    bash_execution: BashExecutionTexts


# --------------------------------------------------------------------------- runtime


class SkillCommand(Strict):
    """How `/skill:name args` becomes the user message: open + the skill's body + close (+ args)."""

    open: Text
    close: Text
    args: Text = Field(description="appended when the command has arguments")


class ToolErrors(Strict):
    """Tool results the runtime writes itself (they are error results)."""

    unknown: Text = Field(description="a call of a tool that is not active")
    invalid_arguments: Text = Field(description="arguments that do not match the tool's schema")
    failed: Text = Field(description="a tool that raised an exception")


class WireTexts(Strict):
    """Texts the message conversion inserts where a provider needs one."""

    orphan_tool_result: Text = Field(description="the result of a tool call that got none")
    user_image_omitted: Text = Field(description="an image in a user message, for a model without image input")
    tool_image_omitted: Text = Field(description="an image in a tool result, for a model without image input")
    tool_image_only: Text = Field(description="a tool result with images and no text")
    empty_tool_output: Text = Field(description="a tool result with neither text nor images")
    tool_images_intro: Text = Field(description="the user message that carries tool-result images")


class ToolOutput(Strict):
    """Texts of the built-in read-only tools (read, ls, find, grep)."""

    not_found: Text
    not_a_file: Text
    not_a_directory: Text
    outside: Text = Field(description="a path outside the working directory")
    empty_directory: Text
    no_matches: Text
    invalid_pattern: Text
    truncated: Text = Field(description="appended when the output was cut")


class Runtime(Strict):
    """What the agent runtime (`pipeline run`, the conversation facade) writes or shows itself."""

    aborted: Text = Field(description="errorMessage recorded on a reply the user cancelled")
    skill: SkillCommand
    tool_errors: ToolErrors
    wire: WireTexts
    tool_output: ToolOutput


# --------------------------------------------------------------------------- summarizer


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


# --------------------------------------------------------------------------- profile


class Profile(Strict):
    """A whole, merged profile (after ``extends:`` is resolved)."""

    schema_ref: Optional[str] = Field(None, alias="$schema", description="editor hint; ignored")
    version: Literal[1] = 1
    name: str = Field(min_length=1)
    description: Optional[str] = None
    system_prompt: SystemPrompt
    templates: Templates = Templates.model_construct()
    compaction: Compaction = Compaction.model_construct()
    retry: Retry = Retry.model_construct()
    summary: Summary
    context: Context
    summarizer: Summarizer = Summarizer.model_construct()
    runtime: Optional[Runtime] = Field(None, description="texts of the agent runtime; required to run a conversation")
