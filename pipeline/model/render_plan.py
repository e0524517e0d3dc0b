"""The render plan: what rendering the system prompt reads of a profile, as plain data.

A :class:`RenderPlan` holds exactly the parts of ``system_prompt`` that
:mod:`pipeline.prompt` reads to render a prompt and gather its inputs: the sections (with
their conditions and rules), the layout (``join``), the rule for caller sections, the
default tools, the tool catalog and the context-file names. It is made of frozen
dataclasses, tuples and :class:`~pipeline.model.text.Text` values, none of them pydantic
models, so a plan loaded from the compiled-profile cache renders without defining the
profile's model classes (the cold start of ``pipeline render``).

:meth:`RenderPlan.of` is the one place a plan is made from a profile; the renderer reads
only plans (a :class:`~pipeline.model.profile.Profile` given to it is planned first), so there
is one renderer whichever way the plan was obtained.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Any, Optional

from pipeline.model.text import Text

#: pi's context-file names, tried in this order in each directory (the first that exists is used).
DEFAULT_CONTEXT_FILES = ("AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD")

_EMPTY = Text("")


@dataclass(frozen=True)
class Condition:
    """A section's or rule's ``when``: every listed test must hold."""

    tools_include: tuple[str, ...] = ()
    tools_exclude: tuple[str, ...] = ()
    present: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    selected_any: tuple[str, ...] = ()


@dataclass(frozen=True)
class RulePlan:
    """One entry of a ``rules`` section: ``text``, or the guidelines ``from_`` names."""

    text: Optional[Text] = None
    from_: Optional[str] = None
    when: Optional[Condition] = None


@dataclass(frozen=True)
class SectionPlan:
    """One section, with the fields of :class:`~pipeline.model.prompt.Section` the renderer reads."""

    id: str
    name: Optional[str] = None
    kind: str = "text"
    when: Optional[Condition] = None
    replaced_by_custom_prompt: bool = False
    separator: str = "\n\n"
    open: Text = _EMPTY
    heading: Optional[Text] = None
    text: Optional[Text] = None
    item: Optional[Text] = None
    item_separator: str = "\n"
    empty: Optional[Text] = None
    close: Text = _EMPTY
    rules: tuple[RulePlan, ...] = ()
    escape: str = "none"
    wrap: str = "none"
    snippets: str = "one_line"

    @property
    def record_name(self) -> str:
        """The section's name in the record of named sections."""
        return self.name or self.id


@dataclass(frozen=True)
class CallerRule:
    """``system_prompt.caller_sections``: which names a caller's sections may have, and their wrap."""

    pattern: str
    reserved: tuple[str, ...] = ()
    wrap: str = "none"

    def refusal(self, name: str) -> Optional[str]:
        """Why ``name`` is refused, or None when it is accepted."""
        if name in self.reserved:
            return "is reserved"
        if re.fullmatch(self.pattern, name) is None:
            return f"does not match the name rule {self.pattern}"
        return None


@dataclass(frozen=True)
class CatalogEntry:
    """One tool of the catalog (``system_prompt.tools``): its snippet, guidelines and the
    description a request declares it with (read by the runtime, not by the renderer)."""

    name: str
    snippet: Optional[Text] = None
    guidelines: tuple[Text, ...] = ()
    description: Optional[Text] = None


@dataclass(frozen=True)
class RenderPlan:
    """What rendering a profile's system prompt reads (see the module's docstring)."""

    sections: tuple[SectionPlan, ...] = ()
    join: Optional[str] = None
    caller_sections: Optional[CallerRule] = None
    default_tools: tuple[str, ...] = ()
    catalog: tuple[CatalogEntry, ...] = ()
    context_file_names: tuple[str, ...] = DEFAULT_CONTEXT_FILES

    @classmethod
    def of(cls, system_prompt: Any) -> "RenderPlan":
        """The plan of a validated ``system_prompt`` block (:class:`~pipeline.model.prompt.SystemPrompt`)."""
        rule = system_prompt.caller_sections
        return cls(
            sections=tuple(_section(s) for s in system_prompt.sections),
            join=system_prompt.join,
            caller_sections=None if rule is None else CallerRule(rule.pattern, tuple(rule.reserved), rule.wrap),
            default_tools=tuple(system_prompt.default_tools),
            catalog=tuple(CatalogEntry(name, t.snippet, tuple(t.guidelines), t.description)
                          for name, t in system_prompt.tools.items()),
            context_file_names=tuple(system_prompt.context_file_names),
        )


_SECTION_FIELDS = tuple(f.name for f in fields(SectionPlan) if f.name not in ("when", "rules"))
_CONDITION_FIELDS = tuple(f.name for f in fields(Condition))


def _condition(when: Any) -> Optional[Condition]:
    return None if when is None else Condition(**{name: tuple(getattr(when, name)) for name in _CONDITION_FIELDS})


def _section(section: Any) -> SectionPlan:
    rules = tuple(RulePlan(r.text, r.from_, _condition(r.when)) for r in section.rules)
    return SectionPlan(**{name: getattr(section, name) for name in _SECTION_FIELDS},
                       when=_condition(section.when), rules=rules)
