"""Typed session entries: pi 0.84.0's session file format, version 3 (docs/pi-rules.md#session-files).

A session file is a header line (:class:`SessionHeader`) followed by one entry per
line. Every entry has ``type``, ``id`` (8 hex chars), ``parentId`` (``None`` for a
root) and ``timestamp`` (ISO-8601 UTC with milliseconds); ``id``/``parentId`` form a
tree. Each model keeps the parsed JSON object in ``raw`` (key order and unknown fields
included, so an entry is written back byte for byte) and ``line``, the 1-based line it
was read from (``None`` for entries built in memory). Entry types pi does not define
become :class:`UnknownEntry` and are kept untouched.

The ``create`` constructors build new entries with their keys in the order pi writes
them (``custom`` and ``custom_message`` put their own keys before ``id``) and optional
keys left out when ``None``. Ids are made as pi makes them: entry ids are the first 8 hex
chars of a random UUID, redrawn while taken, a full UUID after 100 collisions
(:func:`new_entry_id`, pi's ``generateId``); session ids are UUIDv7 (:func:`uuid7`).
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Container, Iterable, Mapping, Protocol, Union

from pipeline.js import MISSING, js_object, num_at, str_at
from pipeline.session.messages import (
    AgentMessage,
    ContentBlock,
    Usage,
    message_role,
    lazy_message,
    parse_content,
    parse_message,
)

Raw = Mapping[str, Any]
CURRENT_VERSION = 3


def new_entry_id(taken: Container[str], random_uuid: Callable[[], uuid.UUID] = uuid.uuid4) -> str:
    """A fresh entry id not in ``taken``."""
    for _ in range(100):
        candidate = str(random_uuid())[:8]
        if candidate not in taken:
            return candidate
    return str(random_uuid())


def uuid7(ms: int | None = None, rand: bytes | None = None) -> str:
    """A UUIDv7 string for epoch milliseconds ``ms`` (now by default)."""
    ms = int(time.time() * 1000) if ms is None else ms
    rand = os.urandom(10) if rand is None else rand
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= (int.from_bytes(rand[:2], "big") & 0x0FFF) << 64
    value |= 0b10 << 62
    value |= int.from_bytes(rand[2:10], "big") & ((1 << 62) - 1)
    return str(uuid.UUID(int=value))


def _json(value: Any) -> Any:
    """A model's JSON (its ``raw``; ``to_json()`` for :class:`FileLists` and :class:`Usage`),
    a plain JSON value as is, ``None`` → key left out."""
    if value is None:
        return MISSING
    if isinstance(value, (FileLists, Usage)):
        return value.to_json()
    return getattr(value, "raw", value)


def _content_json(content: Any) -> Any:
    if isinstance(content, (list, tuple)):
        return [_json(b) for b in content]
    return content


@dataclass(frozen=True, slots=True)
class FileLists:
    """``details`` of a pi-made compaction or branch summary: the files the summary covers
    (files only read, and files written or edited)."""

    read_files: tuple[str, ...] = ()
    modified_files: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, d: Any) -> "FileLists | None":
        """Read a ``details`` object (string paths only); None when it holds no such lists."""
        if not isinstance(d, dict):
            return None
        read, modified = d.get("readFiles"), d.get("modifiedFiles")
        if not isinstance(read, list) or not isinstance(modified, list):
            return None
        return cls(
            read_files=tuple(f for f in read if isinstance(f, str)),
            modified_files=tuple(f for f in modified if isinstance(f, str)),
        )

    def to_json(self, produced_by: str | None = None) -> dict[str, Any]:
        """pi's ``details``: ``{readFiles, modifiedFiles}``, plus ``producedBy`` for offline summaries."""
        details: dict[str, Any] = {"readFiles": list(self.read_files), "modifiedFiles": list(self.modified_files)}
        if produced_by == "offline":
            details["producedBy"] = "offline"
        return details


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionHeader:
    """Line 1: ``{"type":"session","version":3,"id":UUIDv7,"timestamp","cwd","parentSession"?}``."""

    version: int | float | None
    id: str
    timestamp: str | None
    cwd: str | None
    parent_session: str | None
    raw: Raw
    line: int | None = field(default=None, compare=False)
    type: ClassVar[str] = "session"

    @classmethod
    def from_json(cls, d: Raw, line: int | None = None) -> "SessionHeader":
        return cls(
            version=num_at(d, "version"), id=d["id"], timestamp=str_at(d, "timestamp"), cwd=str_at(d, "cwd"),
            parent_session=str_at(d, "parentSession"), raw=d, line=line,
        )

    @classmethod
    def create(cls, *, id: str, timestamp: str, cwd: str, parent_session: str | None = None) -> "SessionHeader":
        raw = js_object([
            ("type", "session"), ("version", CURRENT_VERSION), ("id", id), ("timestamp", timestamp),
            ("cwd", cwd), ("parentSession", _json(parent_session)),
        ])
        return cls.from_json(raw)


@dataclass(frozen=True, slots=True, kw_only=True)
class _EntryBase:
    id: str
    parent_id: str | None
    timestamp: str | None
    raw: Raw
    line: int | None = field(default=None, compare=False)

    @staticmethod
    def _head(d: Raw, line: int | None) -> dict[str, Any]:
        parent = d.get("parentId")
        return {
            "id": d["id"], "parent_id": parent if isinstance(parent, str) else None,
            "timestamp": str_at(d, "timestamp"), "raw": d, "line": line,
        }

    def to_json(self) -> Raw:
        """The entry's JSON object (as read, or as pi would write it)."""
        return self.raw


def _base(kind: str, id: str, parent_id: str | None, timestamp: str) -> list[tuple[str, Any]]:
    return [("type", kind), ("id", id), ("parentId", parent_id), ("timestamp", timestamp)]


class LineSource(Protocol):
    """Where a lazily read entry's JSON lives: its line in the session file (see
    :class:`pipeline.session.reader.FileLines`)."""

    def parse(self, offset: int, size: int) -> Any: ...

    def blocks(self, offset: int, size: int) -> Any: ...


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class MessageEntry:
    """``type: "message"``: one agent message (any role but the two summary roles).

    An entry read from a file holds only what the tree needs (id, parent, timestamp,
    role) and where its line is (``source``, ``offset``, ``size``): its JSON is parsed
    when :attr:`raw` or :attr:`message` is asked for, so opening a file does not build
    objects for messages nobody looks at, and holds no copy of them. Its typed
    :attr:`message` is a view that reads the line when one of its fields is first
    asked for. An entry built in memory (``create``, ``from_json``) holds its object in ``data``.
    """

    id: str
    parent_id: str | None
    timestamp: str | None
    data: Raw | None = field(default=None, repr=False)
    role_name: str | None = field(default=None, repr=False)
    source: LineSource | None = field(default=None, repr=False)
    offset: int = field(default=0, repr=False)
    size: int = field(default=0, repr=False)
    line: int | None = None
    _message: Any = field(default=None, init=False, repr=False)
    type: ClassVar[str] = "message"

    @classmethod
    def from_json(cls, d: Raw, line: int | None = None) -> "MessageEntry":
        parent, timestamp = d.get("parentId"), d.get("timestamp")
        return cls(
            id=d["id"], parent_id=parent if isinstance(parent, str) else None,
            timestamp=timestamp if isinstance(timestamp, str) else None, data=d, line=line,
        )

    @property
    def raw(self) -> Raw:
        """The entry's JSON object (parsed from its line when the entry does not hold it)."""
        data = self.data
        if data is None:
            return self.source.parse(self.offset, self.size)  # type: ignore[union-attr]
        return data

    def to_json(self) -> Raw:
        """The entry's JSON object (as read, or as pi would write it)."""
        return self.raw

    @property
    def message(self) -> AgentMessage:
        """The typed message (built on first use, then kept; an entry read from a file
        gives a view that reads its line when a field is first asked for)."""
        message = self._message
        if message is None:
            role = self.role_name
            if self.data is None and role is not None:  # self.indexed
                message = lazy_message(role, self)
            else:
                message = parse_message(self.raw["message"])
            object.__setattr__(self, "_message", message)  # a cache: the entry's value does not change
        return message

    @property
    def indexed(self) -> bool:
        """Read from a file by its head only (see the class doc); its object is not held."""
        return self.data is None and self.role_name is not None

    def content_blocks(self) -> list[tuple[Any, Any, Any]] | None:
        """``(type, name, arguments)`` of each block of ``message.content`` (None for a key
        that is missing), read from the line without building text or thinking blocks;
        None when the entry is not indexed or its content is not a list of objects."""
        if not self.indexed:
            return None
        return self.source.blocks(self.offset, self.size)  # type: ignore[union-attr]

    def message_json(self) -> Any:
        """``raw["message"]``: for the view of a lazily read entry."""
        return self.raw["message"]

    @property
    def role(self) -> str:
        """``message.role`` (``"unknown"`` for a role pi does not define), without parsing the message."""
        role = self.role_name
        return role if role is not None else message_role(self.raw["message"])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MessageEntry):
            return NotImplemented
        return (self.id, self.parent_id, self.timestamp) == (other.id, other.parent_id, other.timestamp) \
            and self.raw == other.raw

    __hash__ = None  # type: ignore[assignment]  # like the other entries: they hold mappings

    @classmethod
    def create(cls, *, id: str, parent_id: str | None, timestamp: str, message: AgentMessage | Raw) -> "MessageEntry":
        return cls.from_json(js_object([*_base("message", id, parent_id, timestamp), ("message", _json(message))]))


def message_views(entries: Iterable[Any], other: Callable[[Any], Iterable[AgentMessage]]) -> list[AgentMessage]:
    """The context messages of ``entries`` in order: a message entry read from a file gives
    its view (:attr:`MessageEntry.message`, built here inline and kept, as a projection
    asks it of every message on a path); every other entry gives ``other(entry)``."""
    out: list[AgentMessage] = []
    append, extend, set_view = out.append, out.extend, object.__setattr__
    for entry in entries:
        if type(entry) is MessageEntry and entry.data is None and (role := entry.role_name) is not None:
            view = entry._message
            if view is None:
                view = lazy_message(role, entry)
                set_view(entry, "_message", view)  # a cache, as in MessageEntry.message
            append(view)
        else:
            extend(other(entry))
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingLevelChangeEntry(_EntryBase):
    """``type: "thinking_level_change"``: ``off|minimal|low|medium|high|xhigh``."""

    thinking_level: str | None
    type: ClassVar[str] = "thinking_level_change"

    @classmethod
    def from_json(cls, d: Raw, line: int | None = None) -> "ThinkingLevelChangeEntry":
        return cls(thinking_level=str_at(d, "thinkingLevel"), **cls._head(d, line))

    @classmethod
    def create(cls, *, id: str, parent_id: str | None, timestamp: str, thinking_level: str) -> "ThinkingLevelChangeEntry":
        return cls.from_json(dict([*_base(cls.type, id, parent_id, timestamp), ("thinkingLevel", thinking_level)]))


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelChangeEntry(_EntryBase):
    """``type: "model_change"``: the user switched provider/model."""

    provider: str | None
    model_id: str | None
    type: ClassVar[str] = "model_change"

    @classmethod
    def from_json(cls, d: Raw, line: int | None = None) -> "ModelChangeEntry":
        return cls(provider=str_at(d, "provider"), model_id=str_at(d, "modelId"), **cls._head(d, line))

    @classmethod
    def create(cls, *, id: str, parent_id: str | None, timestamp: str, provider: str, model_id: str) -> "ModelChangeEntry":
        pairs = [*_base(cls.type, id, parent_id, timestamp), ("provider", provider), ("modelId", model_id)]
        return cls.from_json(dict(pairs))


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionEntry(_EntryBase):
    """``type: "compaction"``: history before ``first_kept_entry_id`` is replaced by ``summary``."""

    summary: str | None
    first_kept_entry_id: str | None
    tokens_before: int | float | None
    details: FileLists | None
    usage: Usage | None
    from_hook: bool | None
    type: ClassVar[str] = "compaction"

    @classmethod
    def from_json(cls, d: Raw, line: int | None = None) -> "CompactionEntry":
        hook = d.get("fromHook")
        return cls(
            summary=str_at(d, "summary"), first_kept_entry_id=str_at(d, "firstKeptEntryId"),
            tokens_before=num_at(d, "tokensBefore"), details=FileLists.from_json(d.get("details")),
            usage=Usage.from_json(d.get("usage")), from_hook=hook if isinstance(hook, bool) else None,
            **cls._head(d, line),
        )

    @classmethod
    def create(
        cls, *, id: str, parent_id: str | None, timestamp: str, summary: str, first_kept_entry_id: str,
        tokens_before: int | float, details: Any = None, usage: Any = None, from_hook: bool | None = None,
        system_message: Any = None,
    ) -> "CompactionEntry":
        """``system_message``: pi 1.x's snapshot of the system prompt and tools at the boundary."""
        return cls.from_json(js_object([
            *_base(cls.type, id, parent_id, timestamp), ("summary", summary),
            ("firstKeptEntryId", first_kept_entry_id), ("tokensBefore", tokens_before),
            ("details", _json(details)), ("usage", _json(usage)), ("fromHook", _json(from_hook)),
            ("systemMessage", _json(system_message)),
        ]))


@dataclass(frozen=True, slots=True, kw_only=True)
class BranchSummaryEntry(_EntryBase):
    """``type: "branch_summary"``: a summary of the branch the user left (``from_id`` or ``"root"``)."""

    from_id: str | None
    summary: str | None
    details: FileLists | None
    usage: Usage | None
    from_hook: bool | None
    type: ClassVar[str] = "branch_summary"

    @classmethod
    def from_json(cls, d: Raw, line: int | None = None) -> "BranchSummaryEntry":
        hook = d.get("fromHook")
        return cls(
            from_id=str_at(d, "fromId"), summary=str_at(d, "summary"), details=FileLists.from_json(d.get("details")),
            usage=Usage.from_json(d.get("usage")), from_hook=hook if isinstance(hook, bool) else None,
            **cls._head(d, line),
        )

    @classmethod
    def create(
        cls, *, id: str, parent_id: str | None, timestamp: str, from_id: str, summary: str,
        details: Any = None, usage: Any = None, from_hook: bool | None = None,
    ) -> "BranchSummaryEntry":
        return cls.from_json(js_object([
            *_base(cls.type, id, parent_id, timestamp), ("fromId", from_id), ("summary", summary),
            ("details", _json(details)), ("usage", _json(usage)), ("fromHook", _json(from_hook)),
        ]))


@dataclass(frozen=True, slots=True, kw_only=True)
class CustomEntry(_EntryBase):
    """``type: "custom"``: extension state; never part of the context."""

    custom_type: str | None
    data: Any
    type: ClassVar[str] = "custom"

    @classmethod
    def from_json(cls, d: Raw, line: int | None = None) -> "CustomEntry":
        return cls(custom_type=str_at(d, "customType"), data=d.get("data"), **cls._head(d, line))

    @classmethod
    def create(cls, *, id: str, parent_id: str | None, timestamp: str, custom_type: str, data: Any = None) -> "CustomEntry":
        own = [("type", cls.type), ("customType", custom_type), ("data", _json(data))]
        return cls.from_json(js_object([*own, *_base(cls.type, id, parent_id, timestamp)[1:]]))


@dataclass(frozen=True, slots=True, kw_only=True)
class CustomMessageEntry(_EntryBase):
    """``type: "custom_message"``: an extension message that does enter the context."""

    custom_type: str | None
    content: str | tuple[ContentBlock, ...]
    display: bool | None
    details: Any
    type: ClassVar[str] = "custom_message"

    @classmethod
    def from_json(cls, d: Raw, line: int | None = None) -> "CustomMessageEntry":
        display = d.get("display")
        return cls(
            custom_type=str_at(d, "customType"), content=parse_content(d.get("content")),
            display=display if isinstance(display, bool) else None, details=d.get("details"),
            **cls._head(d, line),
        )

    @classmethod
    def create(
        cls, *, id: str, parent_id: str | None, timestamp: str, custom_type: str, content: Any,
        display: bool | None = True, details: Any = None,
    ) -> "CustomMessageEntry":
        own = [
            ("type", cls.type), ("customType", custom_type), ("content", _content_json(content)),
            ("display", _json(display)), ("details", _json(details)),
        ]
        return cls.from_json(js_object([*own, *_base(cls.type, id, parent_id, timestamp)[1:]]))


@dataclass(frozen=True, slots=True, kw_only=True)
class LabelEntry(_EntryBase):
    """``type: "label"``: set (or, when empty/missing, clear) the label of ``target_id``."""

    target_id: str | None
    label: str | None
    type: ClassVar[str] = "label"

    @classmethod
    def from_json(cls, d: Raw, line: int | None = None) -> "LabelEntry":
        return cls(target_id=str_at(d, "targetId"), label=str_at(d, "label"), **cls._head(d, line))

    @classmethod
    def create(cls, *, id: str, parent_id: str | None, timestamp: str, target_id: str, label: str | None) -> "LabelEntry":
        pairs = [*_base(cls.type, id, parent_id, timestamp), ("targetId", target_id), ("label", _json(label))]
        return cls.from_json(js_object(pairs))


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionInfoEntry(_EntryBase):
    """``type: "session_info"``: the session's display name (latest wins; empty clears)."""

    name: str | None
    type: ClassVar[str] = "session_info"

    @classmethod
    def from_json(cls, d: Raw, line: int | None = None) -> "SessionInfoEntry":
        return cls(name=str_at(d, "name"), **cls._head(d, line))

    @classmethod
    def create(cls, *, id: str, parent_id: str | None, timestamp: str, name: str) -> "SessionInfoEntry":
        return cls.from_json(dict([*_base(cls.type, id, parent_id, timestamp), ("name", name)]))


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextEditEntry(_EntryBase):
    """``type: "context_edit"`` (pi 1.x; a type 0.84.0 does not know, so its context shows
    nothing for it): from now on the entry ``target_id`` shows the model ``replacement``
    instead of its messages (``None``: nothing; else an object whose ``content`` replaces
    theirs). ``replacement`` is :data:`~pipeline.js.MISSING` when the key is absent."""

    target_id: str | None
    replacement: Any
    type: ClassVar[str] = "context_edit"

    @classmethod
    def from_json(cls, d: Raw, line: int | None = None) -> "ContextEditEntry":
        return cls(target_id=str_at(d, "targetId"), replacement=d.get("replacement", MISSING), **cls._head(d, line))

    @classmethod
    def create(cls, *, id: str, parent_id: str | None, timestamp: str, target_id: str,
               replacement: Any) -> "ContextEditEntry":
        """Keys in pi's order; ``replacement`` as given (``None`` is written as ``null``)."""
        return cls.from_json(dict([*_base(cls.type, id, parent_id, timestamp), ("targetId", target_id),
                                   ("replacement", replacement)]))


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownEntry(_EntryBase):
    """An entry type pi 0.84.0 does not write; kept and written back untouched."""

    entry_type: Any
    type: ClassVar[str] = "unknown"

    @classmethod
    def from_json(cls, d: Raw, line: int | None = None) -> "UnknownEntry":
        return cls(entry_type=d.get("type"), **cls._head(d, line))


Entry = Union[
    MessageEntry, ThinkingLevelChangeEntry, ModelChangeEntry, CompactionEntry, BranchSummaryEntry,
    CustomEntry, CustomMessageEntry, LabelEntry, SessionInfoEntry, ContextEditEntry, UnknownEntry,
]
ENTRY_TYPES: dict[str, Any] = {
    cls.type: cls
    for cls in (
        MessageEntry, ThinkingLevelChangeEntry, ModelChangeEntry, CompactionEntry, BranchSummaryEntry,
        CustomEntry, CustomMessageEntry, LabelEntry, SessionInfoEntry, ContextEditEntry,
    )
}


def parse_entry(d: Raw, line: int | None = None) -> Entry:
    """The typed entry for one JSON object; the caller checked ``id`` is a string and,
    for ``message`` entries, that ``message`` is an object (see :func:`entry_issues`)."""
    kind = d.get("type")
    cls = ENTRY_TYPES.get(kind) if isinstance(kind, str) else None
    return (cls or UnknownEntry).from_json(d, line)


_REQUIRED: dict[str, tuple[tuple[str, type | tuple[type, ...]], ...]] = {
    "message": (),
    "thinking_level_change": (("thinkingLevel", str),),
    "model_change": (("provider", str), ("modelId", str)),
    "compaction": (("summary", str), ("firstKeptEntryId", str), ("tokensBefore", (int, float))),
    "branch_summary": (("fromId", str), ("summary", str)),
    "custom": (("customType", str),),
    "custom_message": (("customType", str),),
    "label": (("targetId", str),),
    "session_info": (),
}


def entry_issues(d: Raw) -> list[tuple[str, str, bool]]:
    """Shape problems of one entry object: ``(key, message, fatal)``.

    Fatal issues make the entry unusable (no string ``id``; a ``message`` entry without
    a message object, on which pi itself would crash); the others are reported and the
    entry is kept, as pi keeps it.
    """
    issues: list[tuple[str, str, bool]] = []
    if not isinstance(d.get("id"), str):
        issues.append(("id", "entry has no string `id`", True))
    parent = d.get("parentId", MISSING)
    if parent is not None and not isinstance(parent, str):
        issues.append(("parentId", "`parentId` must be a string or null", False))
    if not isinstance(d.get("timestamp"), str):
        issues.append(("timestamp", "`timestamp` should be an ISO-8601 string", False))
    kind = d.get("type")
    if kind == "message" and not isinstance(d.get("message"), dict):
        issues.append(("message", "message entry without a `message` object", True))
    for key, types in _REQUIRED.get(kind, ()) if isinstance(kind, str) else ():
        value = d.get(key)
        if not isinstance(value, types) or isinstance(value, bool):
            issues.append((key, f"{kind} entry: `{key}` is missing or has the wrong type", False))
    return issues
