"""The ``system_prompt`` block: sections, rules, conditions, the tool catalog, caller
sections and the framing of section patches."""

from __future__ import annotations

import re
from typing import Annotated, Literal, Optional

from pydantic import Field, field_validator, model_validator

from pipeline.model.base import FrozenDict, Strict
from pipeline.model.render_plan import DEFAULT_CONTEXT_FILES, CallerRule
from pipeline.model.text import Text

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
    owner: Literal["agent", "team"] = Field(
        "team",
        description=(
            "whose text the section is: `agent` = part of the agent's own system prompt (pi's default in the"
            " built-in profiles), which an export to another agent leaves to that agent's own prompt (see"
            " `system_prompt.base`); `team` = the team's, exported where the agent reads project instructions"
        ),
    )
    folder: Optional[str] = Field(
        None,
        min_length=1,
        description=(
            "`pipeline export agents-md` only: the project sub-folder (`packages/api`, relative, written with `/`)"
            " whose own AGENTS.md holds this section, in the export's marked block there; default: the root's"
            " AGENTS.md. Other targets report it lost (the section is read in every folder); rendering does not read it"
        ),
    )
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
        return CallerRule(self.pattern, self.reserved, self.wrap).refusal(name)


class PatchTexts(Strict):
    """How a patch of named sections is framed for a model that reads it mid-conversation."""

    changed: Text = Field(description="opens a changed or added section (its text follows after a blank line)")
    removed: Text = Field(description="stands for a section that is no longer part of the prompt")
    separator: str = Field("\n\n", description="between the parts of the framed patch")


class SystemPrompt(Strict):
    base: Literal["agent", "profile"] = Field(
        "agent",
        description=(
            "what an export to an agent other than pi starts from: `agent` keeps that agent's own system prompt"
            " and tool guidance in place of the `owner: agent` sections and adds the team's sections where it"
            " reads project instructions; `profile` replaces the agent's whole prompt with every section of the"
            " profile (sections written for pi's tools are then reported as not matching the agent's tools)"
        ),
    )
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
