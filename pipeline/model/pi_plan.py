"""The plan pi's extension reads: ``.pi/extensions/context-pipeline/profile.json``, typed.

``pipeline export pi`` writes it through :class:`PiPlan` (:mod:`pipeline.export.pi`),
``pipeline import pi`` reads it back through it (:mod:`pipeline.importers.exported`), and
the extension (``pipeline/export/pi_extension.js``) reads the same fields in JavaScript.
The JSON Schema of these models is shipped beside the extension's source as
``pipeline/export/pi_plan.schema.json`` (:func:`plan_schema_json`; a test holds the file
equal to the models).

Texts are either rendered strings, or *parts* when they keep variables the extension fills
at run time: a list of strings and ``{"var": name}``. Every field is written, ``null``
where the profile has no value; field order is the order the file is written in.
"""

from __future__ import annotations

import json
from typing import Literal, Optional, Union

from pydantic import Field

from pipeline.model.base import Strict
from pipeline.model.compaction import PercentTrigger, ReserveTrigger, TokensTrigger
from pipeline.model.prompt import SectionKind

#: the version of the plan's layout the extension reads
PLAN_VERSION: Literal[1] = 1


class Var(Strict):
    """A variable in a text's parts, filled by the extension (``{"var": "cwd"}``)."""

    var: str


#: a text that keeps its variables: strings and variables, in order (empty strings dropped)
Parts = list[Union[str, Var]]


class When(Strict):
    """A section's or rule's condition (``Condition`` of the render plan)."""

    tools_include: list[str]
    tools_exclude: list[str]
    present: list[str]
    absent: list[str]
    selected_any: list[str]


class Rule(Strict):
    text: Optional[Parts]
    from_: Optional[str] = Field(alias="from")
    when: Optional[When]


class Section(Strict):
    """One section of the render plan (``SectionPlan``)."""

    id: str
    name: Optional[str]
    kind: SectionKind
    when: Optional[When]
    replaced_by_custom_prompt: bool
    separator: str
    open: Parts
    heading: Optional[Parts]
    text: Optional[Parts]
    item: Optional[Parts]
    item_separator: str
    empty: Optional[Parts]
    close: Parts
    rules: list[Rule]
    escape: Literal["none", "xml"]
    wrap: Literal["none", "tag"]
    snippets: Literal["one_line", "as_given"]


class CallerSections(Strict):
    pattern: str
    reserved: list[str]
    wrap: Literal["none", "tag"]


class CatalogEntry(Strict):
    """A tool of the catalog, its texts rendered."""

    snippet: Optional[str]
    guidelines: list[str]


class Plan(Strict):
    """The render plan: what ``before_agent_start`` renders the system prompt from."""

    sections: list[Section]
    join: Optional[str]
    caller_sections: Optional[CallerSections]
    default_tools: list[str]
    catalog: dict[str, CatalogEntry]


class SchemaItem(Strict):
    heading: str
    guidance: Optional[str]


class SchemaSection(Strict):
    """A summary schema section as the profile wrote it (its texts' source), for ``pipeline import pi``."""

    heading: str
    guidance: Optional[str]
    items: list[SchemaItem]
    required: bool


class SchemaFormat(Strict):
    section_prefix: str
    item_prefix: str


class Validity(Strict):
    reject: list[Literal["length", "tool_call", "empty"]]
    retries: int = Field(ge=0)
    retry_note: Optional[Parts]


class Tags(Strict):
    conversation: str
    previous_summary: str
    read_files: str
    modified_files: str


class Labels(Strict):
    user: str
    assistant: str
    thinking: str
    tool_calls: str
    tool_result: str


class Budget(Strict):
    """A summary's output budget: ``history``/``turn_prefix`` shares of ``reserve_tokens``, or the model's."""

    history: float
    turn_prefix: float
    limit: Literal["reserve_share", "model"]
    reserve_tokens: int = Field(ge=0)


class Branch(Strict):
    """What ``session_before_tree`` needs: the branch request's texts, schema and budgets."""

    instructions: str
    schema_: str = Field(alias="schema")
    required_headings: list[str]
    preamble: str
    empty: str
    max_tokens: int = Field(gt=0)
    reserve_tokens: int = Field(ge=0)
    default_context_window: int = Field(gt=0)
    schema_sections: list[SchemaSection]


class Summary(Strict):
    """What ``session_before_compact`` needs: texts rendered where they take only the schema."""

    system_prompt: str
    schema_: str = Field(alias="schema")
    initial: str
    update: str
    turn_prefix: str
    turn_prefix_request: Optional[Parts]
    custom_label: str
    schema_retry: Optional[Parts]
    required_headings: list[str]
    schema_sections: list[SchemaSection]
    schema_format: SchemaFormat
    on_schema_violation: Literal["retry", "warn", "fail"]
    validity: Validity
    tags: Tags
    labels: Labels
    serialize_thinking: bool
    truncation_marker: Parts
    tool_result_max_chars: int = Field(ge=0)
    split_turn_separator: str
    no_history: str
    budget: Budget
    branch: Branch


#: one trigger, as the profile writes it (``compaction.trigger``)
Trigger = Union[ReserveTrigger, PercentTrigger, TokensTrigger]


class ModelRule(Strict):
    trigger: Optional[Trigger]
    reserve_tokens: Optional[int] = Field(ge=0)


class TriggerRule(Strict):
    """The profile's trigger rule, per model too (``Compaction.threshold``): the extension's ``threshold``."""

    trigger: Optional[Trigger]
    reserve_tokens: int = Field(ge=0)
    models: dict[str, ModelRule]


class Masking(Strict):
    """``mask_tool_results`` and ``hybrid``: the placeholder, and (hybrid) the trigger the masked context is tested against."""

    strategy: Literal["mask_tool_results", "hybrid"]
    placeholder: Parts
    rule: Optional[TriggerRule]


class PiPlan(Strict):
    """``profile.json``: the compiled profile pi's extension reads."""

    version: Literal[1]
    profile: str
    fingerprint: str
    plan: Plan
    summary: Summary
    trigger: Optional[TriggerRule] = Field(
        description="the profile's trigger when it is not pi's reserve rule (pi then asks at every turn); null otherwise"
    )
    masking: Optional[Masking] = Field(description="null when the strategy is summarize")

    def to_json(self) -> str:
        """The file's text, as the export writes it."""
        return json.dumps(self.model_dump(mode="json", by_alias=True), indent=1, ensure_ascii=False) + "\n"


def plan_schema() -> dict:
    """The JSON Schema of ``profile.json``."""
    schema = PiPlan.model_json_schema(by_alias=True, mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema,
            "title": "context-pipeline: the plan pi's extension reads (profile.json)"}


def plan_schema_json() -> str:
    """The schema as the shipped ``pipeline/export/pi_plan.schema.json`` holds it."""
    return json.dumps(plan_schema(), indent=2, ensure_ascii=False) + "\n"
