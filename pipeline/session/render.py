"""Human-readable views for the CLI: the entry tree, an LLM context, a check report.

These are tool output for people (never shown to a model), so they only use format
markers and the session's own content.
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

from pipeline.errors import Problem
from pipeline.js import js_json
from pipeline.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    CustomEntry,
    CustomMessageEntry,
    Entry,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    UnknownEntry,
)
from pipeline.session.messages import (
    AgentMessage,
    AssistantMessage,
    BashExecutionMessage,
    ContentBlock,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    SystemMessage,
    ToolResultMessage,
    UnknownBlock,
)
from pipeline.session.tree import SessionTree

PREVIEW = 60


def preview(text: str, width: int = PREVIEW) -> str:
    """The text on one line, cut to ``width`` characters with ``…``."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


# --------------------------------------------------------------------------- tree


def entry_kind(entry: Entry) -> str:
    """``user``/``assistant``/… for messages, the entry type otherwise."""
    if isinstance(entry, MessageEntry):
        return entry.message.raw.get("role") if isinstance(entry.message.raw.get("role"), str) else "message"
    if isinstance(entry, UnknownEntry):
        return f"{entry.entry_type}?"
    return entry.type


def entry_preview(entry: Entry) -> str:
    """A short description of what the entry holds."""
    if isinstance(entry, MessageEntry):
        return _message_preview(entry.message)
    if isinstance(entry, (CompactionEntry, BranchSummaryEntry)):
        return preview(entry.summary or "")
    if isinstance(entry, ModelChangeEntry):
        return f"{entry.provider}/{entry.model_id}"
    if isinstance(entry, ThinkingLevelChangeEntry):
        return str(entry.thinking_level)
    if isinstance(entry, LabelEntry):
        return f"{entry.target_id} = {entry.label!r}" if entry.label else f"{entry.target_id} (cleared)"
    if isinstance(entry, SessionInfoEntry):
        return repr(entry.name)
    if isinstance(entry, CustomMessageEntry):
        return f"{entry.custom_type}: {preview(_content_text(entry.content))}"
    if isinstance(entry, CustomEntry):
        return str(entry.custom_type)
    if isinstance(entry, ContextEditEntry):
        return f"{entry.target_id} {'omitted' if entry.replacement is None else 'replaced'}"
    return ""


def _message_preview(message: AgentMessage) -> str:
    if isinstance(message, BashExecutionMessage):
        return f"$ {preview(message.command or '')}"
    if isinstance(message, AssistantMessage):
        calls = [c.name or "?" for c in message.tool_calls]
        text = preview(_content_text(message.content, thinking=False))
        tail = f" → {', '.join(calls)}" if calls else ""
        stop = f" [{message.stop_reason}]" if message.stop_reason in ("error", "aborted", "length") else ""
        if stop and message.error_message:  # a failed attempt shows why it failed
            stop += f" {preview(message.error_message)}"
        return f"{text}{tail}{stop}".strip()
    if isinstance(message, ToolResultMessage):
        mark = " (error)" if message.is_error else ""
        return f"{message.tool_name}{mark}: {preview(_content_text(message.content))}"
    content = getattr(message, "content", None)
    summary = getattr(message, "summary", None)
    return preview(_content_text(content) if content is not None else summary or "")


def _content_text(content: Any, thinking: bool = True) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content or ():
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ThinkingContent) and thinking:
            parts.append(block.thinking)
        elif isinstance(block, ImageContent):
            parts.append("[image]")
    return " ".join(parts)


def render_tree(tree: SessionTree, leaf_id: str | None) -> Iterator[str]:
    """The tree, one entry per line; a chain continues at the same depth, each branch
    of a fork is indented under ``├─``/``└─``. The leaf is marked ``◀ leaf``."""
    labels = tree.labels()
    stack: list[tuple[Entry, str, str]] = [(e, "", "") for e in reversed(tree.roots())]
    seen: set[int] = set()
    while stack:
        entry, lead, connector = stack.pop()
        if id(entry) in seen:
            continue
        seen.add(id(entry))
        yield f"{lead}{connector}{_tree_line(entry, labels, leaf_id)}"
        kids = tree.children(entry.id)
        below = lead + {"├─ ": "│  ", "└─ ": "   "}.get(connector, "")
        if len(kids) == 1:
            stack.append((kids[0], below, ""))
        else:
            for i, kid in enumerate(reversed(kids)):
                stack.append((kid, below, "└─ " if i == 0 else "├─ "))


def _tree_line(entry: Entry, labels: dict[str, str], leaf_id: str | None) -> str:
    text = f"{entry.id} {entry_kind(entry)}"
    description = entry_preview(entry)
    if description:
        text += f"  {description}"
    if entry.id in labels:
        text += f"  [{labels[entry.id]}]"
    if entry.id == leaf_id:
        text += "  ◀ leaf"
    return text


# --------------------------------------------------------------------------- context


def render_context(messages: Sequence[Any]) -> Iterator[str]:
    """LLM messages as text: a ``── role ──`` rule, then each block."""
    for message in messages:
        if isinstance(message, SystemMessage):  # pi 1.x's recorded system prompt
            yield "── system ──"
            yield from _system_lines(message)
            continue
        yield f"── {_heading(message)} ──"
        failure = getattr(message, "error_message", None) if isinstance(message, AssistantMessage) else None
        if failure and message.stop_reason in ("error", "aborted"):  # why the attempt failed
            yield f"[{message.stop_reason}] {failure}"
        content = getattr(message, "content", ())
        if isinstance(content, str):
            yield content
            continue
        for block in content:
            yield from _block_lines(block)


def _system_lines(message: SystemMessage) -> Iterator[str]:
    """A recorded system message: its content, each section (``None``: removed), the tools
    it adds and removes."""
    content = message.content
    if isinstance(content, str) and content:
        yield content
    for name, text in message.sections.items():
        yield f"[section {name} removed]" if text is None else f"[section {name}]"
        if isinstance(text, str):
            yield text
    for key, label in (("toolsAdded", "tools added"), ("toolsRemoved", "tools removed")):
        tools = message.raw.get(key)
        if isinstance(tools, list) and tools:
            yield f"[{label}] " + ", ".join(str(t.get("name")) if isinstance(t, dict) else str(t) for t in tools)


def _heading(message: Any) -> str:
    if isinstance(message, AssistantMessage):
        model = "/".join(x for x in (message.provider, message.model) if x)
        details = ", ".join(x for x in (model, message.stop_reason) if x)
        return f"assistant ({details})" if details else "assistant"
    if isinstance(message, ToolResultMessage):
        error = ", error" if message.is_error else ""
        return f"toolResult {message.tool_name} ({message.tool_call_id}{error})"
    return str(message.role)


def _block_lines(block: ContentBlock) -> Iterator[str]:
    if isinstance(block, TextContent):
        yield block.text
    elif isinstance(block, ThinkingContent):
        yield f"[thinking] {block.thinking}"
    elif isinstance(block, ToolCall):
        yield f"[tool call {block.name} {block.id}] {js_json(block.arguments)}"
    elif isinstance(block, ImageContent):
        yield f"[image {block.mime_type}, {len(block.data)} base64 chars]"
    elif isinstance(block, UnknownBlock):
        yield f"[{block.block_type or 'block'}] {js_json(block.raw)}"


# --------------------------------------------------------------------------- check


def check_summary(file: str, entries: int, problems: Sequence[Problem], leaf_id: str | None,
                  migrated_from: Any) -> str:
    """The last line of ``pipeline session check``."""
    errors = sum(p.severity == "error" for p in problems)
    warnings = len(problems) - errors
    migrated = f", format version {migrated_from} (migrated in memory)" if migrated_from is not None else ""
    state = "damaged" if errors else "ok"
    return f"{file}: {state}: {entries} entries, leaf {leaf_id}{migrated}; {errors} errors, {warnings} warnings"
