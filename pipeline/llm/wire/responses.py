"""OpenAI Responses (``POST /v1/responses``, the wire Codex CLI and the OpenAI Agents SDK speak):
everything the project knows of the format.

* the conversation's key in a body: :data:`KEY` (``input``, a list of items);
* reply building (what the loopback server sends): :func:`response_object`, :func:`response_events`
  from a normalized scripted reply (:mod:`pipeline.loopback.chat` says its shape);
* reply reading: :func:`reported` (the input usage of an answer, for the proxy);
* reading back: :func:`read_message` (one item as pi's messages; a ``reasoning`` item reads as
  thinking from its readable ``summary``, its encrypted content is the provider's),
  :func:`tool_results` (the ``function_call_output`` and ``custom_tool_call_output`` items, each found at its call);
* turns (where the proxy may cut a conversation, its summary message): :func:`boundary`,
  :func:`turn_start`, :func:`kept_whole`, :func:`parts`, :func:`summary_message`;
* the OpenAI Agents SDK's items: :func:`reply_blocks` (an item of a reply as pi's content
  blocks), :func:`user_text`, :func:`output_text` and :func:`items_of` (pi's messages as
  input items).
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Iterator, Mapping

from pipeline.llm.wire import history
from pipeline.llm.wire.history import ToolResult, arguments, assistant, call, joined, pi_text, result, setter, text, user
from pipeline.llm.wire.reply import SummaryAnswer, count, obj

JSON = dict[str, Any]

KEY = "input"

_OUTPUTS = ("function_call_output", "custom_tool_call_output")
_CALLS = ("function_call", "custom_tool_call")
#: the items of a model's reply the OpenAI Agents SDK hands back as input
REPLY_TYPES = ("message", "function_call", "reasoning")


# =========================================================================== reply building


def _wire_usage(u: JSON) -> JSON:
    prompt = u["input"] + u["cacheRead"] + u["cacheWrite"]
    return {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": u["cacheRead"]},
            "output_tokens": u["output"], "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + u["output"]}


def _wire_items(r: JSON, index: int) -> list[JSON]:
    items: list[JSON] = []
    if r.get("text") is not None:
        items.append({"type": "message", "id": f"msg_loopback_{index}", "status": "completed", "role": "assistant",
                      "content": [{"type": "output_text", "text": r["text"], "annotations": []}]})
    for j, tool_call in enumerate(r.get("toolCalls") or []):
        items.append({"type": "function_call", "id": f"fc_loopback_{index}_{j}", "status": "completed",
                      "call_id": tool_call.get("id") or f"call_{index}_{j}", "name": tool_call["name"],
                      "arguments": json.dumps(tool_call.get("arguments") or {})})
    return items


def response_object(r: JSON, model: str, index: int, status: str = "completed") -> JSON:
    """The ``response`` object for a normalized scripted reply."""
    return {"id": f"resp_loopback_{index}", "object": "response", "created_at": 0, "status": status,
            "model": model, "output": _wire_items(r, index) if status == "completed" else [],
            "usage": _wire_usage(r["usage"]) if status == "completed" else None}


def response_events(r: JSON, model: str, index: int) -> Iterator[JSON]:
    """The streamed events of a normalized scripted reply, each with its ``type`` and ``sequence_number``."""
    events: list[JSON] = [{"type": "response.created", "response": response_object(r, model, index, "in_progress")},
                          {"type": "response.in_progress",
                           "response": response_object(r, model, index, "in_progress")}]
    for i, item in enumerate(_wire_items(r, index)):
        if item["type"] == "message":
            said = item["content"][0]["text"]
            part = {"type": "output_text", "text": "", "annotations": []}
            events += [
                {"type": "response.output_item.added", "output_index": i, "item": {**item, "status": "in_progress",
                                                                                   "content": []}},
                {"type": "response.content_part.added", "output_index": i, "item_id": item["id"],
                 "content_index": 0, "part": part},
                {"type": "response.output_text.delta", "output_index": i, "item_id": item["id"],
                 "content_index": 0, "delta": said},
                {"type": "response.output_text.done", "output_index": i, "item_id": item["id"],
                 "content_index": 0, "text": said},
                {"type": "response.content_part.done", "output_index": i, "item_id": item["id"],
                 "content_index": 0, "part": {**part, "text": said}},
            ]
        else:
            events += [
                {"type": "response.output_item.added", "output_index": i,
                 "item": {**item, "status": "in_progress", "arguments": ""}},
                {"type": "response.function_call_arguments.delta", "output_index": i, "item_id": item["id"],
                 "delta": item["arguments"]},
                {"type": "response.function_call_arguments.done", "output_index": i, "item_id": item["id"],
                 "arguments": item["arguments"]},
            ]
        events.append({"type": "response.output_item.done", "output_index": i, "item": item})
    events.append({"type": "response.completed", "response": response_object(r, model, index)})
    for n, event in enumerate(events):
        yield {**event, "sequence_number": n}


# =========================================================================== reply reading


def reported(usage: Mapping[str, Any]) -> tuple[int, int, int]:
    """An answer's input tokens (cached ones included), those read from and written to the cache."""
    details = usage.get("input_tokens_details") or {}
    return count(usage.get("input_tokens")), count(details.get("cached_tokens")), 0


# =========================================================================== reading back


def read_message(item: JSON, names: dict[str, str]) -> list[JSON]:
    """One input item as pi's messages (one item per block: consecutive ones may each be an assistant message)."""
    kind = item.get("type", "message")
    call_id = str(item.get("call_id"))
    if kind in _CALLS:
        names[call_id] = str(item.get("name") or "")
        args = arguments(item.get("arguments")) if kind == "function_call" else {"input": item.get("input")}
        return [assistant([call(call_id, names[call_id], args)])]
    if kind in _OUTPUTS:
        output = item.get("output")
        return [result(call_id, names.get(call_id, ""), output if isinstance(output, str) else text(output), False)]
    if kind == "reasoning":
        thinking = "\n".join(str(s.get("text") or "") for s in item.get("summary") or [] if isinstance(s, dict))
        return [assistant([{"type": "thinking", "thinking": thinking}])] if thinking else []
    if kind != "message" or item.get("role") not in ("user", "assistant"):
        return []
    said = text(item.get("content"))
    return [user(said)] if item.get("role") == "user" else [assistant([{"type": "text", "text": said}])]


def tool_results(index: int, item: JSON, names: dict[str, str], out: list[ToolResult]) -> None:
    """The output ``item`` (at ``index``) of a function or custom tool call (Codex's
    ``apply_patch``), if it is one, is added to ``out``."""
    kind = item.get("type")
    if kind in _CALLS:
        names[str(item.get("call_id"))] = str(item.get("name") or "")
    elif kind in _OUTPUTS:
        out.append(ToolResult(index, names.get(str(item.get("call_id")), ""), joined(item.get("output")),
                              setter(item, "output")))


# =========================================================================== turns


def _item_type(item: Any) -> str:
    return str(item.get("type") or "message") if isinstance(item, dict) else ""


def boundary(items: list[Any], at: int) -> bool:
    """May the kept items start at ``items[at]``? Not at a call's output, not right after a
    ``reasoning`` item, never where a kept output would lose its call."""
    if _item_type(items[at]) in _OUTPUTS or (at > 0 and _item_type(items[at - 1]) == "reasoning"):
        return False
    calls = {str(i.get("call_id")) for i in items[at:] if _item_type(i) in _CALLS}
    return all(str(i.get("call_id")) in calls for i in items[at:] if _item_type(i) in _OUTPUTS)


def turn_start(item: Any) -> bool:
    """Is ``item`` the user's own message?"""
    return _item_type(item) == "message" and item.get("role") == "user"


def kept_whole(item: Any) -> bool:
    """Is ``item`` a system or developer message (kept whole, never summarized)?"""
    return _item_type(item) == "message" and item.get("role") in ("system", "developer")


def head(items: list[Any]) -> int:
    """How many leading items are system or developer messages (set apart, never summarized)."""
    return history.leading(items, kept_whole)


def parts(item: Any) -> list[Any]:
    """A user message's content parts."""
    content = item.get("content")
    return list(content) if isinstance(content, list) else [{"type": "input_text", "text": str(content or "")}]


def summary_message(summary: str, extra: list[Any]) -> JSON:
    """The summary as one user message: its text, then ``extra`` parts."""
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": summary}, *extra]}


# =========================================================================== the OpenAI Agents SDK's items


def user_text(content: Any) -> str:
    """A content's text, its parts joined without a separator."""
    if isinstance(content, str):
        return content
    return "".join(p.get("text") or "" for p in content or () if isinstance(p, dict))


def output_text(output: Any) -> str:
    """A call output's text."""
    return output if isinstance(output, str) else user_text(output)


def reply_blocks(item: JSON, names: dict[str, str]) -> list[JSON]:
    """An item of a reply (``message``, ``function_call``, ``reasoning``) as pi's content blocks
    (a call's name is kept in ``names`` for its output)."""
    kind = item.get("type", "message")
    if kind == "function_call":
        names[item.get("call_id")] = item.get("name")  # type: ignore[index, assignment]
        args = json.loads(item.get("arguments") or "{}")
        return [{"type": "toolCall", "id": item.get("call_id"), "name": item.get("name"), "arguments": args}]
    if kind == "reasoning":
        thinking = "".join(s.get("text", "") for s in item.get("summary") or ())
        return [{"type": "thinking", "thinking": thinking}] if thinking else []
    said = user_text(item.get("content"))
    return [{"type": "text", "text": said}] if said else []


def items_of(messages: Iterable[JSON], message_id: str) -> list[JSON]:
    """pi LLM messages as input items (a summary is a user message); ``message_id`` is the id of
    an assistant message item."""
    out: list[JSON] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            out.extend(_items_of_reply(message, message_id))
        elif role == "toolResult":
            out.append({"type": "function_call_output", "call_id": message.get("toolCallId"),
                        "output": pi_text(message.get("content"))})
        else:
            out.append({"role": "user", "content": pi_text(message.get("content"))})
    return out


def _items_of_reply(message: JSON, message_id: str) -> list[JSON]:
    items: list[JSON] = []
    said = pi_text(message.get("content"))
    if said:
        items.append({"id": message_id, "type": "message", "role": "assistant", "status": "completed",
                      "content": [{"type": "output_text", "text": said, "annotations": []}]})
    for block in message.get("content") or ():
        if block.get("type") == "toolCall":
            items.append({"type": "function_call", "call_id": block.get("id"), "name": block.get("name"),
                          "arguments": json.dumps(block.get("arguments") or {})})
    return items


# =========================================================================== summary calls


def summary_body(model: str, system_prompt: str, user_text: str, max_tokens: int, *,
                 reasoning_level: str | None = None) -> JSON:
    """A summary call's body: ``instructions``, one user message, ``store: false`` (nothing kept upstream)."""
    body: JSON = {
        "model": model,
        "instructions": system_prompt,
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": user_text}]}],
        "max_output_tokens": max_tokens,
        "stream": False,
        "store": False,
    }
    if reasoning_level:
        body["reasoning"] = {"effort": reasoning_level}
    return body


def read_summary(data: JSON) -> SummaryAnswer | None:
    """A summary call's answer (the ``output_text`` parts of ``message`` items, the ``summary_text``
    of ``reasoning`` items; None without an output list); ``stop`` is ``(status, incomplete reason)``."""
    output = data.get("output")
    if not isinstance(output, list):
        return None
    items = [i for i in (obj(item) for item in output) if i is not None]
    texts = [str(p.get("text")) for i in items if i.get("type") == "message"
             for p in (obj(part) or {} for part in i.get("content") or []) if p.get("type") == "output_text"]
    thinking = [str(s.get("text")) for i in items if i.get("type") == "reasoning"
                for s in (obj(part) or {} for part in i.get("summary") or []) if isinstance(s.get("text"), str)]
    raw = obj(data.get("usage")) or {}
    cached = count((obj(raw.get("input_tokens_details")) or {}).get("cached_tokens"))
    reason = (obj(data.get("incomplete_details")) or {}).get("reason")
    return SummaryAnswer(text="\n".join(texts), thinking="\n".join(thinking) or None,
                         usage=(max(0, count(raw.get("input_tokens")) - cached), count(raw.get("output_tokens")), cached, 0),
                         stop=(data.get("status"), reason))
