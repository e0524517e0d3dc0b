"""The profile language: typed, strict, frozen models and parsed texts."""

from pipeline.model.profile import (
    BashExecutionTexts,
    Compaction,
    Context,
    Profile,
    Retry,
    Rule,
    SchemaItem,
    SchemaSection,
    Section,
    Summarizer,
    Summary,
    SystemPrompt,
    Templates,
    Tool,
    When,
)
from pipeline.model.text import Text, Var
from pipeline.model.variables import VARIABLE_TABLE, variables_for

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
