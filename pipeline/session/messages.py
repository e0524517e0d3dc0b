"""Typed views of pi's agent messages and their content blocks (spec §2.1).

Every model keeps ``raw``, the JSON object exactly as read (key order and unknown
fields included), so writing a message back with :func:`pipeline.js.js_json`
reproduces pi's bytes. The typed fields are read from ``raw`` leniently: pi never
validates session files, so a field of the wrong JSON type reads as ``None`` (or an
empty tuple) here while ``raw`` keeps the original value. New messages are built with
the ``create`` constructors, which lay keys out in the order pi writes them.

Treat ``raw`` as read-only: models are frozen and share it with the loaded file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Mapping, Union

from pipeline.js import MISSING, js_object, num_at, str_at

Raw = Mapping[str, Any]


def _bool(d: Raw, key: str) -> bool:
    return d.get(key) is True


# The typed views are built for every entry of a file (100,000 and more), so the hot
# constructors read several keys per call instead of calling one helper per key.


def _strings(d: Raw, keys: tuple[str, ...]) -> list[str | None]:
    """``d[key]`` for each key when it is a string, else None (as :func:`str_at`)."""
    return [v if isinstance(v, str) else None for v in map(d.get, keys)]


def _counts(d: Raw, keys: tuple[str, ...]) -> list[int | float]:
    """``d[key]`` for each key when it is a JSON number (not a boolean), else 0 (``num_at(...) or 0``)."""
    return [v if isinstance(v, (int, float)) and not isinstance(v, bool) and v else 0 for v in map(d.get, keys)]


def _opt(value: Any) -> Any:
    """``None`` means "leave the key out" in ``create`` constructors."""
    return MISSING if value is None else value


# --------------------------------------------------------------------------- blocks


@dataclass(frozen=True, slots=True, kw_only=True)
class TextContent:
    """``{"type": "text", "text": ...}``."""

    text: str
    raw: Raw
    type: ClassVar[str] = "text"

    @classmethod
    def from_json(cls, d: Raw) -> "TextContent":
        text = d.get("text")
        return cls(text=text if isinstance(text, str) and text else "", raw=d)

    @classmethod
    def create(cls, text: str) -> "TextContent":
        return cls.from_json({"type": "text", "text": text})


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingContent:
    """``{"type": "thinking", "thinking": ..., "thinkingSignature"?, "redacted"?}``."""

    thinking: str
    signature: str | None
    redacted: bool
    raw: Raw
    type: ClassVar[str] = "thinking"

    @classmethod
    def from_json(cls, d: Raw) -> "ThinkingContent":
        thinking, signature = _strings(d, ("thinking", "thinkingSignature"))
        return cls(thinking=thinking or "", signature=signature, redacted=d.get("redacted") is True, raw=d)


@dataclass(frozen=True, slots=True, kw_only=True)
class ImageContent:
    """``{"type": "image", "data": base64, "mimeType": ...}``."""

    data: str
    mime_type: str | None
    raw: Raw
    type: ClassVar[str] = "image"

    @classmethod
    def from_json(cls, d: Raw) -> "ImageContent":
        return cls(data=str_at(d, "data") or "", mime_type=str_at(d, "mimeType"), raw=d)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """``{"type": "toolCall", "id", "name", "arguments"}`` inside an assistant message."""

    id: str | None
    name: str | None
    arguments: Any
    raw: Raw
    type: ClassVar[str] = "toolCall"

    @classmethod
    def from_json(cls, d: Raw) -> "ToolCall":
        id, name = _strings(d, ("id", "name"))
        return cls(id=id, name=name, arguments=d.get("arguments"), raw=d)


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownBlock:
    """A block of a type pi 0.84.0 does not define (or not an object at all); kept as is."""

    block_type: str | None
    raw: Any
    type: ClassVar[str] = "unknown"


ContentBlock = Union[TextContent, ThinkingContent, ImageContent, ToolCall, UnknownBlock]
_BLOCKS = {"text": TextContent, "thinking": ThinkingContent, "image": ImageContent, "toolCall": ToolCall}


def parse_block(d: Any) -> ContentBlock:
    """One content block from its JSON object."""
    if not isinstance(d, dict):
        return UnknownBlock(block_type=None, raw=d)
    kind = d.get("type")
    if not isinstance(kind, str):
        return UnknownBlock(block_type=None, raw=d)
    cls = _BLOCKS.get(kind)
    return cls.from_json(d) if cls else UnknownBlock(block_type=kind, raw=d)


def parse_content(value: Any) -> str | tuple[ContentBlock, ...]:
    """``content``: a string, or a list of blocks (anything else reads as no blocks)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return tuple(map(parse_block, value))
    return ()


def _content_json(content: str | tuple[ContentBlock, ...]) -> Any:
    return content if isinstance(content, str) else [b.raw for b in content]


# --------------------------------------------------------------------------- usage


@dataclass(frozen=True, slots=True)
class Cost:
    """``usage.cost`` in dollars."""

    input: int | float = 0
    output: int | float = 0
    cache_read: int | float = 0
    cache_write: int | float = 0
    total: int | float = 0

    @classmethod
    def from_json(cls, d: Raw) -> "Cost":
        """Read leniently: a key that is not a JSON number counts 0."""
        return cls(*_counts(d, _COST_KEYS))

    def to_json(self) -> dict[str, int | float]:
        """pi's JSON: ``{input, output, cacheRead, cacheWrite, total}``."""
        return dict(zip(_COST_KEYS, (self.input, self.output, self.cache_read, self.cache_write, self.total)))

    def __add__(self, other: "Cost") -> "Cost":
        if not isinstance(other, Cost):
            return NotImplemented
        return Cost(self.input + other.input, self.output + other.output, self.cache_read + other.cache_read,
                    self.cache_write + other.cache_write, self.total + other.total)


_COST_KEYS = ("input", "output", "cacheRead", "cacheWrite", "total")
_USAGE_KEYS = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one LLM call (an assistant message, a compaction or a branch summary,
    a summary call's completion) or, summed with ``+``, of several."""

    input: int | float = 0
    output: int | float = 0
    cache_read: int | float = 0
    cache_write: int | float = 0
    total_tokens: int | float = 0
    cost: Cost | None = None

    @classmethod
    def of(cls, input: int, output: int, cache_read: int = 0, cache_write: int = 0) -> "Usage":
        """Usage with ``total_tokens`` computed as pi does: the sum of the four counts."""
        return cls(input, output, cache_read, cache_write, input + output + cache_read + cache_write)

    @classmethod
    def from_json(cls, d: Any) -> "Usage | None":
        """Read leniently (a count that is not a JSON number is 0); None when ``d`` is not an object."""
        if not isinstance(d, dict):
            return None
        cost = d.get("cost")
        return cls(*_counts(d, _USAGE_KEYS), cost=Cost.from_json(cost) if isinstance(cost, dict) else None)

    def to_json(self) -> dict[str, Any]:
        """pi's JSON: ``{input, output, cacheRead, cacheWrite, totalTokens, cost}``; no cost
        known is written as all zeros (summary calls report none)."""
        counts = (self.input, self.output, self.cache_read, self.cache_write, self.total_tokens)
        return {**dict(zip(_USAGE_KEYS, counts)), "cost": (self.cost or Cost()).to_json()}

    def __add__(self, other: "Usage") -> "Usage":
        if not isinstance(other, Usage):
            return NotImplemented
        cost = None if self.cost is None and other.cost is None else (self.cost or Cost()) + (other.cost or Cost())
        return Usage(self.input + other.input, self.output + other.output, self.cache_read + other.cache_read,
                     self.cache_write + other.cache_write, self.total_tokens + other.total_tokens, cost)


# --------------------------------------------------------------------------- messages


@dataclass(frozen=True, slots=True, kw_only=True)
class UserMessage:
    """``role: "user"``: text or text/image blocks."""

    content: str | tuple[ContentBlock, ...]
    timestamp: int | float | None
    raw: Raw
    role: ClassVar[str] = "user"

    @classmethod
    def from_json(cls, d: Raw) -> "UserMessage":
        return cls(content=parse_content(d.get("content")), timestamp=num_at(d, "timestamp"), raw=d)

    @classmethod
    def create(cls, content: str | tuple[ContentBlock, ...] | list, timestamp: int | float | None) -> "UserMessage":
        blocks = content if isinstance(content, str) else tuple(content)
        raw = js_object([("role", "user"), ("content", _content_json(blocks)), ("timestamp", _opt(timestamp))])
        return cls.from_json(raw)


_ASSISTANT_STRINGS = ("api", "provider", "model", "stopReason", "errorMessage")


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantMessage:
    """``role: "assistant"``: text, thinking and tool-call blocks plus provider metadata."""

    content: tuple[ContentBlock, ...]
    api: str | None
    provider: str | None
    model: str | None
    usage: Usage | None
    stop_reason: str | None
    error_message: str | None
    timestamp: int | float | None
    raw: Raw
    role: ClassVar[str] = "assistant"

    @classmethod
    def from_json(cls, d: Raw) -> "AssistantMessage":
        content = parse_content(d.get("content"))
        api, provider, model, stop_reason, error_message = _strings(d, _ASSISTANT_STRINGS)
        return cls(
            content=() if isinstance(content, str) else content,
            api=api, provider=provider, model=model, usage=Usage.from_json(d.get("usage")),
            stop_reason=stop_reason, error_message=error_message, timestamp=num_at(d, "timestamp"), raw=d,
        )

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(b for b in self.content if isinstance(b, ToolCall))

    @property
    def failed(self) -> bool:
        """True for ``stopReason`` ``error`` or ``aborted`` (the provider layer drops these)."""
        return self.stop_reason in ("error", "aborted")


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultMessage:
    """``role: "toolResult"``: the output of one tool call."""

    tool_call_id: str | None
    tool_name: str | None
    content: tuple[ContentBlock, ...]
    is_error: bool
    timestamp: int | float | None
    raw: Raw
    role: ClassVar[str] = "toolResult"

    @classmethod
    def from_json(cls, d: Raw) -> "ToolResultMessage":
        content = parse_content(d.get("content"))
        tool_call_id, tool_name = _strings(d, ("toolCallId", "toolName"))
        return cls(
            tool_call_id=tool_call_id, tool_name=tool_name, content=() if isinstance(content, str) else content,
            is_error=d.get("isError") is True, timestamp=num_at(d, "timestamp"), raw=d,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class BashExecutionMessage:
    """``role: "bashExecution"``: a user ``!command`` and its output (pi's own role)."""

    command: str | None
    output: str | None
    exit_code: int | float | None
    cancelled: bool
    truncated: bool
    full_output_path: str | None
    exclude_from_context: bool
    timestamp: int | float | None
    raw: Raw
    role: ClassVar[str] = "bashExecution"

    @classmethod
    def from_json(cls, d: Raw) -> "BashExecutionMessage":
        return cls(
            command=str_at(d, "command"), output=str_at(d, "output"), exit_code=num_at(d, "exitCode"),
            cancelled=_bool(d, "cancelled"), truncated=_bool(d, "truncated"),
            full_output_path=str_at(d, "fullOutputPath"),
            exclude_from_context=_bool(d, "excludeFromContext"), timestamp=num_at(d, "timestamp"), raw=d,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class CustomMessage:
    """``role: "custom"``: an extension's message for the model (``hookMessage`` before v3)."""

    custom_type: str | None
    content: str | tuple[ContentBlock, ...]
    display: bool
    details: Any
    timestamp: int | float | None
    raw: Raw
    role: ClassVar[str] = "custom"

    @classmethod
    def from_json(cls, d: Raw) -> "CustomMessage":
        return cls(
            custom_type=str_at(d, "customType"), content=parse_content(d.get("content")),
            display=_bool(d, "display"), details=d.get("details"), timestamp=num_at(d, "timestamp"), raw=d,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class BranchSummaryMessage:
    """``role: "branchSummary"``: what a ``branch_summary`` entry projects to."""

    summary: str | None
    from_id: str | None
    timestamp: int | float | None
    raw: Raw
    role: ClassVar[str] = "branchSummary"

    @classmethod
    def from_json(cls, d: Raw) -> "BranchSummaryMessage":
        return cls(summary=str_at(d, "summary"), from_id=str_at(d, "fromId"), timestamp=num_at(d, "timestamp"), raw=d)


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionSummaryMessage:
    """``role: "compactionSummary"``: what a ``compaction`` entry projects to."""

    summary: str | None
    tokens_before: int | float | None
    timestamp: int | float | None
    raw: Raw
    role: ClassVar[str] = "compactionSummary"

    @classmethod
    def from_json(cls, d: Raw) -> "CompactionSummaryMessage":
        return cls(
            summary=str_at(d, "summary"), tokens_before=num_at(d, "tokensBefore"),
            timestamp=num_at(d, "timestamp"), raw=d,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownMessage:
    """A message whose role pi 0.84.0 does not know; kept, never sent to the model."""

    message_role: str | None
    raw: Raw
    role: ClassVar[str] = "unknown"

    @property
    def timestamp(self) -> Any:
        return self.raw.get("timestamp")


AgentMessage = Union[
    UserMessage, AssistantMessage, ToolResultMessage, BashExecutionMessage,
    CustomMessage, BranchSummaryMessage, CompactionSummaryMessage, UnknownMessage,
]
#: What :func:`pipeline.session.projection.convert_to_llm` returns.
LlmMessage = Union[UserMessage, AssistantMessage, ToolResultMessage]

_ROLES: dict[str, Any] = {
    cls.role: cls
    for cls in (
        UserMessage, AssistantMessage, ToolResultMessage, BashExecutionMessage,
        CustomMessage, BranchSummaryMessage, CompactionSummaryMessage,
    )
}


def message_role(d: Raw) -> str:
    """The ``role`` of the view :func:`parse_message` builds, without building it
    (``"unknown"`` for a role pi 0.84.0 does not define)."""
    role = d.get("role")
    return role if isinstance(role, str) and role in _ROLES else UnknownMessage.role


def parse_message(d: Raw) -> AgentMessage:
    """The typed view of one message object (dispatch on ``role``)."""
    role = d.get("role")
    cls = _ROLES.get(role) if isinstance(role, str) else None
    if cls is None:
        return UnknownMessage(message_role=role if isinstance(role, str) else None, raw=d)
    return cls.from_json(d)
