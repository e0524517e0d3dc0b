"""What the wire converters take: the target model, its cost, tools, the texts pi inserts, OpenAI compat."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

JSON = dict[str, Any]



@dataclass(frozen=True, kw_only=True)
class ModelCost:
    """Dollars per million tokens."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0


@dataclass(frozen=True, kw_only=True)
class TargetModel:
    """The model a request goes to (what pi's ``Model`` says about it)."""

    id: str
    provider: str
    api: str
    reasoning: bool = False
    input: tuple[str, ...] = ("text", "image")
    max_tokens: int = 32000
    cost: ModelCost = field(default_factory=ModelCost)


@dataclass(frozen=True, kw_only=True)
class ToolDefinition:
    """A tool as the model sees it: name, description, JSON schema of the arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True)
class ConvertTexts:
    """Texts the conversion inserts where pi inserts its own (all required: they come from a profile)."""

    orphan_tool_result: str  # result of a tool call that has none
    user_image_omitted: str  # an image in a user message, for a model without image input
    tool_image_omitted: str  # an image in a tool result, for a model without image input
    tool_image_only: str  # a tool result with images and no text
    empty_tool_output: str  # a tool result with neither (OpenAI)
    tool_images_intro: str  # the user message carrying tool-result images (OpenAI)


@dataclass(frozen=True, kw_only=True)
class OpenAICompat:
    """How a chat-completions server differs (pi's defaults for a standard server)."""

    supports_developer_role: bool = True
    supports_store: bool = True
    supports_strict_mode: bool = True
    supports_reasoning_effort: bool = True
    max_tokens_field: Literal["max_completion_tokens", "max_tokens"] = "max_completion_tokens"
    requires_tool_result_name: bool = False


def _raw(message: Any) -> Mapping[str, Any]:
    return message.raw if hasattr(message, "raw") else message


def _tool_json(tool: ToolDefinition | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(tool, ToolDefinition):
        return {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    return tool


_LONE_SURROGATE = re.compile(r"[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")


def _clean(text: str) -> str:
    """Unpaired surrogates removed (providers reject them)."""
    return _LONE_SURROGATE.sub("", text)


def _blocks(content: Any) -> list:
    return content if isinstance(content, list) else []


