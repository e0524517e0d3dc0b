"""The profile language: typed, strict, frozen models and parsed texts.

Names are imported on first use: :mod:`pipeline.model.text` and
:mod:`pipeline.model.render_plan` define no pydantic model, so loading a render plan (the
cold start of ``pipeline render``) does not pay for defining the profile's classes.
"""

from __future__ import annotations

from pipeline.lazy import lazy_attributes

TYPE_CHECKING = False

_LAZY = {
    "BashExecutionTexts": "pipeline.model.runtime",
    "Compaction": "pipeline.model.compaction",
    "Context": "pipeline.model.runtime",
    "Profile": "pipeline.model.profile",
    "Retry": "pipeline.model.runtime",
    "Rule": "pipeline.model.prompt",
    "SchemaItem": "pipeline.model.summary",
    "SchemaSection": "pipeline.model.summary",
    "Section": "pipeline.model.prompt",
    "Summarizer": "pipeline.model.summary",
    "Summary": "pipeline.model.summary",
    "SystemPrompt": "pipeline.model.prompt",
    "Templates": "pipeline.model.templates",
    "Text": "pipeline.model.text",
    "Tool": "pipeline.model.prompt",
    "VARIABLE_TABLE": "pipeline.model.variables",
    "Var": "pipeline.model.text",
    "When": "pipeline.model.prompt",
    "variables_for": "pipeline.model.variables",
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
