"""pi-ai's provider-neutral pass over a message list, before any wire format sees it.

:func:`prepare_messages` does what pi-ai does before a provider's converter runs:

* failed replies (``stopReason`` ``error`` / ``aborted``) are dropped;
* a tool call left without a result gets an error result (text from :class:`ConvertTexts`);
* replies from another model lose what only that model can read: redacted thinking is
  dropped, other thinking becomes plain text, tool-call ids are normalised for the target
  (the format module's id rule) and the matching results follow;
* images go to a placeholder text when the target model takes no images;
* ``system`` messages (later system-prompt changes a session recorded, pi 1.x) stay in
  place, except that one arriving while tool calls wait for results follows the results.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Sequence

from pipeline.llm.wire.types import JSON, ConvertTexts, TargetModel, _blocks, _raw

#: How a later ``system`` message is rendered for a model that reads them mid-conversation.
SystemUpdate = Callable[[Mapping[str, Any]], str]

__all__ = ["SystemUpdate", "has_tool_history", "prepare_messages"]


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


def has_tool_history(messages: Sequence[Any]) -> bool:
    """pi sends ``tools: []`` when there are no tools but the history has tool calls or results."""
    for message in map(_raw, messages):
        if message.get("role") == "toolResult":
            return True
        if message.get("role") == "assistant" and any(b.get("type") == "toolCall" for b in _blocks(message.get("content"))):
            return True
    return False
