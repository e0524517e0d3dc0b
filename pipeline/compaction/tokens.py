"""Token accounting as pi 0.84.0 does it (docs/pi-rules.md#token-accounting), and pi 1.x's counting of recorded system messages.

* :func:`estimate_tokens`: one message, ``ceil(chars / chars_per_token)`` where chars are
  UTF-16 units counted per role, images charged ``image_chars``; :func:`text_tokens`, a text's;
* :func:`context_tokens`: the context size a provider's usage record reports;
* :func:`estimate_context`: a message list, anchored on the last usable usage record plus
  the estimates of the messages after it;
* :func:`should_compact`: the threshold test ``tokens > window - reserve``.

Messages are the session package's typed views (:mod:`pipeline.session.messages`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from pipeline.js import MISSING, js_json, js_truthy, u16len
from pipeline.model.run_plan import CompactionCheck, Estimating, Firing
from pipeline.session.entries import CompactionEntry
from pipeline.session.messages import (
    AgentMessage,
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    ContentBlock,
    CustomMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    SystemMessage,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pipeline.session.system import current_system_message, is_context_edit
from pipeline.session.system import is_system_message as is_system_message  # the planner reads it here

_DEFAULT = CompactionCheck()  # the block's defaults, as plain data


def _ceil_div(chars: int, per_token: int) -> int:
    return -(-chars // per_token)


def text_tokens(text: str, chars_per_token: int = _DEFAULT.chars_per_token) -> int:
    """A text's estimate by the same rule: ``ceil(len / chars_per_token)``, the length in UTF-16
    units (the prompt report's figure for a section and a whole prompt)."""
    return _ceil_div(u16len(text), chars_per_token)


def _text_len(value: object) -> int:
    return u16len(value) if isinstance(value, str) else 0


def content_chars(content: str | Sequence[ContentBlock], image_chars: int) -> int:
    """Characters of a user/custom/tool-result content: text lengths plus ``image_chars`` per image."""
    if isinstance(content, str):
        return u16len(content)
    chars = 0
    for block in content:
        if isinstance(block, TextContent):
            chars += u16len(block.text)
        elif isinstance(block, ImageContent):
            chars += image_chars
    return chars


def assistant_chars(content: Sequence[ContentBlock]) -> int:
    """Characters of an assistant content: text + thinking + each call's name and JSON arguments."""
    chars = 0
    for block in content:
        if isinstance(block, TextContent):
            chars += u16len(block.text)
        elif isinstance(block, ThinkingContent):
            chars += u16len(block.thinking)
        elif isinstance(block, ToolCall):
            chars += _text_len(block.name) + u16len(js_json(block.arguments))
    return chars


def message_chars(message: AgentMessage, image_chars: int = _DEFAULT.image_chars) -> int:
    """The character count pi's estimate uses for one message (0 for unknown roles)."""
    if isinstance(message, (UserMessage, CustomMessage, ToolResultMessage)):
        return content_chars(message.content, image_chars)
    if isinstance(message, AssistantMessage):
        return assistant_chars(message.content)
    if isinstance(message, BashExecutionMessage):
        return _text_len(message.command) + _text_len(message.output)
    if isinstance(message, (BranchSummaryMessage, CompactionSummaryMessage)):
        return _text_len(message.summary)
    return 0


def estimate_tokens(message: AgentMessage, settings: Estimating = _DEFAULT) -> int:
    """pi's ``estimateTokens``: ``ceil(chars / chars_per_token)``."""
    return _ceil_div(message_chars(message, settings.image_chars), settings.chars_per_token)


def context_tokens(usage: Usage) -> int | float:
    """pi's ``calculateContextTokens``: ``totalTokens``, or the sum of the parts when it is 0."""
    return usage.total_tokens or usage.input + usage.output + usage.cache_read + usage.cache_write


def usable_usage(message: AgentMessage) -> Usage | None:
    """The usage of an assistant reply that can anchor an estimate, else ``None``.

    Aborted and error replies and all-zero usage records do not count.
    """
    if not isinstance(message, AssistantMessage) or message.failed or message.usage is None:
        return None
    return message.usage if context_tokens(message.usage) > 0 else None


@dataclass(frozen=True)
class ContextEstimate:
    """pi's ``estimateContextTokens`` result."""

    tokens: int | float
    usage_tokens: int | float
    trailing_tokens: int
    last_usage_index: int | None

    def to_json(self) -> dict[str, object]:
        """The oracle's shape: ``{tokens, usageTokens, trailingTokens, lastUsageIndex}``."""
        return {
            "tokens": self.tokens,
            "usageTokens": self.usage_tokens,
            "trailingTokens": self.trailing_tokens,
            "lastUsageIndex": self.last_usage_index,
        }


def _last_anchor(messages: Sequence[AgentMessage]) -> tuple[int, Usage] | None:
    for index in range(len(messages) - 1, -1, -1):
        usage = usable_usage(messages[index])
        if usage is not None:
            return index, usage
    return None


def estimate_context(messages: Sequence[AgentMessage], settings: Estimating = _DEFAULT) -> ContextEstimate:
    """Context size of ``messages``: last usable usage + estimates of the messages after it
    (``settings.estimate_on: projection``: system messages counted, as pi 1.x does)."""
    count = projected_tokens if settings.estimate_on == "projection" else estimate_tokens
    anchor = _last_anchor(messages)
    if anchor is None:
        total = sum(count(m, settings) for m in messages)
        return ContextEstimate(total, 0, total, None)
    index, usage = anchor
    used = context_tokens(usage)
    trailing = sum(count(m, settings) for m in messages[index + 1 :])
    return ContextEstimate(used + trailing, used, trailing, index)


def context_tokens_newest_first(
    messages_newest_first: Iterable[AgentMessage], settings: Estimating = _DEFAULT
) -> int | float:
    """``estimate_context(messages).tokens`` for the messages given newest first; stops
    reading at the last usable usage (so older messages are never looked at)."""
    trailing = 0
    for message in messages_newest_first:
        usage = usable_usage(message)
        if usage is not None:
            return context_tokens(usage) + trailing
        trailing += estimate_tokens(message, settings)
    return trailing


def _json_content_chars(content: object, image_chars: int) -> int:
    """pi's ``estimateTextAndImageContentChars`` on JSON content (a string or a block list)."""
    if isinstance(content, str):
        return u16len(content)
    chars = 0
    for block in content if isinstance(content, list) else ():
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            chars += u16len(block["text"])
        elif kind == "image":
            chars += image_chars
    return chars


def system_message_tokens(message: SystemMessage, settings: Estimating = _DEFAULT) -> int:
    """pi 1.x's estimate of a recorded system message: content, every non-empty section
    text and the JSON of ``toolsAdded``. 0.84.0 counts such a message as 0."""
    chars = _json_content_chars(message.content, settings.image_chars)
    chars += sum(u16len(v) for v in message.sections.values() if isinstance(v, str))
    tools = message.raw.get("toolsAdded", MISSING)
    if js_truthy(tools):
        chars += u16len(js_json(tools))
    return _ceil_div(chars, settings.chars_per_token)


def projected_tokens(message: AgentMessage, settings: Estimating = _DEFAULT) -> int:
    """:func:`estimate_tokens` as pi 1.x counts it: system messages too."""
    if isinstance(message, SystemMessage):
        return system_message_tokens(message, settings)
    return estimate_tokens(message, settings)


def tokens_after_compaction(messages: Sequence[AgentMessage], settings: Estimating = _DEFAULT) -> int:
    """pi's ``estimatedTokensAfter``: the context after a compaction estimated message by
    message (no usage anchors it: every usage recorded before counts the summarized
    context). With ``estimate_on: projection`` (pi 1.x) system messages count too, as pi
    1.6.0 counts the messages of its projection."""
    count = projected_tokens if settings.estimate_on == "projection" else estimate_tokens
    return sum(count(m, settings) for m in messages)


def projected_context_tokens(projected: Sequence, path: Sequence, settings: Estimating = _DEFAULT) -> int | float:
    """pi 1.x's ``estimateProjectedContextTokens`` over a projection
    (:func:`pipeline.session.projection.project_path` of ``path``): the usage-anchored
    estimate, unless the reply holding that usage comes before the newest context edit or
    compaction on the path (its usage no longer describes the context); then every
    message is estimated, the system messages as their replay."""

    messages = [m for item in projected for m in item.messages]
    anchor = _last_anchor(messages)
    if anchor is not None:
        index, usage = anchor
        usage_entry = _entry_holding(projected, index)
        usage_at = next((i for i, e in enumerate(path) if e.id == usage_entry.id), -1)
        invalid_at = next(
            (i for i in range(len(path) - 1, -1, -1) if isinstance(path[i], CompactionEntry) or is_context_edit(path[i])),
            -1,
        )
        if usage_at > invalid_at:
            return context_tokens(usage) + sum(projected_tokens(m, settings) for m in messages[index + 1 :])
    replay = current_system_message(messages)
    tokens = system_message_tokens(SystemMessage(replay), settings) if replay is not None else 0
    return tokens + sum(estimate_tokens(m, settings) for m in messages if not isinstance(m, SystemMessage))


def _entry_holding(projected: Sequence, message_index: int):
    seen = 0
    for item in projected:
        seen += len(item.messages)
        if message_index < seen:
            return item.entry
    raise IndexError(message_index)


def should_compact(tokens: int | float, context_window: int, settings: Firing = _DEFAULT) -> bool:
    """pi's ``shouldCompact``: enabled and ``tokens > window - reserve`` (window 0 → always true),
    or the profile's ``compaction.trigger`` (:mod:`pipeline.compaction.triggers`)."""
    from pipeline.compaction.triggers import fires

    return fires(tokens, context_window, settings)
