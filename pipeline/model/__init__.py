"""The profile language: typed, strict, frozen models and parsed texts."""

from pipeline.model.profile import (
    BashExecutionTexts,
    Compaction,
    Context,
    Profile,
    Rule,
    SchemaItem,
    SchemaSection,
    Section,
    Summarizer,
    Summary,
    SystemPrompt,
    Templates,
    When,
)
from pipeline.model.text import Text, Var

__all__ = [
    "BashExecutionTexts",
    "Compaction",
    "Context",
    "Profile",
    "Rule",
    "SchemaItem",
    "SchemaSection",
    "Section",
    "Summarizer",
    "Summary",
    "SystemPrompt",
    "Templates",
    "Text",
    "Var",
    "When",
]
