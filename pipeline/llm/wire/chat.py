"""OpenAI chat completions (``POST /v1/chat/completions``): everything the project knows of the format.

* the conversation's key in a body: :data:`KEY` (``messages``);
* request building: :func:`to_openai_chat` (pi's messages, system prompt and tools as the body pi
  sends, after :func:`~pipeline.llm.wire.prepare.prepare_messages`);
* reply reading: :func:`from_openai_chat` (one JSON body), :func:`from_openai_stream` (the decoded
  chunks), :func:`text_delta` (the text one chunk adds), :func:`reported` (the input usage of an
  answer, for the proxy);
* reply building (what the loopback server sends): :func:`openai_completion`, :func:`openai_chunks`
  from a scripted reply (:mod:`pipeline.loopback.chat` says its shape);
* reading back: :func:`read_message` (one message of a body as pi's messages),
  :func:`tool_results` (the ``role: tool`` messages, each found at its call).
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Iterator, Mapping, Sequence

from pipeline.js import js_json
from pipeline.llm.wire import history
from pipeline.llm.wire.history import ToolResult, arguments, assistant, call, joined, result, setter, text, user
from pipeline.llm.wire.prepare import SystemUpdate, has_tool_history, prepare_messages
from pipeline.llm.wire.reply import SummaryAnswer, calculate_cost, count, finish_reply, new_reply, obj, parse_arguments
from pipeline.llm.wire.types import JSON, ConvertTexts, OpenAICompat, TargetModel, ToolDefinition, _blocks, _clean, _tool_json

KEY = "messages"

_OPENAI_FINISH = {"stop": "stop", "end": "stop", "length": "length", "function_call": "toolUse",
                  "tool_calls": "toolUse"}


_REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")


# =========================================================================== request


def openai_tool_call_id(id: str, model: TargetModel) -> str:
    """pi's id normalisation for chat completions (``call|item`` ids from the responses API)."""
    if "|" in id:
        call, _, item = id.partition("|")
        call, item = re.sub(r"[^a-zA-Z0-9_-]", "_", call), re.sub(r"[^a-zA-Z0-9_-]", "_", item)
        combined = f"{call}_{item}" if item else call
        if len(combined) <= 40:
            return combined
        digest = _short_hash(id)[:8]
        return f"{call[:max(1, 40 - len(digest) - 1)]}_{digest}"
    return id[:40] if model.provider == "openai" and len(id) > 40 else id


def _short_hash(text: str) -> str:
    """pi-ai's ``shortHash``: two 32-bit FNV-style mixes of the UTF-16 code units, base 36."""
    h1, h2 = 0xDEADBEEF, 0x41C6CE57
    data = text.encode("utf-16-le", "surrogatepass")
    for ch in (int.from_bytes(data[i:i + 2], "little") for i in range(0, len(data), 2)):
        h1 = _imul(h1 ^ ch, 2654435761)
        h2 = _imul(h2 ^ ch, 1597334677)
    h1 = _imul(h1 ^ (h1 >> 16), 2246822507) ^ _imul(h2 ^ (h2 >> 13), 3266489909)
    h2 = _imul(h2 ^ (h2 >> 16), 2246822507) ^ _imul(h1 ^ (h1 >> 13), 3266489909)
    return _base36(h2 & 0xFFFFFFFF) + _base36(h1 & 0xFFFFFFFF)


def _imul(a: int, b: int) -> int:
    return ((a & 0xFFFFFFFF) * (b & 0xFFFFFFFF)) & 0xFFFFFFFF


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def _openai_user(message: Mapping) -> JSON | None:
    content = message.get("content")
    if isinstance(content, str):
        return {"role": "user", "content": _clean(content)}
    parts = [{"type": "text", "text": _clean(b.get("text") or "")} if b.get("type") == "text" else
             {"type": "image_url", "image_url": {"url": f"data:{b.get('mimeType')};base64,{b.get('data')}"}}
             for b in _blocks(content)]
    return {"role": "user", "content": parts} if parts else None


def _openai_assistant(message: Mapping) -> JSON | None:
    blocks = _blocks(message.get("content"))
    out: JSON = {"role": "assistant", "content": None}
    text = "".join(_clean(b.get("text") or "") for b in blocks if b.get("type") == "text" and (b.get("text") or "").strip())
    if text:
        out["content"] = text
    thinking = [b for b in blocks if b.get("type") == "thinking" and (b.get("thinking") or "").strip()]
    signature = thinking[0].get("thinkingSignature") if thinking else None
    if signature:
        out[signature] = "\n".join(b.get("thinking") for b in thinking)
    calls = [b for b in blocks if b.get("type") == "toolCall"]
    if calls:
        out["tool_calls"] = [{"id": c.get("id"), "type": "function",
                              "function": {"name": c.get("name"), "arguments": js_json(c.get("arguments"))}}
                             for c in calls]
    return out if out["content"] or calls else None


def _openai_tool_results(results: list[Mapping], model: TargetModel, texts: ConvertTexts,
                         compat: OpenAICompat) -> list[JSON]:
    out, images = [], []
    for result in results:
        blocks = _blocks(result.get("content"))
        text = "\n".join(b.get("text") or "" for b in blocks if b.get("type") == "text")
        has_images = any(b.get("type") == "image" for b in blocks)
        message: JSON = {"role": "tool", "content": _clean(text or (texts.tool_image_only if has_images
                                                                      else texts.empty_tool_output)),
                         "tool_call_id": result.get("toolCallId")}
        if compat.requires_tool_result_name and result.get("toolName"):
            message["name"] = result["toolName"]
        out.append(message)
        if has_images and "image" in model.input:
            images += [{"type": "image_url", "image_url": {"url": f"data:{b.get('mimeType')};base64,{b.get('data')}"}}
                       for b in blocks if b.get("type") == "image"]
    if images:
        out.append({"role": "user", "content": [{"type": "text", "text": texts.tool_images_intro}, *images]})
    return out


def openai_messages(messages: Iterable[Any], *, system_prompt: str | None, model: TargetModel,
                    texts: ConvertTexts, compat: OpenAICompat = OpenAICompat(),
                    system_update: SystemUpdate | None = None) -> list[JSON]:
    """The ``messages`` array of a chat-completions request.

    A ``system`` message in ``messages`` (a later system-prompt change a session recorded) is
    sent in place as an instruction message holding ``system_update(message)`` (skipped when
    that is empty, or when no ``system_update`` is given: the model then gets the replayed
    prompt as ``system_prompt`` instead)."""
    prepared = prepare_messages(messages, model, texts, lambda id: openai_tool_call_id(id, model))
    out: list[JSON] = []
    instruction = "developer" if model.reasoning and compat.supports_developer_role else "system"
    if system_prompt:
        out.append({"role": instruction, "content": _clean(system_prompt)})
    i = 0
    while i < len(prepared):
        message = prepared[i]
        role = message.get("role")
        if role == "system":
            text = system_update(message) if system_update is not None else ""
            if text:
                out.append({"role": instruction, "content": _clean(text)})
            i += 1
            continue
        if role == "toolResult":
            j = i
            while j < len(prepared) and prepared[j].get("role") == "toolResult":
                j += 1
            out += _openai_tool_results(prepared[i:j], model, texts, compat)
            i = j
            continue
        converted = _openai_user(message) if role == "user" else _openai_assistant(message) if role == "assistant" else None
        if converted is not None:
            out.append(converted)
        i += 1
    return out


def openai_tools(tools: Sequence[ToolDefinition | Mapping], compat: OpenAICompat = OpenAICompat()) -> list[JSON]:
    out = []
    for tool in map(_tool_json, tools):
        function: JSON = {"name": tool["name"], "description": tool.get("description"),
                          "parameters": tool.get("parameters")}
        if compat.supports_strict_mode:
            function["strict"] = False
        out.append({"type": "function", "function": function})
    return out


def to_openai_chat(messages: Sequence[Any], *, system_prompt: str | None, tools: Sequence[ToolDefinition | Mapping],
                   model: TargetModel, texts: ConvertTexts, max_tokens: int | None = None, stream: bool = True,
                   reasoning_effort: str | None = None, compat: OpenAICompat = OpenAICompat(),
                   system_update: SystemUpdate | None = None) -> JSON:
    """The chat-completions request body pi sends (keys in pi's order)."""
    converted = openai_messages(messages, system_prompt=system_prompt, model=model, texts=texts, compat=compat,
                                system_update=system_update)
    body: JSON = {"model": model.id, "messages": converted, "stream": stream}
    if stream:
        body["stream_options"] = {"include_usage": True}
    if compat.supports_store:
        body["store"] = False
    if max_tokens:
        body[compat.max_tokens_field] = max_tokens
    if tools:
        body["tools"] = openai_tools(tools, compat)
    elif has_tool_history(messages):
        body["tools"] = []
    if reasoning_effort and model.reasoning and compat.supports_reasoning_effort:
        body["reasoning_effort"] = reasoning_effort
    return body


# =========================================================================== reply reading


def openai_usage(raw: Mapping, model: TargetModel) -> JSON:
    details = raw.get("prompt_tokens_details") or {}
    cache_read = count(details.get("cached_tokens")) or count(raw.get("prompt_cache_hit_tokens"))
    cache_write = count(details.get("cache_write_tokens"))
    uncached = max(0, count(raw.get("prompt_tokens")) - cache_read - cache_write)
    output = count(raw.get("completion_tokens"))
    usage = {"input": uncached, "output": output, "cacheRead": cache_read, "cacheWrite": cache_write,
             "reasoning": count((raw.get("completion_tokens_details") or {}).get("reasoning_tokens")),
             "totalTokens": uncached + output + cache_read + cache_write, "cost": {}}
    calculate_cost(usage, model.cost)
    return usage


def from_openai_chat(response: Mapping, *, model: TargetModel, timestamp: int | float) -> JSON:
    """pi's assistant message for a non-streaming chat-completions response."""
    out = new_reply(model, timestamp)
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
                               "arguments": parse_arguments(function.get("arguments"))})
    if isinstance(response.get("usage"), dict):
        out["usage"] = openai_usage(response["usage"], model)
    return finish_reply(out, choice.get("finish_reason"), _OPENAI_FINISH, "openai")


def from_openai_stream(chunks: Iterable[Mapping], *, model: TargetModel, timestamp: int | float) -> JSON:
    """pi's assistant message from decoded chat-completion chunks (``[DONE]`` left out)."""
    out = new_reply(model, timestamp)
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
        block["arguments"] = parse_arguments(block.pop("partialArgs"))
    return finish_reply(out, finish, _OPENAI_FINISH, "openai")


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


def text_delta(frame: Any) -> str | None:
    """The answer text one stream chunk adds (``delta.content``), or None."""
    if not isinstance(frame, dict):
        return None
    choices = frame.get("choices")
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    delta = first.get("delta")
    text = delta.get("content") if isinstance(delta, dict) else None
    return text if isinstance(text, str) else None


def reported(usage: Mapping[str, Any]) -> tuple[int, int, int]:
    """An answer's input tokens (cached ones included), those read from and written to the cache."""
    details = usage.get("prompt_tokens_details") or {}
    return count(usage.get("prompt_tokens")), count(details.get("cached_tokens")), 0


# =========================================================================== reply building


_FINISH_OF = {"stop": "stop", "length": "length", "toolUse": "tool_calls"}


def _wire_usage(u: JSON) -> JSON:
    prompt = u["input"] + u["cacheRead"] + u["cacheWrite"]
    return {"prompt_tokens": prompt, "completion_tokens": u["output"], "total_tokens": prompt + u["output"],
            "prompt_tokens_details": {"cached_tokens": u["cacheRead"], "cache_write_tokens": u["cacheWrite"]}}


def _wire_calls(r: JSON, index: int) -> list[JSON]:
    return [{"id": c.get("id") or f"call_{index}_{j}", "type": "function",
             "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments") or {})}}
            for j, c in enumerate(r.get("toolCalls") or [])]


def openai_completion(r: JSON, model: str, index: int) -> JSON:
    """The non-streaming ``chat.completion`` object for a normalized scripted reply."""
    message: JSON = {"role": "assistant", "content": r.get("text")}
    if r.get("thinking") is not None:
        message["reasoning_content"] = r["thinking"]
    calls = _wire_calls(r, index)
    if calls:
        message["tool_calls"] = calls
    return {"id": f"chatcmpl-loopback-{index}", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": _FINISH_OF[r["stopReason"]]}],
            "usage": _wire_usage(r["usage"])}


def openai_chunks(r: JSON, model: str, index: int, include_usage: bool, partial: bool = False) -> Iterator[str]:
    """SSE ``data:`` payloads of a streamed completion (``partial`` stops before the finish)."""
    def chunk(delta: JSON, finish: str | None = None, usage: JSON | None = None, choices: bool = True) -> str:
        body: JSON = {"id": f"chatcmpl-loopback-{index}", "object": "chat.completion.chunk",
                      "created": 0, "model": model,
                      "choices": [{"index": 0, "delta": delta, "finish_reason": finish}] if choices else []}
        if usage is not None:
            body["usage"] = usage
        return json.dumps(body)

    yield chunk({"role": "assistant", "content": ""})
    if r.get("thinking"):
        yield chunk({"reasoning_content": r["thinking"]})
    if r.get("text"):
        yield chunk({"content": r["text"]})
    if partial:
        return
    for j, call in enumerate(_wire_calls(r, index)):
        yield chunk({"tool_calls": [{"index": j, **call}]})
    yield chunk({}, _FINISH_OF[r["stopReason"]])
    if include_usage:
        yield chunk({}, usage=_wire_usage(r["usage"]), choices=False)
    yield "[DONE]"


#: the ``type`` of an error body, by HTTP status (else ``server_error``)
_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error",
                413: "invalid_request_error", 429: "rate_limit_exceeded"}


def error_body(status: int, message: str, code: str | None = None) -> JSON:
    """An error as the provider writes it for HTTP ``status``: ``{"error": {message, type, param, code}}``."""
    return {"error": {"message": message, "type": _ERROR_TYPES.get(status, "server_error"), "param": None,
                      "code": code}}


# =========================================================================== reading back


def read_message(message: JSON, names: dict[str, str]) -> list[JSON]:
    """One message of a body as pi's messages (none for a system or developer message)."""
    role = message.get("role")
    if role == "assistant":
        out: list[JSON] = [{"type": "text", "text": text(message.get("content"))}] \
            if text(message.get("content")) else []
        for tool_call in message.get("tool_calls") or []:
            function = tool_call.get("function") or {} if isinstance(tool_call, dict) else {}
            names[str(tool_call.get("id"))] = str(function.get("name") or "")
            out.append(call(str(tool_call.get("id")), names[str(tool_call.get("id"))],
                            arguments(function.get("arguments"))))
        return [assistant(out)]
    if role == "tool":
        call_id = str(message.get("tool_call_id"))
        return [result(call_id, names.get(call_id, ""), text(message.get("content")), False)]
    if role == "user":
        return [user(text(message.get("content")))]
    return []


def tool_results(index: int, message: JSON, names: dict[str, str], out: list[ToolResult]) -> None:
    """The tool result ``message`` (at ``index``) is, if it is one, added to ``out``."""
    for tool_call in message.get("tool_calls") or []:
        if isinstance(tool_call, dict):
            names[str(tool_call.get("id"))] = str((tool_call.get("function") or {}).get("name") or "")
    if message.get("role") == "tool":
        out.append(ToolResult(index, names.get(str(message.get("tool_call_id")), ""), joined(message.get("content")),
                              setter(message, "content")))


# =========================================================================== where a summary may cut (the proxy's)

#: system and developer messages are kept whole; the summary message is one user message of text parts
kept_whole, parts, summary_message = history.kept_whole, history.text_parts, history.text_summary


def head(messages: list[Any]) -> int:
    """How many leading messages are system or developer messages (set apart, never summarized)."""
    return history.leading(messages, kept_whole)


def turn_start(message: Any) -> bool:
    """Is ``message`` the user's own?"""
    return isinstance(message, dict) and message.get("role") == "user"


def boundary(messages: list[Any], at: int) -> bool:
    """May the kept messages start at ``messages[at]``: any message but a ``role: tool`` result
    (its call would be summarized)?"""
    return not (isinstance(messages[at], dict) and messages[at].get("role") == "tool")

# =========================================================================== summary calls


def summary_body(model: str, system_prompt: str, user_text: str, max_tokens: int, *,
                 max_tokens_field: str = "max_completion_tokens", reasoning_level: str | None = None) -> JSON:
    """A summary call's body: the system and user message, the output cap in ``max_tokens_field``."""
    body: JSON = {
        "model": model,
        "messages": [{"role": "system", "content": system_prompt}, {"role": "user", "content": user_text}],
        max_tokens_field: max_tokens,
        "stream": False,
    }
    if reasoning_level:
        body["reasoning_effort"] = reasoning_level
    return body


def read_summary(data: JSON) -> SummaryAnswer | None:
    """A summary call's answer (``choices[0].message``; None without one); ``stop`` is ``finish_reason``."""
    choices = data.get("choices")
    choice = obj(choices[0]) if isinstance(choices, list) and choices else None
    message = obj(choice.get("message")) if choice else None
    if message is None or choice is None:
        return None
    first, second = message.get("reasoning_content"), message.get("reasoning")
    thinking = (first if isinstance(first, str) else None) or (second if isinstance(second, str) else None)
    raw = obj(data.get("usage")) or {}
    details = obj(raw.get("prompt_tokens_details")) or {}
    cache_read, cache_write = count(details.get("cached_tokens")), count(details.get("cache_write_tokens"))
    uncached = max(0, count(raw.get("prompt_tokens")) - cache_read - cache_write)
    return SummaryAnswer(text=_content_text(message.get("content")),
                         thinking=thinking,
                         usage=(uncached, count(raw.get("completion_tokens")), cache_read, cache_write),
                         stop=choice.get("finish_reason"))


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = (obj(part) or {} for part in content)
        return "\n".join(p["text"] for p in parts if isinstance(p.get("text"), str))
    return ""
