"""The profile language: typed, strict, frozen models and parsed texts."""

from pipeline.model.compaction import Compaction
from pipeline.model.profile import Profile
from pipeline.model.prompt import Rule, Section, SystemPrompt, Tool, When
from pipeline.model.runtime import BashExecutionTexts, Context, Retry
from pipeline.model.summary import SchemaItem, SchemaSection, Summarizer, Summary
from pipeline.model.templates import Templates
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
