"""File operations: which files the summarized part read and modified (docs/pi-rules.md#file-lists).

Collected from assistant tool calls named exactly ``read``, ``write`` and ``edit`` with a
non-empty string ``path`` argument, seeded from a previous summary's
``details.readFiles/modifiedFiles``. The lists are sorted in JavaScript order; read-only
files exclude modified ones. :func:`format_file_lists` renders them with the profile's tags.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

from pipeline.js import js_sorted
from pipeline.model.summary import Tags
from pipeline.session import AgentMessage, AssistantMessage, FileLists, ToolCall

_DEFAULT_TAGS = Tags.model_construct()  # the defaults, unvalidated: no schema is built at import


@dataclass
class FileOps:
    """Insertion-ordered sets of paths (pi's ``{read, written, edited}``); mutable while collecting."""

    read: dict[str, None] = field(default_factory=dict)
    written: dict[str, None] = field(default_factory=dict)
    edited: dict[str, None] = field(default_factory=dict)

    def freeze(self) -> "CollectedFiles":
        """An immutable copy."""
        return CollectedFiles(tuple(self.read), tuple(self.written), tuple(self.edited))


@dataclass(frozen=True)
class CollectedFiles:
    """The collected paths, frozen: ``read``, ``written``, ``edited`` in insertion order."""

    read: tuple[str, ...] = ()
    written: tuple[str, ...] = ()
    edited: tuple[str, ...] = ()

    def to_json(self) -> dict[str, list[str]]:
        """The oracle's shape: ``{read, written, edited}``."""
        return {"read": list(self.read), "written": list(self.written), "edited": list(self.edited)}


def seed_from_details(ops: FileOps, details: object, from_hook: object = False) -> None:
    """Add a previous summary's ``details`` lists (unless an extension made it): read → read, modified → edited.

    Only string paths are taken (pi would also carry other JSON values through).
    """
    if from_hook or not isinstance(details, Mapping):
        return
    read, modified = details.get("readFiles"), details.get("modifiedFiles")
    if isinstance(read, list):
        ops.read.update(dict.fromkeys(p for p in read if isinstance(p, str)))
    if isinstance(modified, list):
        ops.edited.update(dict.fromkeys(p for p in modified if isinstance(p, str)))


def collect_from_message(ops: FileOps, message: AgentMessage) -> None:
    """pi's ``extractFileOpsFromMessage``: record the read/write/edit calls of an assistant message."""
    if isinstance(message, AssistantMessage):
        collect_from_json(ops, message.raw)


def collect_from_json(ops: FileOps, message: Mapping) -> None:
    """:func:`collect_from_message` on an assistant message's JSON (no typed view needed):
    its ``toolCall`` blocks named ``read``, ``write`` or ``edit`` with a non-empty string
    ``arguments.path``."""
    content = message.get("content")
    if not isinstance(content, list):
        return
    targets = {"read": ops.read, "write": ops.written, "edit": ops.edited}
    for block in content:
        if not isinstance(block, dict) or block.get("type") != ToolCall.type:
            continue
        name, args = block.get("name"), block.get("arguments")
        path = args.get("path") if isinstance(args, dict) or isinstance(args, Mapping) else None
        if isinstance(name, str) and name in targets and isinstance(path, str) and path:
            targets[name][path] = None


def collect_from_blocks(ops: FileOps, blocks: Iterable[tuple[object, object, object]]) -> None:
    """:func:`collect_from_json` on ``(type, name, arguments)`` of each content block
    (:meth:`pipeline.session.MessageEntry.content_blocks`)."""
    targets = {"read": ops.read, "write": ops.written, "edit": ops.edited}
    for kind, name, args in blocks:
        if kind != ToolCall.type:
            continue
        path = args.get("path") if isinstance(args, Mapping) else None
        if isinstance(name, str) and name in targets and isinstance(path, str) and path:
            targets[name][path] = None


def collect(messages: Iterable[AgentMessage], ops: FileOps | None = None) -> FileOps:
    """Collect from every message into ``ops`` (a new one when not given) and return it."""
    ops = FileOps() if ops is None else ops
    for message in messages:
        collect_from_message(ops, message)
    return ops


def file_lists(ops: FileOps | CollectedFiles) -> FileLists:
    """pi's ``computeFileLists``: modified = edited ∪ written, read-only = read − modified, both sorted."""
    modified = dict.fromkeys([*ops.edited, *ops.written])
    read_only = [path for path in ops.read if path not in modified]
    return FileLists(tuple(js_sorted(read_only)), tuple(js_sorted(modified)))


def format_file_lists(lists: FileLists, tags: Tags = _DEFAULT_TAGS) -> str:
    """pi's ``formatFileOperations`` with the profile's tag names ("" when both lists are empty)."""
    sections = []
    if lists.read_files:
        sections.append(_tagged(tags.read_files, lists.read_files))
    if lists.modified_files:
        sections.append(_tagged(tags.modified_files, lists.modified_files))
    return "\n\n" + "\n\n".join(sections) if sections else ""


def _tagged(tag: str, paths: tuple[str, ...]) -> str:
    return f"<{tag}>\n" + "\n".join(paths) + f"\n</{tag}>"
