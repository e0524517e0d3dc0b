"""The messages of a request body read as pi's messages, for the profile's summary request.

Anthropic Messages and OpenAI chat completions (the formats the proxy summarizes): a user's
text, an assistant's text, thinking and tool calls, a tool's result (its name found at its
call). Images and other blocks are left out of the summary's conversation text, as pi's
serialization leaves them.
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.proxy.routes import Kind


def pi_groups(kind: Kind, messages: list[Any]) -> list[list[dict[str, Any]]]:
    """Each of ``messages`` as pi's messages' JSON (none for a system message, several for an
    Anthropic user message of tool results), one list per message of the body."""
    names: dict[str, str] = {}
    return [(_anthropic if kind == "messages" else _chat)(m, names) if isinstance(m, dict) else []
            for m in messages]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text") or "") for p in content if isinstance(p, dict) and "text" in p)
    return ""


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 0}


def _result(call: str, name: str, text: str, error: bool) -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": call, "toolName": name, "content": [{"type": "text", "text": text}],
            "isError": error, "timestamp": 0}


def _assistant(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    return {"role": "assistant", "content": blocks, "api": "", "provider": "", "model": "", "stopReason": "stop",
            "timestamp": 0}


def _anthropic(message: dict[str, Any], names: dict[str, str]) -> list[dict[str, Any]]:
    if message.get("role") not in ("user", "assistant"):
        return []  # a system message inside messages is kept whole, not summarized
    content = message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
    if message.get("role") == "assistant":
        out: list[dict[str, Any]] = []
        for block in blocks:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                out.append({"type": "text", "text": str(block.get("text") or "")})
            elif kind == "thinking":
                out.append({"type": "thinking", "thinking": str(block.get("thinking") or "")})
            elif kind == "tool_use":
                names[str(block.get("id"))] = str(block.get("name") or "")
                out.append({"type": "toolCall", "id": str(block.get("id")), "name": str(block.get("name") or ""),
                            "arguments": block.get("input") or {}})
        return [_assistant(out)]
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    out = [_result(str(b.get("tool_use_id")), names.get(str(b.get("tool_use_id")), ""), _text(b.get("content")),
                   bool(b.get("is_error"))) for b in results]
    text = _text([b for b in blocks if isinstance(b, dict) and b.get("type") == "text"])
    return out + ([_user(text)] if text else [])


def _chat(message: dict[str, Any], names: dict[str, str]) -> list[dict[str, Any]]:
    role = message.get("role")
    if role == "assistant":
        out: list[dict[str, Any]] = [{"type": "text", "text": _text(message.get("content"))}] \
            if _text(message.get("content")) else []
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {} if isinstance(call, dict) else {}
            names[str(call.get("id"))] = str(function.get("name") or "")
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except ValueError:
                arguments = {}
            out.append({"type": "toolCall", "id": str(call.get("id")), "name": str(function.get("name") or ""),
                        "arguments": arguments if isinstance(arguments, dict) else {}})
        return [_assistant(out)]
    if role == "tool":
        call = str(message.get("tool_call_id"))
        return [_result(call, names.get(call, ""), _text(message.get("content")), False)]
    if role == "user":
        return [_user(_text(message.get("content")))]
    return []
