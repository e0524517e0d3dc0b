"""The profile root: one block model per top-level key, each in its own module.

A profile is plain data. Every sentence the model sees is a :class:`~pipeline.model.text.Text`
field of the block models; every threshold pi hard-codes is a number there. The models check what one
field can check (types, ranges, enums); checks that span fields or need the variable
context of a field live in :mod:`pipeline.checks`. ``docs/profile.md`` documents every
key; ``pipeline schema`` prints the JSON Schema generated from these classes.
"""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import Field

from pipeline.model.base import Strict
from pipeline.model.compaction import Compaction
from pipeline.model.prompt import SystemPrompt
from pipeline.model.runtime import Context, Retry, Runtime
from pipeline.model.summary import Summarizer, Summary
from pipeline.model.templates import Templates


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
