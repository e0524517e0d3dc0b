"""The profile language: typed, strict, frozen models and parsed texts.

Names are imported on first use: :mod:`pipeline.model.text` and
:mod:`pipeline.model.render_plan` define no pydantic model, so loading a render plan (the
cold start of ``pipeline render``) does not pay for defining the profile's classes.
"""

from __future__ import annotations

from pipeline.lazy import lazy_attributes

TYPE_CHECKING = False

_LAZY = {
    **dict.fromkeys(("BashExecutionTexts", "Context", "Retry"), "runtime"),
    "Compaction": "compaction",
    "Profile": "profile",
    **dict.fromkeys(("Rule", "Section", "SystemPrompt", "Tool", "When"), "prompt"),
    **dict.fromkeys(("SchemaItem", "SchemaSection", "Summarizer", "Summary"), "summary"),
    "Templates": "templates",
    **dict.fromkeys(("Text", "Var"), "text"),
    **dict.fromkeys(("VARIABLE_TABLE", "variables_for"), "variables"),
}

if TYPE_CHECKING:  # pragma: no cover
    from pipeline.model.compaction import Compaction
    from pipeline.model.profile import Profile
    from pipeline.model.prompt import Rule, Section, SystemPrompt, Tool, When
    from pipeline.model.runtime import BashExecutionTexts, Context, Retry
    from pipeline.model.summary import SchemaItem, SchemaSection, Summarizer, Summary
    from pipeline.model.templates import Templates
    from pipeline.model.text import Text, Var
    from pipeline.model.variables import VARIABLE_TABLE, variables_for


__getattr__ = lazy_attributes(__name__, globals(), _LAZY)


__all__ = [
    "BashExecutionTexts",
    "Compaction",
    "Context",
    "Profile",
    "Retry",
    "Rule",
    "SchemaItem",
    "SchemaSection",
    "Section",
    "Summarizer",
    "Summary",
    "SystemPrompt",
    "Templates",
    "Text",
    "Tool",
    "VARIABLE_TABLE",
    "Var",
    "When",
    "variables_for",
]
