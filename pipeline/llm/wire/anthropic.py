"""Anthropic Messages (``POST /v1/messages``): everything the project knows of the format.

* the conversation's key in a body: :data:`KEY` (``messages``);
* request building: :func:`to_anthropic_messages` (pi's messages, system prompt and tools as
  the body pi sends, after :func:`~pipeline.llm.wire.prepare.prepare_messages`);
* reply reading: :func:`from_anthropic_messages` (one JSON body), :func:`from_anthropic_stream`
  (the decoded events), :func:`text_delta` (the text one event adds), :func:`reported` (the
  input usage of an answer, for the proxy);
* reply building (what the loopback server sends): :func:`anthropic_message`,
  :func:`anthropic_events` from a scripted reply (:mod:`pipeline.loopback.chat` says its shape);
* reading back: :func:`read_message` (one message of a body as pi's messages),
  :func:`tool_results` (the ``tool_result`` blocks, each found at its ``tool_use``).
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Iterator, Mapping, Sequence

from pipeline.llm.wire import history
from pipeline.llm.wire.history import ToolResult, assistant, joined, result, setter, text, user
from pipeline.llm.wire.prepare import SystemUpdate, prepare_messages
from pipeline.llm.wire.reply import SummaryAnswer, calculate_cost, count, finish_reply, new_reply, obj, parse_arguments
from pipeline.llm.wire.types import JSON, ConvertTexts, TargetModel, ToolDefinition, _blocks, _clean, _tool_json

KEY = "messages"

_ANTHROPIC_STOP = {"end_turn": "stop", "pause_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
                   "tool_use": "toolUse"}


# =========================================================================== request


def anthropic_tool_call_id(id: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]", "_", id)[:64]


def _anthropic_content(blocks: list) -> Any:
    if not any(b.get("type") == "image" for b in blocks):
        return _clean("\n".join(b.get("text") or "" for b in blocks))
    out = [{"type": "text", "text": _clean(b.get("text") or "")} if b.get("type") == "text" else _anthropic_image(b)
           for b in blocks]
    return out


def _anthropic_image(block: Mapping) -> JSON:
    return {"type": "image", "source": {"type": "base64", "media_type": block.get("mimeType"), "data": block.get("data")}}


def _anthropic_user(message: Mapping) -> JSON | None:
    content = message.get("content")
    if isinstance(content, str):
        return {"role": "user", "content": _clean(content)} if content.strip() else None
    blocks = [{"type": "text", "text": _clean(b.get("text") or "")} if b.get("type") == "text" else _anthropic_image(b)
              for b in _blocks(content)]
    blocks = [b for b in blocks if b["type"] != "text" or b["text"].strip()]
    return {"role": "user", "content": blocks} if blocks else None


def _anthropic_thinking(block: Mapping) -> JSON | None:
    if block.get("redacted"):
        return {"type": "redacted_thinking", "data": block.get("thinkingSignature")}
    thinking, signature = block.get("thinking") or "", block.get("thinkingSignature")
    has_signature = bool(signature and signature.strip())
    if not thinking.strip() and not has_signature:
        return None
    if not has_signature:
        return {"type": "text", "text": _clean(thinking)}
    return {"type": "thinking", "thinking": _clean(thinking), "signature": signature}


def _anthropic_assistant(message: Mapping) -> JSON | None:
    blocks = []
    for block in _blocks(message.get("content")):
        kind = block.get("type")
        if kind == "text" and (block.get("text") or "").strip():
            blocks.append({"type": "text", "text": _clean(block["text"])})
        elif kind == "thinking":
            converted = _anthropic_thinking(block)
            if converted is not None:
                blocks.append(converted)
        elif kind == "toolCall":
            blocks.append({"type": "tool_use", "id": block.get("id"), "name": block.get("name"),
                           "input": block.get("arguments") if block.get("arguments") is not None else {}})
    return {"role": "assistant", "content": blocks} if blocks else None


def _anthropic_tool_result(result: Mapping, texts: ConvertTexts) -> JSON:
    content = _anthropic_content(_blocks(result.get("content")))
    if isinstance(content, list) and not any(b["type"] == "text" for b in content):
        content.insert(0, {"type": "text", "text": texts.tool_image_only})
    return {"type": "tool_result", "tool_use_id": result.get("toolCallId"), "content": content,
            "is_error": result.get("isError")}


def anthropic_messages(messages: Iterable[Any], *, model: TargetModel, texts: ConvertTexts,
                       cache_control: Mapping | None = None, system_update: SystemUpdate | None = None) -> list[JSON]:
    """The ``messages`` array of a messages-API request (consecutive tool results in one user message).

    A ``system`` message in ``messages`` is held back and sent as a ``system`` message right
    before the next assistant message that is sent (or at the end): tool results must follow
    their tool use, so an update recorded before a user message lands after it. Without
    ``system_update`` system messages are left out (the replayed prompt is the system field)."""
    prepared = prepare_messages(messages, model, texts, anthropic_tool_call_id)
    out: list[JSON] = []
    pending: list[JSON] = []
    i = 0
    while i < len(prepared):
        message, role = prepared[i], prepared[i].get("role")
        if role == "toolResult":
            j = i
            while j < len(prepared) and prepared[j].get("role") == "toolResult":
                j += 1
            out.append({"role": "user", "content": [_anthropic_tool_result(r, texts) for r in prepared[i:j]]})
            i = j
            continue
        if role == "system":
            text = system_update(message) if system_update is not None else ""
            if text:
                pending.append({"role": "system", "content": [{"type": "text", "text": _clean(text)}]})
            i += 1
            continue
        converted = _anthropic_user(message) if role == "user" else _anthropic_assistant(message) if role == "assistant" else None
        if converted is not None:
            if role == "assistant":
                out += pending
                pending.clear()
            out.append(converted)
        i += 1
    out += pending
    if cache_control and out and out[-1]["role"] in ("user", "system"):
        _mark_last_user(out[-1], cache_control)
    return out


def _mark_last_user(message: JSON, cache_control: Mapping) -> None:
    content = message["content"]
    if isinstance(content, str):
        message["content"] = [{"type": "text", "text": content, "cache_control": dict(cache_control)}]
    elif content and content[-1]["type"] in ("text", "image", "tool_result"):
        content[-1]["cache_control"] = dict(cache_control)


def anthropic_tools(tools: Sequence[ToolDefinition | Mapping], cache_control: Mapping | None = None,
                    eager_tool_input: bool = True) -> list[JSON]:
    """Tool definitions (pi asks for eager input streaming unless the model's compat says otherwise)."""
    out = []
    for index, tool in enumerate(map(_tool_json, tools)):
        schema = tool.get("parameters") or {}
        entry: JSON = {"name": tool["name"], "description": tool.get("description")}
        if eager_tool_input:
            entry["eager_input_streaming"] = True
        entry["input_schema"] = {"type": "object", "properties": schema.get("properties") or {},
                                 "required": schema.get("required") or []}
        if cache_control and index == len(tools) - 1:
            entry["cache_control"] = dict(cache_control)
        out.append(entry)
    return out


def to_anthropic_messages(messages: Iterable[Any], *, system_prompt: str | None,
                          tools: Sequence[ToolDefinition | Mapping], model: TargetModel, texts: ConvertTexts,
                          max_tokens: int | None = None, stream: bool = True, thinking_budget: int | None = None,
                          cache: bool = False, eager_tool_input: bool = True,
                          system_update: SystemUpdate | None = None) -> JSON:
    """The messages-API request body pi sends (``cache`` adds pi's ephemeral cache marks)."""
    mark = {"type": "ephemeral"} if cache else None
    body: JSON = {"model": model.id,
                  "messages": anthropic_messages(messages, model=model, texts=texts, cache_control=mark,
                                                 system_update=system_update),
                  "max_tokens": max_tokens or model.max_tokens, "stream": stream}
    if system_prompt:
        body["system"] = [{"type": "text", "text": _clean(system_prompt), **({"cache_control": mark} if mark else {})}]
    if tools:
        body["tools"] = anthropic_tools(tools, mark, eager_tool_input)
    if model.reasoning:
        body["thinking"] = ({"type": "enabled", "budget_tokens": thinking_budget, "display": "summarized"}
                            if thinking_budget else {"type": "disabled"})
    return body


# =========================================================================== reply reading


def _anthropic_usage(out: JSON, raw: Mapping, model: TargetModel) -> None:
    usage = out["usage"]
    for wire, key in (("input_tokens", "input"), ("output_tokens", "output"),
                      ("cache_read_input_tokens", "cacheRead"), ("cache_creation_input_tokens", "cacheWrite")):
        if raw.get(wire) is not None:
            usage[key] = count(raw.get(wire))
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
    out = new_reply(model, timestamp)
    if isinstance(response.get("id"), str):
        out["responseId"] = response["id"]
    out["content"] = [b for b in (_anthropic_block(x, redacted_text) for x in response.get("content") or []) if b]
    usage = response.get("usage") or {}
    out["usage"]["cacheWrite1h"] = count((usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens"))
    _anthropic_usage(out, usage, model)
    return finish_reply(out, response.get("stop_reason"), _ANTHROPIC_STOP, "anthropic")


def from_anthropic_stream(events: Iterable[Mapping], *, model: TargetModel, timestamp: int | float,
                          redacted_text: str = "") -> JSON:
    """pi's assistant message from decoded messages-API stream events (the ``data`` objects)."""
    out = new_reply(model, timestamp)
    blocks: dict[Any, JSON] = {}
    stop: Any = None
    for event in events:
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message") or {}
            out["responseId"] = message.get("id")
            usage = message.get("usage") or {}
            out["usage"]["cacheWrite1h"] = count((usage.get("cache_creation") or {}).get("ephemeral_1h_input_tokens"))
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
                block["arguments"] = parse_arguments(partial)
    return finish_reply(out, stop, _ANTHROPIC_STOP, "anthropic")


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


def text_delta(frame: Any) -> str | None:
    """The answer text one stream event adds (a ``text_delta``), or None."""
    if not isinstance(frame, dict):
        return None
    delta = frame.get("delta") if frame.get("type") == "content_block_delta" else None
    text = delta.get("text") if isinstance(delta, dict) and delta.get("type") == "text_delta" else None
    return text if isinstance(text, str) else None


def reported(usage: Mapping[str, Any]) -> tuple[int, int, int]:
    """An answer's input tokens (cached ones included), those read from and written to the cache."""
    read, write = count(usage.get("cache_read_input_tokens")), count(usage.get("cache_creation_input_tokens"))
    return count(usage.get("input_tokens")) + read + write, read, write


# =========================================================================== reply building


_STOP_OF = {"stop": "end_turn", "length": "max_tokens", "toolUse": "tool_use"}


def _wire_usage(u: JSON) -> JSON:
    return {"input_tokens": u["input"], "output_tokens": u["output"], "cache_read_input_tokens": u["cacheRead"],
            "cache_creation_input_tokens": u["cacheWrite"]}


def _wire_blocks(r: JSON, index: int) -> list[JSON]:
    blocks: list[JSON] = []
    if r.get("thinking") is not None:
        blocks.append({"type": "thinking", "thinking": r["thinking"], "signature": r.get("thinkingSignature") or ""})
    if r.get("text") is not None:
        blocks.append({"type": "text", "text": r["text"]})
    for j, c in enumerate(r.get("toolCalls") or []):
        blocks.append({"type": "tool_use", "id": c.get("id") or f"call_{index}_{j}", "name": c["name"],
                       "input": c.get("arguments") or {}})
    return blocks


def anthropic_message(r: JSON, model: str, index: int) -> JSON:
    """The non-streaming ``message`` object for a normalized scripted reply."""
    return {"id": f"msg_loopback_{index}", "type": "message", "role": "assistant", "model": model,
            "content": _wire_blocks(r, index), "stop_reason": _STOP_OF[r["stopReason"]],
            "stop_sequence": None, "usage": _wire_usage(r["usage"])}


def _block_events(i: int, block: JSON) -> Iterator[tuple[str, JSON]]:
    kind = block["type"]
    start = {"thinking": {"type": "thinking", "thinking": ""}, "text": {"type": "text", "text": ""},
             "tool_use": {"type": "tool_use", "id": block.get("id"), "name": block.get("name"), "input": {}}}[kind]
    yield "content_block_start", {"type": "content_block_start", "index": i, "content_block": start}
    if kind == "thinking":
        yield "content_block_delta", {"type": "content_block_delta", "index": i,
                                      "delta": {"type": "thinking_delta", "thinking": block["thinking"]}}
        if block["signature"]:
            yield "content_block_delta", {"type": "content_block_delta", "index": i,
                                          "delta": {"type": "signature_delta", "signature": block["signature"]}}
    elif kind == "text":
        yield "content_block_delta", {"type": "content_block_delta", "index": i,
                                      "delta": {"type": "text_delta", "text": block["text"]}}
    else:
        yield "content_block_delta", {"type": "content_block_delta", "index": i,
                                      "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}}
    yield "content_block_stop", {"type": "content_block_stop", "index": i}


def anthropic_events(r: JSON, model: str, index: int, partial: bool = False) -> Iterator[tuple[str, JSON]]:
    """(event name, data) of a streamed message (``partial`` stops after the text blocks)."""
    usage = _wire_usage(r["usage"])
    start = {**anthropic_message(r, model, index), "content": [], "stop_reason": None,
             "usage": {**usage, "output_tokens": 0}}
    yield "message_start", {"type": "message_start", "message": start}
    for i, block in enumerate(_wire_blocks(r, index)):
        if partial and block["type"] == "tool_use":
            return
        yield from _block_events(i, block)
    if partial:
        return
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": _STOP_OF[r["stopReason"]], "stop_sequence": None},
                            "usage": {"output_tokens": usage["output_tokens"]}}
    yield "message_stop", {"type": "message_stop"}


#: the ``error.type`` of an error body, by HTTP status (else ``api_error``)
_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 402: "billing_error",
                403: "permission_error", 404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
                504: "timeout_error", 529: "overloaded_error"}


def error_body(status: int, message: str) -> JSON:
    """An error as the provider writes it for HTTP ``status``: ``{"type": "error", "error": {type, message}}``."""
    return {"type": "error", "error": {"type": _ERROR_TYPES.get(status, "api_error"), "message": message}}


# =========================================================================== reading back


def read_message(message: JSON, names: dict[str, str]) -> list[JSON]:
    """One message of a body as pi's messages (a user message of tool results: one each, then its text)."""
    if message.get("role") not in ("user", "assistant"):
        return []  # a system message inside messages is kept whole, not summarized
    content = message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
    if message.get("role") == "assistant":
        out: list[JSON] = []
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
        return [assistant(out)]
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    out = [result(str(b.get("tool_use_id")), names.get(str(b.get("tool_use_id")), ""), text(b.get("content")),
                  bool(b.get("is_error"))) for b in results]
    said = text([b for b in blocks if isinstance(b, dict) and b.get("type") == "text"])
    return out + ([user(said)] if said else [])


def tool_results(index: int, message: JSON, names: dict[str, str], out: list[ToolResult]) -> None:
    """The ``tool_result`` blocks of ``message`` (at ``index``) are added to ``out``."""
    content = message.get("content")
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_use":
            names[str(block.get("id"))] = str(block.get("name") or "")
        elif block.get("type") == "tool_result":
            out.append(ToolResult(index, names.get(str(block.get("tool_use_id")), ""), joined(block.get("content")),
                                  setter(block, "content")))


# =========================================================================== where a summary may cut (the proxy's)

#: a ``role: "system"`` message inside ``messages`` (Claude Code's) is kept whole where it stands;
#: the summary message is one user message of text blocks
kept_whole, parts, summary_message = history.kept_whole, history.text_parts, history.text_summary


def head(messages: list[Any]) -> int:
    """No leading message is set apart: ``system`` is outside ``messages``, and a system message
    inside them is kept whole among the replaced ones (:func:`kept_whole`)."""
    return 0


def turn_start(message: Any) -> bool:
    """Is ``message`` the user's own (a user message without ``tool_result`` blocks)?"""
    if not isinstance(message, dict) or message.get("role") != "user":
        return False
    content = message.get("content")
    return not (isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result"
                                                  for b in content))


def boundary(messages: list[Any], at: int) -> bool:
    """May the kept messages start at ``messages[at]``: any message but a user message of
    ``tool_result`` blocks (its calls would be summarized)?"""
    message = messages[at]
    return turn_start(message) or not (isinstance(message, dict) and message.get("role") == "user")

# =========================================================================== summary calls


def summary_body(model: str, system_prompt: str, user_text: str, max_tokens: int, *,
                 thinking_budget: int | None = None) -> JSON:
    """A summary call's body: ``system`` a plain string (left out when empty), one user text block."""
    body: JSON = {"model": model, "max_tokens": max_tokens}
    if system_prompt:
        body["system"] = system_prompt
    body["messages"] = [{"role": "user", "content": [{"type": "text", "text": user_text}]}]
    if thinking_budget is not None:
        body["thinking"] = {"type": "enabled", "budget_tokens": thinking_budget}
    return body


def read_summary(data: JSON) -> SummaryAnswer | None:
    """A summary call's answer (``text`` and ``thinking`` blocks each joined by newlines; None
    without a content list); ``stop`` is ``stop_reason``."""
    content = data.get("content")
    if not isinstance(content, list):
        return None
    blocks = [block for block in map(obj, content) if block is not None]
    raw = obj(data.get("usage")) or {}
    usage = (count(raw.get("input_tokens")), count(raw.get("output_tokens")), count(raw.get("cache_read_input_tokens")),
             count(raw.get("cache_creation_input_tokens")))
    return SummaryAnswer(text=_joined(blocks, "text") or "", thinking=_joined(blocks, "thinking"), usage=usage,
                         stop=data.get("stop_reason"))


def _joined(blocks: list[JSON], kind: str) -> str | None:
    """The ``kind`` field of every ``kind`` block, joined by newlines; None if there are none."""
    found = [b[kind] for b in blocks if b.get("type") == kind and isinstance(b.get(kind), str)]
    return "\n".join(found) if found else None
