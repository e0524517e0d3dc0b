"""pi's LLM messages ⇄ provider wire formats (OpenAI chat completions, Anthropic messages).

Requests: :func:`to_openai_chat` and :func:`to_anthropic_messages` turn the projected
message list (``user`` / ``assistant`` / ``toolResult``, as
:func:`pipeline.session.projection.convert_to_llm` returns them; typed views or their JSON),
a system prompt and tool definitions into a request body. Both first apply
:func:`prepare_messages`, which does what pi-ai does before any provider sees the list:

* failed replies (``stopReason`` ``error`` / ``aborted``) are dropped;
* a tool call left without a result gets an error result (text from :class:`ConvertTexts`);
* replies from another model lose what only that model can read: redacted thinking is
  dropped, other thinking becomes plain text, tool-call ids are normalised for the target
  (Anthropic: ``[A-Za-z0-9_-]``, at most 64; OpenAI: ``call|item`` ids folded, 40 at most
  for provider ``openai``) and the matching results follow;
* images go to a placeholder text when the target model takes no images;
* ``system`` messages (later system-prompt changes a session recorded, pi 1.x) stay in
  place, except that one arriving while tool calls wait for results follows the results;
  the converters send them as the caller's ``system_update`` renders them (see
  :func:`openai_messages`, :func:`anthropic_messages`), or leave them out without one.

Replies: :func:`from_openai_chat`, :func:`from_anthropic_messages` (one JSON body) and
:func:`from_openai_stream`, :func:`from_anthropic_stream` (the decoded SSE events) build
pi's assistant message JSON (content blocks, ``stopReason``, usage with cost);
:func:`error_message` gives the ``errorMessage`` pi records for an HTTP error and
:func:`error_reply` the failed assistant message itself.

No sentence the model reads is written here: the few texts the conversion inserts come in
a :class:`ConvertTexts` (a host fills it from its profile).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Mapping, Sequence

from pipeline.js import js_json
from pipeline.llm.convert_reply import (
    calculate_cost, error_message, error_reply, from_anthropic_messages, from_anthropic_stream, from_openai_chat,
    from_openai_stream, openai_usage,
)
from pipeline.llm.convert_types import (
    JSON, ConvertTexts, ModelCost, OpenAICompat, TargetModel, ToolDefinition, _blocks, _clean, _raw, _tool_json,
)

#: How a later ``system`` message is rendered for a model that reads them mid-conversation.
SystemUpdate = Callable[[Mapping[str, Any]], str]

__all__ = [
    "SystemUpdate", "ConvertTexts", "ModelCost", "OpenAICompat", "TargetModel", "ToolDefinition",
    "calculate_cost", "error_message", "error_reply", "from_anthropic_messages", "from_anthropic_stream",
    "from_openai_chat", "from_openai_stream", "openai_usage", "prepare_messages", "to_anthropic_messages", "to_openai_chat",
    "anthropic_messages", "anthropic_tools", "openai_messages", "openai_tools", "anthropic_tool_call_id",
    "openai_tool_call_id",
]



# =========================================================================== preparation


def _image_placeholder(content: list, placeholder: str) -> list:
    out, previous = [], False
    for block in content:
        if block.get("type") == "image":
            if not previous:
                out.append({"type": "text", "text": placeholder})
            previous = True
            continue
        out.append(block)
        previous = block.get("text") == placeholder
    return out


def _downgrade_images(message: Mapping, model: TargetModel, texts: ConvertTexts) -> Mapping:
    if "image" in model.input:
        return message
    role = message.get("role")
    if role == "user" and isinstance(message.get("content"), list):
        return {**message, "content": _image_placeholder(message["content"], texts.user_image_omitted)}
    if role == "toolResult":
        return {**message, "content": _image_placeholder(_blocks(message.get("content")), texts.tool_image_omitted)}
    return message


def _foreign_block(block: Mapping, same: bool, normalize: Callable[[str], str] | None, ids: dict) -> list:
    kind = block.get("type")
    if kind == "thinking":
        if block.get("redacted"):
            return [block] if same else []
        if same and block.get("thinkingSignature"):
            return [block]
        thinking = block.get("thinking") or ""
        if not thinking.strip():
            return []
        return [block] if same else [{"type": "text", "text": thinking}]
    if kind == "text":
        return [block] if same else [{"type": "text", "text": block.get("text") or ""}]
    if kind == "toolCall":
        call = dict(block)
        if not same:
            call.pop("thoughtSignature", None)
            if normalize is not None:
                new = normalize(str(call.get("id") or ""))
                if new != call.get("id"):
                    ids[call.get("id")] = new
                    call["id"] = new
        return [call]
    return [block]


def _transform(message: Mapping, model: TargetModel, normalize: Callable[[str], str] | None, ids: dict) -> Mapping:
    role = message.get("role")
    if role == "toolResult":
        new = ids.get(message.get("toolCallId"))
        return {**message, "toolCallId": new} if new and new != message.get("toolCallId") else message
    if role != "assistant":
        return message
    same = (message.get("provider"), message.get("api"), message.get("model")) == (model.provider, model.api, model.id)
    content = [b for block in _blocks(message.get("content")) for b in _foreign_block(block, same, normalize, ids)]
    return {**message, "content": content}


def prepare_messages(messages: Iterable[Any], model: TargetModel, texts: ConvertTexts,
                     normalize_id: Callable[[str], str] | None = None) -> list[JSON]:
    """pi-ai's provider-neutral pass over the message list (see the module docstring)."""
    ids: dict = {}
    staged = []
    for message in map(_raw, messages):
        message = dict(message)
        if message.get("content") is None:
            message["content"] = []
        staged.append(_transform(_downgrade_images(message, model, texts), model, normalize_id, ids))
    return _pair_tool_results(staged, texts)


def _pair_tool_results(messages: list[Mapping], texts: ConvertTexts) -> list[JSON]:
    out: list[JSON] = []
    pending: list[Mapping] = []
    answered: set = set()

    held: list[Mapping] = []  # system messages that came while tool calls were open: after their results

    def flush() -> None:
        for call in pending:
            if call.get("id") not in answered:
                out.append({"role": "toolResult", "toolCallId": call.get("id"), "toolName": call.get("name"),
                            "content": [{"type": "text", "text": texts.orphan_tool_result}], "isError": True})
        pending.clear()
        answered.clear()
        out.extend(dict(m) for m in held)
        held.clear()

    for message in messages:
        role = message.get("role")
        if role == "assistant":
            flush()
            if message.get("stopReason") in ("error", "aborted"):
                continue
            pending.extend(b for b in _blocks(message.get("content")) if b.get("type") == "toolCall")
        elif role == "toolResult":
            answered.add(message.get("toolCallId"))
        elif role == "user":
            flush()
        elif role == "system" and pending:
            held.append(message)
            continue
        out.append(dict(message))
    flush()
    return out


# =========================================================================== OpenAI request


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


def _has_tool_history(messages: Sequence[Any]) -> bool:
    """pi sends ``tools: []`` when there are no tools but the history has tool calls or results."""
    for message in map(_raw, messages):
        if message.get("role") == "toolResult":
            return True
        if message.get("role") == "assistant" and any(b.get("type") == "toolCall" for b in _blocks(message.get("content"))):
            return True
    return False


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
    elif _has_tool_history(messages):
        body["tools"] = []
    if reasoning_effort and model.reasoning and compat.supports_reasoning_effort:
        body["reasoning_effort"] = reasoning_effort
    return body


# =========================================================================== Anthropic request


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


