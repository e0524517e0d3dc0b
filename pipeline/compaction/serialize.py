"""The conversation as text for the summarizer (docs/pi-rules.md#serializing-for-the-summarizer), labels from the profile.

Input is the provider-level message list (after the session's ``convert_to_llm``):
user, assistant and tool-result messages. Parts are joined by a blank line:

* user → ``labels.user`` + its text (string, or text blocks concatenated); empty → left out;
* assistant → ``labels.thinking`` + thinking blocks joined by ``\\n`` (if any, and
  unless ``summary.serialize_thinking`` is false),
  ``labels.assistant`` + text blocks joined by ``\\n`` (if any text block, even empty),
  ``labels.tool_calls`` + calls joined by ``; `` as ``name(key=JSON, ...)``;
* tool result → ``labels.tool_result`` + its text, cut at ``tool_result_max_chars``
  UTF-16 units followed by ``truncation_marker`` (``${count}`` = characters cut).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from pipeline.js import MISSING, js_json, js_string, u16len, u16slice
from pipeline.model.summary import Labels
from pipeline.model.text import Text
from pipeline.session.messages import (
    AssistantMessage,
    ContentBlock,
    LlmMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)


@dataclass(frozen=True)
class SerializeOptions:
    """What the serialization takes from the profile."""

    labels: Labels
    truncation_marker: Text
    tool_result_max_chars: int
    thinking: bool = True  # thinking blocks are shown (``summary.serialize_thinking``)


def content_text(content: str | Sequence[ContentBlock], separator: str = "\n") -> str:
    """pi-ai's ``contentText``: a string as is, else the text blocks joined by ``separator``."""
    if isinstance(content, str):
        return content
    return separator.join(b.text for b in content if isinstance(b, TextContent))


def truncate(text: str, max_chars: int, marker: Text) -> str:
    """Keep the first ``max_chars`` UTF-16 units and add the marker with the count cut."""
    length = u16len(text)
    if length <= max_chars:
        return text
    return u16slice(text, 0, max_chars) + marker.render(count=str(length - max_chars))


def _argument_pairs(arguments: Any) -> Iterable[tuple[str, Any]]:
    """``Object.entries(arguments)`` for the JSON values a call can carry."""
    if isinstance(arguments, Mapping):
        return arguments.items()
    if isinstance(arguments, list):
        return ((str(i), v) for i, v in enumerate(arguments))
    if isinstance(arguments, str):
        return ((str(i), ch) for i, ch in enumerate(arguments))
    return ()


def format_call(call: ToolCall) -> str:
    """``name(key=JSON, key=JSON)``."""
    args = ", ".join(f"{key}={js_json(value)}" for key, value in _argument_pairs(call.arguments))
    return f"{js_string(call.raw.get('name', MISSING))}({args})"


def _assistant_parts(message: AssistantMessage, labels: Labels, show_thinking: bool = True) -> list[str]:
    thinking = [b.thinking for b in message.content if isinstance(b, ThinkingContent)] if show_thinking else []
    calls = [format_call(b) for b in message.content if isinstance(b, ToolCall)]
    parts = []
    if thinking:
        parts.append(labels.thinking + "\n".join(thinking))
    if any(isinstance(b, TextContent) for b in message.content):
        parts.append(labels.assistant + content_text(message.content))
    if calls:
        parts.append(labels.tool_calls + "; ".join(calls))
    return parts


def _message_parts(message: LlmMessage, options: SerializeOptions) -> list[str]:
    labels = options.labels
    if isinstance(message, UserMessage):
        text = content_text(message.content, "")
        return [labels.user + text] if text else []
    if isinstance(message, AssistantMessage):
        return _assistant_parts(message, labels, options.thinking)
    if isinstance(message, ToolResultMessage):
        text = content_text(message.content, "")
        if not text:
            return []
        cut = truncate(text, options.tool_result_max_chars, options.truncation_marker)
        return [labels.tool_result + cut]
    return []


def serialize_conversation(messages: Iterable[LlmMessage], options: SerializeOptions) -> str:
    """pi's ``serializeConversation`` with the profile's labels and truncation marker."""
    parts: list[str] = []
    for message in messages:
        parts.extend(_message_parts(message, options))
    return "\n\n".join(parts)
