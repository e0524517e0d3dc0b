"""Typed views of pi's agent messages and their content blocks (docs/pi-rules.md#messages).

Every view holds only ``raw``, the JSON object exactly as read (key order and unknown
fields included), so writing a message back with :func:`pipeline.js.js_json`
reproduces pi's bytes; its typed fields are properties read from ``raw`` when asked
for (content blocks and usage are built once, then kept), so projecting 100,000
messages builds 100,000 small objects and nothing more. Fields are read leniently: pi never
validates session files, so a field of the wrong JSON type reads as ``None`` (or an
empty tuple) here while ``raw`` keeps the original value. New messages are built with
the ``create`` constructors, which lay keys out in the order pi writes them.

Treat ``raw`` as read-only: models are frozen and share it with the loaded file.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass
from typing import Any, ClassVar, Mapping, Protocol, Union

from pipeline.js import MISSING, js_object, num_at, str_at

Raw = Mapping[str, Any]


def _bool(d: Raw, key: str) -> bool:
    return d.get(key) is True


def _counts(d: Raw, keys: tuple[str, ...]) -> list[int | float]:
    """``d[key]`` for each key when it is a JSON number (not a boolean), else 0 (``num_at(...) or 0``)."""
    return [v if isinstance(v, (int, float)) and not isinstance(v, bool) and v else 0 for v in map(d.get, keys)]


def _opt(value: Any) -> Any:
    """``None`` means "leave the key out" in ``create`` constructors."""
    return MISSING if value is None else value


# --------------------------------------------------------------------------- views


class _View:
    """A read-only typed view of one JSON object (``raw``): every field is read from it
    when asked for (content blocks and usage once, then kept), so building a view costs
    one small object. Views compare by class and ``raw``."""

    __slots__ = ()
    type: ClassVar[str]
    raw: Any

    @classmethod
    def from_json(cls, d: Any):
        return cls(d)

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    __delattr__ = __setattr__  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.raw == other.raw  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]  # views hold mappings

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.raw!r})"

    def _keep(self, name: str, value: Any) -> Any:
        object.__setattr__(self, name, value)
        return value


class _Block(_View):
    __slots__ = ("raw",)

    def __init__(self, raw: Any) -> None:
        object.__setattr__(self, "raw", raw)


_new = object.__new__
_set = object.__setattr__


# --------------------------------------------------------------------------- blocks


class TextContent(_Block):
    """``{"type": "text", "text": ...}``."""

    __slots__ = ()
    type: ClassVar[str] = "text"

    @property
    def text(self) -> str:
        text = self.raw.get("text")
        return text if isinstance(text, str) and text else ""

    @classmethod
    def create(cls, text: str) -> "TextContent":
        return cls({"type": "text", "text": text})


class ThinkingContent(_Block):
    """``{"type": "thinking", "thinking": ..., "thinkingSignature"?, "redacted"?}``."""

    __slots__ = ()
    type: ClassVar[str] = "thinking"

    @property
    def thinking(self) -> str:
        return str_at(self.raw, "thinking") or ""

    @property
    def signature(self) -> str | None:
        return str_at(self.raw, "thinkingSignature")

    @property
    def redacted(self) -> bool:
        return self.raw.get("redacted") is True


class ImageContent(_Block):
    """``{"type": "image", "data": base64, "mimeType": ...}``."""

    __slots__ = ()
    type: ClassVar[str] = "image"

    @property
    def data(self) -> str:
        return str_at(self.raw, "data") or ""

    @property
    def mime_type(self) -> str | None:
        return str_at(self.raw, "mimeType")


class ToolCall(_Block):
    """``{"type": "toolCall", "id", "name", "arguments"}`` inside an assistant message."""

    __slots__ = ()
    type: ClassVar[str] = "toolCall"

    @property
    def id(self) -> str | None:
        return str_at(self.raw, "id")

    @property
    def name(self) -> str | None:
        return str_at(self.raw, "name")

    @property
    def arguments(self) -> Any:
        return self.raw.get("arguments")


class UnknownBlock(_Block):
    """A block of a type pi 0.84.0 does not define (or not an object at all); kept as is."""

    __slots__ = ()
    type: ClassVar[str] = "unknown"

    @property
    def block_type(self) -> str | None:
        kind = self.raw.get("type") if isinstance(self.raw, dict) else None
        return kind if isinstance(kind, str) else None


ContentBlock = Union[TextContent, ThinkingContent, ImageContent, ToolCall, UnknownBlock]
_BLOCKS = {"text": TextContent, "thinking": ThinkingContent, "image": ImageContent, "toolCall": ToolCall}


def parse_block(d: Any) -> ContentBlock:
    """One content block from its JSON object."""
    kind = d.get("type") if isinstance(d, dict) else None
    cls = _BLOCKS.get(kind) if isinstance(kind, str) else None
    return (cls or UnknownBlock)(d)


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


class RawSource(Protocol):
    """Where a message view reads its object when it was made before reading it (a
    session entry read from a file: :class:`pipeline.session.entries.MessageEntry`)."""

    def message_json(self) -> Any: ...


class _Message(_View):
    """A message view: built on its object, or on where to read it (:meth:`lazy`)."""

    __slots__ = ("_raw", "_source", "_content", "_usage")  # each set when first known
    role: ClassVar[str]
    _blocks_only: ClassVar[bool] = False

    def __init__(self, raw: Any) -> None:
        object.__setattr__(self, "_raw", raw)

    @classmethod
    def lazy(cls, source: RawSource) -> Any:
        """A view whose object is read from ``source`` when first needed (then kept)."""
        view = _new(cls)
        _set(view, "_source", source)
        return view

    @property
    def raw(self) -> Any:
        try:
            return self._raw
        except AttributeError:
            return self._keep("_raw", self._source.message_json())

    def peek_raw(self) -> Any:
        """``raw`` without keeping it when it still has to be read (one pass over many messages)."""
        try:
            return self._raw
        except AttributeError:
            return self._source.message_json()

    @property
    def timestamp(self) -> int | float | None:
        return num_at(self.raw, "timestamp")


class _WithContent(_Message):
    """A message with ``content`` (read once, then kept)."""

    __slots__ = ()

    @property
    def content(self) -> Any:
        try:
            return self._content
        except AttributeError:
            content = parse_content(self.raw.get("content"))
            if self._blocks_only and isinstance(content, str):
                content = ()
            return self._keep("_content", content)


class UserMessage(_WithContent):
    """``role: "user"``: text or text/image blocks."""

    __slots__ = ()
    role: ClassVar[str] = "user"
    content: str | tuple[ContentBlock, ...]

    @classmethod
    def create(cls, content: str | tuple[ContentBlock, ...] | list, timestamp: int | float | None) -> "UserMessage":
        blocks = content if isinstance(content, str) else tuple(content)
        return cls(js_object([("role", "user"), ("content", _content_json(blocks)), ("timestamp", _opt(timestamp))]))


class AssistantMessage(_WithContent):
    """``role: "assistant"``: text, thinking and tool-call blocks plus provider metadata."""

    __slots__ = ()
    role: ClassVar[str] = "assistant"
    _blocks_only: ClassVar[bool] = True
    content: tuple[ContentBlock, ...]

    api = property(lambda self: str_at(self.raw, "api"))
    provider = property(lambda self: str_at(self.raw, "provider"))
    model = property(lambda self: str_at(self.raw, "model"))
    stop_reason = property(lambda self: str_at(self.raw, "stopReason"))
    error_message = property(lambda self: str_at(self.raw, "errorMessage"))

    @property
    def usage(self) -> "Usage | None":
        try:
            return self._usage
        except AttributeError:
            return self._keep("_usage", Usage.from_json(self.raw.get("usage")))

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(b for b in self.content if isinstance(b, ToolCall))

    @property
    def failed(self) -> bool:
        """True for ``stopReason`` ``error`` or ``aborted`` (the provider layer drops these)."""
        return self.raw.get("stopReason") in ("error", "aborted")


class ToolResultMessage(_WithContent):
    """``role: "toolResult"``: the output of one tool call."""

    __slots__ = ()
    role: ClassVar[str] = "toolResult"
    _blocks_only: ClassVar[bool] = True
    content: tuple[ContentBlock, ...]

    tool_call_id = property(lambda self: str_at(self.raw, "toolCallId"))
    tool_name = property(lambda self: str_at(self.raw, "toolName"))
    is_error = property(lambda self: self.raw.get("isError") is True)


class BashExecutionMessage(_Message):
    """``role: "bashExecution"``: a user ``!command`` and its output (pi's own role)."""

    __slots__ = ()
    role: ClassVar[str] = "bashExecution"

    command = property(lambda self: str_at(self.raw, "command"))
    output = property(lambda self: str_at(self.raw, "output"))
    exit_code = property(lambda self: num_at(self.raw, "exitCode"))
    cancelled = property(lambda self: _bool(self.raw, "cancelled"))
    truncated = property(lambda self: _bool(self.raw, "truncated"))
    full_output_path = property(lambda self: str_at(self.raw, "fullOutputPath"))
    exclude_from_context = property(lambda self: _bool(self.raw, "excludeFromContext"))


class CustomMessage(_WithContent):
    """``role: "custom"``: an extension's message for the model (``hookMessage`` before v3)."""

    __slots__ = ()
    role: ClassVar[str] = "custom"
    content: str | tuple[ContentBlock, ...]

    custom_type = property(lambda self: str_at(self.raw, "customType"))
    display = property(lambda self: _bool(self.raw, "display"))
    details = property(lambda self: self.raw.get("details"))


class BranchSummaryMessage(_Message):
    """``role: "branchSummary"``: what a ``branch_summary`` entry projects to."""

    __slots__ = ()
    role: ClassVar[str] = "branchSummary"

    summary = property(lambda self: str_at(self.raw, "summary"))
    from_id = property(lambda self: str_at(self.raw, "fromId"))


class CompactionSummaryMessage(_Message):
    """``role: "compactionSummary"``: what a ``compaction`` entry projects to."""

    __slots__ = ()
    role: ClassVar[str] = "compactionSummary"

    summary = property(lambda self: str_at(self.raw, "summary"))
    tokens_before = property(lambda self: num_at(self.raw, "tokensBefore"))


class SystemMessage(_Message):
    """``role: "system"``: pi 1.x's recorded system prompt (a role 0.84.0 does not know, so
    its context leaves it out and its estimate counts it as 0): ``content`` (a string or
    text blocks), ``sections`` (name → text, ``None`` removes the name), the tool
    declarations added and removed. What a run of them adds up to is
    :func:`pipeline.session.system.replay`."""

    __slots__ = ()
    role: ClassVar[str] = "system"

    @property
    def content(self) -> Any:
        """The content as stored (a string, a block list, or anything a writer put there)."""
        return self.raw.get("content")

    @property
    def sections(self) -> Mapping[str, Any]:
        """The section patch (empty when there is none, or it is not an object)."""
        sections = self.raw.get("sections")
        return sections if isinstance(sections, Mapping) else {}

    @property
    def tools_added(self) -> tuple[Mapping[str, Any], ...]:
        return _declarations(self.raw.get("toolsAdded"))

    @property
    def tools_removed(self) -> tuple[Mapping[str, Any], ...]:
        return _declarations(self.raw.get("toolsRemoved"))

    @property  # type: ignore[override]
    def timestamp(self) -> Any:
        return self.raw.get("timestamp")


def _declarations(value: Any) -> tuple[Mapping[str, Any], ...]:
    return tuple(d for d in value if isinstance(d, Mapping)) if isinstance(value, list) else ()


class UnknownMessage(_Message):
    """A message whose role pi 0.84.0 does not know; kept, never sent to the model."""

    __slots__ = ()
    role: ClassVar[str] = "unknown"

    @property
    def message_role(self) -> str | None:
        role = self.raw.get("role")
        return role if isinstance(role, str) else None

    @property  # type: ignore[override]
    def timestamp(self) -> Any:
        return self.raw.get("timestamp")


AgentMessage = Union[
    UserMessage, AssistantMessage, ToolResultMessage, BashExecutionMessage,
    CustomMessage, BranchSummaryMessage, CompactionSummaryMessage, SystemMessage, UnknownMessage,
]
#: What :func:`pipeline.session.projection.convert_to_llm` returns.
LlmMessage = Union[UserMessage, AssistantMessage, ToolResultMessage]

_ROLES: dict[str, Any] = {
    cls.role: cls
    for cls in (
        UserMessage, AssistantMessage, ToolResultMessage, BashExecutionMessage,
        CustomMessage, BranchSummaryMessage, CompactionSummaryMessage, SystemMessage,
    )
}


#: The roles :func:`parse_message` builds a typed view for.
KNOWN_ROLES = frozenset(_ROLES)

#: Roles of later pi versions that a session file may hold and pi 0.84.0's context leaves
#: out: ``system`` (pi 1.x records the system prompt and its patches as messages,
#: :class:`SystemMessage`; its rules are :mod:`pipeline.session.system`).
LATER_ROLES = frozenset({SystemMessage.role})


def message_role(d: Raw) -> str:
    """The ``role`` of the view :func:`parse_message` builds, without building it
    (``"unknown"`` for a role pi 0.84.0 does not define)."""
    role = d.get("role")
    return role if isinstance(role, str) and role in _ROLES else UnknownMessage.role


def lazy_message(role: str, source: RawSource) -> AgentMessage:
    """The view for a message of ``role`` (one of :data:`KNOWN_ROLES`) read from ``source`` when needed."""
    view = _new(_ROLES[role])  # _Message.lazy, inline: once per message of a projection
    _set(view, "_source", source)
    return view


def parse_message(d: Raw) -> AgentMessage:
    """The typed view of one message object (dispatch on ``role``)."""
    role = d.get("role")
    cls = _ROLES.get(role) if isinstance(role, str) else None
    return (cls or UnknownMessage)(d)
