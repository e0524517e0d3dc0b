"""Provider responses -> pi's assistant message JSON (part of :mod:`pipeline.llm.convert`)."""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

from pipeline.js import js_json
from pipeline.llm.convert_types import JSON, ModelCost, TargetModel

# =========================================================================== replies

_OPENAI_FINISH = {"stop": "stop", "end": "stop", "length": "length", "function_call": "toolUse",
                  "tool_calls": "toolUse"}
_ANTHROPIC_STOP = {"end_turn": "stop", "pause_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
                   "tool_use": "toolUse"}
_REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")


def calculate_cost(usage: JSON, cost: ModelCost) -> JSON:
    """pi's ``calculateCost``: dollars per part and in total (same float operations), into ``usage["cost"]``.

    Anthropic's one-hour cache writes (``cacheWrite1h``, part of ``cacheWrite``) cost twice the input rate.
    """
    long_write = usage.get("cacheWrite1h") or 0
    parts = {"input": (cost.input / 1000000) * usage["input"], "output": (cost.output / 1000000) * usage["output"],
             "cacheRead": (cost.cache_read / 1000000) * usage["cacheRead"],
             "cacheWrite": (cost.cache_write * (usage["cacheWrite"] - long_write) + cost.input * 2 * long_write)
             / 1000000}
    usage["cost"] = {**parts, "total": parts["input"] + parts["output"] + parts["cacheRead"] + parts["cacheWrite"]}
    return usage["cost"]


def _zero_usage() -> JSON:
    return {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def openai_usage(raw: Mapping, model: TargetModel) -> JSON:
    details = raw.get("prompt_tokens_details") or {}
    cache_read = _int(details.get("cached_tokens")) or _int(raw.get("prompt_cache_hit_tokens"))
    cache_write = _int(details.get("cache_write_tokens"))
    uncached = max(0, _int(raw.get("prompt_tokens")) - cache_read - cache_write)
    output = _int(raw.get("completion_tokens"))
    usage = {"input": uncached, "output": output, "cacheRead": cache_read, "cacheWrite": cache_write,
             "reasoning": _int((raw.get("completion_tokens_details") or {}).get("reasoning_tokens")),
             "totalTokens": uncached + output + cache_read + cache_write, "cost": {}}
    calculate_cost(usage, model.cost)
    return usage


def _message(model: TargetModel, timestamp: int | float) -> JSON:
    return {"role": "assistant", "content": [], "api": model.api, "provider": model.provider, "model": model.id,
            "usage": _zero_usage(), "stopReason": "stop", "timestamp": timestamp}


def _parse_arguments(text: Any) -> Any:
    if not isinstance(text, str) or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _finish(out: JSON, reason: Any, table: Mapping[str, str], provider: str) -> JSON:
    if reason is None and provider == "openai":
        out["stopReason"] = "stop"
        return out
    out["rawStopReason"] = reason
    mapped = table.get(reason) if isinstance(reason, str) else None
    if mapped is None:
        out["stopReason"] = "error"
        out["errorMessage"] = f"{provider} stop reason: {reason}"
    else:
        out["stopReason"] = mapped
    return out


def from_openai_chat(response: Mapping, *, model: TargetModel, timestamp: int | float) -> JSON:
    """pi's assistant message for a non-streaming chat-completions response."""
    out = _message(model, timestamp)
    if isinstance(response.get("id"), str):
        out["responseId"] = response["id"]
    choice = (response.get("choices") or [{}])[0]
    message = choice.get("message") or {}
    field_name = next((f for f in _REASONING_FIELDS if isinstance(message.get(f), str) and message[f]), None)
    if field_name:
        out["content"].append({"type": "thinking", "thinking": message[field_name], "thinkingSignature": field_name})
    content = message.get("content")
    text = content if isinstance(content, str) else "".join(
        p.get("text") or "" for p in content or [] if isinstance(p, dict))
    if text:
        out["content"].append({"type": "text", "text": text})
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        out["content"].append({"type": "toolCall", "id": call.get("id") or "", "name": function.get("name") or "",
                               "arguments": _parse_arguments(function.get("arguments"))})
    if isinstance(response.get("usage"), dict):
        out["usage"] = openai_usage(response["usage"], model)
    return _finish(out, choice.get("finish_reason"), _OPENAI_FINISH, "openai")


def from_openai_stream(chunks: Iterable[Mapping], *, model: TargetModel, timestamp: int | float) -> JSON:
    """pi's assistant message from decoded chat-completion chunks (``[DONE]`` left out)."""
    out = _message(model, timestamp)
    text: JSON | None = None
    thinking: JSON | None = None
    calls: dict[Any, JSON] = {}
    finish: Any = None
    for chunk in chunks:
        if "responseId" not in out and isinstance(chunk.get("id"), str):
            out["responseId"] = chunk["id"]
        if isinstance(chunk.get("usage"), dict):
            out["usage"] = openai_usage(chunk["usage"], model)
        choice = (chunk.get("choices") or [None])[0]
        if not choice:
            continue
        finish = choice.get("finish_reason") or finish
        delta = choice.get("delta") or {}
        if delta.get("content"):
            if text is None:
                text = {"type": "text", "text": ""}
                out["content"].append(text)
            text["text"] += delta["content"]
        field_name = next((f for f in _REASONING_FIELDS if isinstance(delta.get(f), str) and delta[f]), None)
        if field_name:
            if thinking is None:
                thinking = {"type": "thinking", "thinking": "", "thinkingSignature": field_name}
                out["content"].append(thinking)
            thinking["thinking"] += delta[field_name]
        for call in delta.get("tool_calls") or []:
            _merge_call(out, calls, call)
    for block in calls.values():
        block["arguments"] = _parse_arguments(block.pop("partialArgs"))
    return _finish(out, finish, _OPENAI_FINISH, "openai")


def _merge_call(out: JSON, calls: dict, call: Mapping) -> None:
    key = call.get("index", call.get("id"))
    block = calls.get(key)
    function = call.get("function") or {}
    if block is None:
        block = {"type": "toolCall", "id": call.get("id") or "", "name": function.get("name") or "",
                 "arguments": {}, "partialArgs": ""}
        calls[key] = block
        out["content"].append(block)
    if not block["id"] and call.get("id"):
        block["id"] = call["id"]
    if not block["name"] and function.get("name"):
        block["name"] = function["name"]
    block["partialArgs"] += function.get("arguments") or ""


def _anthropic_usage(out: JSON, raw: Mapping, model: TargetModel) -> None:
    usage = out["usage"]
    for wire, key in (("input_tokens", "input"), ("output_tokens", "output"),
                      ("cache_read_input_tokens", "cacheRead"), ("cache_creation_input_tokens", "cacheWrite")):
        if raw.get(wire) is not None:
            usage[key] = _int(raw.get(wire))
    usage["totalTokens"] = usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
    calculate_cost(usage, model.cost)


def _anthropic_block(block: Mapping, redacted_text: str) -> JSON | None:
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": block.get("text") or ""}
    if kind == "thinking":
        return {"type": "thinking", "thinking": block.get("thinking") or "", "thinkingSignature": block.get("signature") or ""}
    if kind == "redacted_thinking":
        return {"type": "thinking", "thinking": redacted_text, "thinkingSignature": block.get("data"), "redacted": True}
    if kind == "tool_use":
        return {"type": "toolCall", "id": block.get("id"), "name": block.get("name"),
                "arguments": block.get("input") if block.get("input") is not None else {}}
    return None


def from_anthropic_messages(response: Mapping, *, model: TargetModel, timestamp: int | float,
                            redacted_text: str = "") -> JSON:
    """pi's assistant message for a non-streaming messages-API response.

    ``redacted_text`` is what a redacted thinking block shows (never sent back to a model:
    the same model gets the opaque data, another model nothing).
    """
    out = _message(model, timestamp)
    if isinstance(response.get("id"), str):
        out["responseId"] = response["id"]
    out["content"] = [b for b in (_anthropic_block(x, redacted_text) for x in response.get("content") or []) if b]
    usage = response.get("usage") or {}
    out["usage"]["cacheWrite1h"] = _int((usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens"))
    _anthropic_usage(out, usage, model)
    return _finish(out, response.get("stop_reason"), _ANTHROPIC_STOP, "anthropic")


def from_anthropic_stream(events: Iterable[Mapping], *, model: TargetModel, timestamp: int | float,
                          redacted_text: str = "") -> JSON:
    """pi's assistant message from decoded messages-API stream events (the ``data`` objects)."""
    out = _message(model, timestamp)
    blocks: dict[Any, JSON] = {}
    stop: Any = None
    for event in events:
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message") or {}
            out["responseId"] = message.get("id")
            usage = message.get("usage") or {}
            out["usage"]["cacheWrite1h"] = _int((usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens"))
            _anthropic_usage(out, usage, model)
        elif kind == "content_block_start":
            block = _anthropic_block(event.get("content_block") or {}, redacted_text)
            if block is not None:
                blocks[event.get("index")] = block
                out["content"].append(block)
                if block["type"] == "toolCall":
                    block["partialJson"] = ""
        elif kind == "content_block_delta":
            _anthropic_delta(blocks.get(event.get("index")), event.get("delta") or {})
        elif kind == "message_delta":
            stop = (event.get("delta") or {}).get("stop_reason") or stop
            _anthropic_usage(out, event.get("usage") or {}, model)
    for block in blocks.values():
        if block["type"] == "toolCall" and "partialJson" in block:
            partial = block.pop("partialJson")
            if partial:
                block["arguments"] = _parse_arguments(partial)
    return _finish(out, stop, _ANTHROPIC_STOP, "anthropic")


def _anthropic_delta(block: JSON | None, delta: Mapping) -> None:
    if block is None:
        return
    kind = delta.get("type")
    if kind == "text_delta" and block["type"] == "text":
        block["text"] += delta.get("text") or ""
    elif kind == "thinking_delta" and block["type"] == "thinking":
        block["thinking"] += delta.get("thinking") or ""
    elif kind == "signature_delta" and block["type"] == "thinking":
        block["thinkingSignature"] = (block.get("thinkingSignature") or "") + (delta.get("signature") or "")
    elif kind == "input_json_delta" and block["type"] == "toolCall":
        block["partialJson"] += delta.get("partial_json") or ""


# =========================================================================== errors


def error_message(provider: str, status: int, body: str | bytes | None) -> str:
    """The ``errorMessage`` pi records for an HTTP error from ``provider`` (as its SDKs word it)."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else (body or "")
    try:
        parsed = json.loads(text) if text.strip() else None
    except ValueError:
        parsed = None
    if not text.strip():
        return f"{status} status code (no body)"
    if provider == "openai" and isinstance(parsed, dict) and isinstance(parsed.get("error"), dict) and parsed["error"]:
        return f"{status}: {js_json(parsed['error'])}"
    if isinstance(parsed, (dict, list)):
        return f"{status} {js_json(parsed)}"
    return f"{status} {text.strip()}"


def error_reply(message: str, *, model: TargetModel, timestamp: int | float, aborted: bool = False,
                partial: Mapping | None = None) -> JSON:
    """A failed reply as pi records it: what arrived (``partial``), ``stopReason`` error or aborted."""
    out = dict(partial) if partial else _message(model, timestamp)
    out["stopReason"] = "aborted" if aborted else "error"
    out["errorMessage"] = message
    return out
