"""The messages of a request body read as pi's messages, for the profile's summary request.

Every format the proxy summarizes (Anthropic Messages, OpenAI chat completions, OpenAI
Responses, Gemini): a user's text, an assistant's text, thinking and tool calls, a tool's
result (its name found at its call). A Responses ``reasoning`` item reads as thinking from
its readable ``summary`` (its encrypted content is the provider's, not read); a Gemini part
marked ``thought`` is thinking. Images and other blocks are left out of the summary's
conversation text, as pi's serialization leaves them; system and developer messages too
(they are kept whole, never summarized).
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.proxy.routes import Kind


def pi_groups(kind: Kind, messages: list[Any]) -> list[list[dict[str, Any]]]:
    """Each of ``messages`` (the conversation's list of a body of ``kind``) as pi's messages' JSON
    (none for a system message, several for an Anthropic user message of tool results or a Gemini
    user content of function responses), one list per message of the body. A Responses turn is
    one item per block, so consecutive groups may each be an assistant message: the session path
    (:mod:`pipeline.proxy.history`) joins them into one."""
    names: dict[str, str] = {}
    read = {"messages": _anthropic, "chat": _chat, "responses": _responses, "gemini": _gemini}[kind]
    return [read(m, names) if isinstance(m, dict) else [] for m in messages]


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
            out.append(_call(str(call.get("id")), names[str(call.get("id"))], _arguments(function.get("arguments"))))
        return [_assistant(out)]
    if role == "tool":
        call = str(message.get("tool_call_id"))
        return [_result(call, names.get(call, ""), _text(message.get("content")), False)]
    if role == "user":
        return [_user(_text(message.get("content")))]
    return []


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        arguments = json.loads(raw or "{}")
    except (TypeError, ValueError):
        arguments = {}
    return arguments if isinstance(arguments, dict) else {}


def _call(call: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "toolCall", "id": call, "name": name, "arguments": arguments}


def _responses(item: dict[str, Any], names: dict[str, str]) -> list[dict[str, Any]]:
    kind = item.get("type", "message")
    call = str(item.get("call_id"))
    if kind in ("function_call", "custom_tool_call"):
        names[call] = str(item.get("name") or "")
        arguments = _arguments(item.get("arguments")) if kind == "function_call" else {"input": item.get("input")}
        return [_assistant([_call(call, names[call], arguments)])]
    if kind in ("function_call_output", "custom_tool_call_output"):
        output = item.get("output")
        return [_result(call, names.get(call, ""), output if isinstance(output, str) else _text(output), False)]
    if kind == "reasoning":
        thinking = "\n".join(str(s.get("text") or "") for s in item.get("summary") or [] if isinstance(s, dict))
        return [_assistant([{"type": "thinking", "thinking": thinking}])] if thinking else []
    if kind != "message" or item.get("role") not in ("user", "assistant"):
        return []
    text = _text(item.get("content"))
    return [_user(text)] if item.get("role") == "user" else [_assistant([{"type": "text", "text": text}])]


def _gemini(content: dict[str, Any], names: dict[str, str]) -> list[dict[str, Any]]:
    parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
    if content.get("role") == "model":
        blocks: list[dict[str, Any]] = []
        for at, part in enumerate(parts):
            call = part.get("functionCall")
            if isinstance(call, dict):
                blocks.append(_call(str(call.get("id") or f"call{at}"), str(call.get("name") or ""),
                                    _arguments(call.get("args"))))
            elif isinstance(part.get("text"), str):
                blocks.append({"type": "thinking", "thinking": part["text"]} if part.get("thought")
                              else {"type": "text", "text": part["text"]})
        return [_assistant(blocks)]
    out: list[dict[str, Any]] = []
    for at, part in enumerate(parts):
        response = part.get("functionResponse")
        if isinstance(response, dict):
            body = response.get("response")
            text = body.get("output", body) if isinstance(body, dict) else body
            out.append(_result(str(response.get("id") or f"call{at}"), str(response.get("name") or ""),
                               text if isinstance(text, str) else json.dumps(text, ensure_ascii=False), False))
    text = _text(parts)
    return out + ([_user(text)] if text else [])
