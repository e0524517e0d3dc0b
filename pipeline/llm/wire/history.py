"""A body's conversation read back as pi's messages: the pieces every format's reader shares.

Each format module reads one message (item, content) of its body with ``read_message(message,
names)`` into pi's messages' JSON (a user's text, an assistant's text, thinking and tool calls,
a tool's result with its name found at its call: ``names`` maps call ids to tool names across
the messages of one body), and finds the tool results of a body with ``tool_results`` (a
:class:`ToolResult` each: where it is, its tool, its text, how to replace it). Images and other
blocks are left out, as pi's serialization leaves them; system and developer messages too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

JSON = dict[str, Any]

__all__ = ["ToolResult", "arguments", "assistant", "call", "joined", "kept_whole", "leading", "pi_text", "result",
           "setter", "text", "text_parts", "text_summary", "user"]


@dataclass(frozen=True)
class ToolResult:
    """One tool result: the message it is in, how to read and replace its content."""

    message: int
    tool: str
    text: str
    replace: Callable[[str], None]


def text(content: Any) -> str:
    """A content's text: a string as is, the ``text`` of a list's parts joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text") or "") for p in content if isinstance(p, dict) and "text" in p)
    return ""


def joined(content: Any) -> str:
    """A tool result's text as the proxy measures and masks it: parts joined without a separator,
    other JSON values as JSON."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def pi_text(content: Any) -> str:
    """The text of pi content (a string, or the ``text`` blocks joined without a separator)."""
    if isinstance(content, str):
        return content
    return "".join(b.get("text") or "" for b in content or () if b.get("type") == "text")


def user(text: str) -> JSON:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 0}


def result(call: str, name: str, text: str, error: bool) -> JSON:
    return {"role": "toolResult", "toolCallId": call, "toolName": name, "content": [{"type": "text", "text": text}],
            "isError": error, "timestamp": 0}


def assistant(blocks: list[JSON]) -> JSON:
    return {"role": "assistant", "content": blocks, "api": "", "provider": "", "model": "", "stopReason": "stop",
            "timestamp": 0}


def call(id: str, name: str, arguments: JSON) -> JSON:
    return {"type": "toolCall", "id": id, "name": name, "arguments": arguments}


def arguments(raw: Any) -> JSON:
    """A tool call's arguments: an object as is, JSON text parsed (anything else: no arguments)."""
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw or "{}")
    except (TypeError, ValueError):
        parsed = {}
    return parsed if isinstance(parsed, dict) else {}


def setter(holder: JSON, key: str) -> Callable[[str], None]:
    """What replaces ``holder[key]`` with a new text."""
    def put(text: str) -> None:
        holder[key] = text
    return put


# =========================================================================== where a summary may cut (the proxy's)


def kept_whole(message: Any) -> bool:
    """Is ``message`` a ``system`` or ``developer`` message (Anthropic's and chat's shape), kept
    whole, never summarized?"""
    return isinstance(message, dict) and message.get("role") in ("system", "developer")


def leading(messages: list[Any], whole: Callable[[Any], bool]) -> int:
    """How many leading messages are ``whole`` ones."""
    at = 0
    while at < len(messages) and whole(messages[at]):
        at += 1
    return at


def text_parts(message: Any) -> list[Any]:
    """A user message's content as text blocks (Anthropic's and chat's shape): its list, or its
    string as one ``text`` block."""
    content = message.get("content")
    return list(content) if isinstance(content, list) else [{"type": "text", "text": str(content or "")}]


def text_summary(summary: str, extra: list[Any]) -> JSON:
    """The summary as one user message of text blocks (Anthropic's and chat's shape), then ``extra``."""
    return {"role": "user", "content": [{"type": "text", "text": summary}, *extra]}
