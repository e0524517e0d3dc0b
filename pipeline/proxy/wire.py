"""The conversation inside a request body, in each provider's shape: its messages, their chain of
hashes, and the tool results among them (with the tool's name, found at its call).

* Anthropic Messages: ``messages``; a result is a ``tool_result`` block of a user message
  (its ``tool_use_id`` names a ``tool_use`` block of an earlier assistant message);
* OpenAI chat completions: ``messages``; a result is a ``role: tool`` message (its
  ``tool_call_id`` names one of an assistant message's ``tool_calls``);
* OpenAI Responses: ``input`` (a list); a result is a ``function_call_output`` item (its
  ``call_id`` names a ``function_call`` item);
* Gemini: ``contents``; a result is a part holding ``functionResponse`` (its ``name``).

The chain: ``chain[i]`` is the SHA-256 of ``chain[i-1]`` and message ``i-1`` in canonical
JSON (sorted keys, no spaces), ``chain[0]`` the empty string. Two requests that share their
first ``i`` messages share ``chain[i]``: a conversation is recognised without a header, and
what the proxy decided for a prefix is found again on the next request.

Within one request (:func:`one_request`) each message is hashed and each body measured once:
the app's conversation id is the chain's first link, ``hybrid``'s masking and summary walk the
same chain (and look its stored summary up once), and each compaction policy measures the same body. The memo is keyed by the
objects themselves, which the policies never change in place (they write copies).
"""

from __future__ import annotations

import hashlib
import json
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Iterator, Optional

from pipeline.proxy import codec
from pipeline.proxy.routes import Kind

Json = dict[str, Any]


@dataclass(frozen=True)
class ToolResult:
    """One tool result: the message it is in, how to read and replace its content."""

    message: int
    tool: str
    text: str
    replace: Callable[[str], None]


def messages_of(kind: Kind, body: Json) -> Optional[list[Any]]:
    """The conversation's list in ``body`` (the body's own list object), or None."""
    key = {"messages": "messages", "chat": "messages", "responses": "input", "gemini": "contents"}.get(kind)
    found = body.get(key) if key else None
    return found if isinstance(found, list) else None


#: one request's memo (:func:`one_request`): (id of an object, what) -> (the object, its hash or size)
_MEMO: ContextVar[Optional[dict[tuple[int, str], tuple[Any, Any]]]] = ContextVar("pipeline_proxy_memo", default=None)


@contextmanager
def one_request() -> Iterator[None]:
    """Within it, :func:`chain` and :func:`size` compute each link and size once."""
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def remembered(value: Any, what: str, compute: Callable[[], Any]) -> Any:
    """``compute()``, once a request for ``value`` and ``what`` (every call outside one)."""
    memo = _MEMO.get()
    if memo is None:
        return compute()
    found = memo.get((id(value), what))
    if found is not None and found[0] is value:  # the object held: its id is not another's
        return found[1]
    result = compute()
    memo[(id(value), what)] = (value, result)
    return result


def chain(messages: list[Any]) -> list[str]:
    """``chain[i]``: the hash of the first ``i`` messages (``len(messages) + 1`` of them)."""
    out = [""]
    for message in messages:
        before = out[-1]
        out.append(remembered(message, before, partial(_link, before, message)))
    return out


def _link(before: str, message: Any) -> str:
    digest = hashlib.sha256(before.encode("ascii"))
    digest.update(codec.dumps(message, sort_keys=True))
    return digest.hexdigest()


def conversation_id(kind: Kind, body: Json) -> Optional[str]:
    """A conversation's id: the hash of its first message (None for a body without messages)."""
    messages = messages_of(kind, body)
    return chain(messages[:1])[1] if messages else None


def size(value: Any) -> int:
    """The characters of ``value`` as JSON (the proxy's estimate is a quarter of it, in tokens)."""
    return int(remembered(value, "size", lambda: _characters(codec.dumps(value))))


def _characters(data: bytes) -> int:
    """The characters UTF-8 ``data`` decodes to (one a byte when all are ASCII, the common case)."""
    return len(data) if data.isascii() else len(data.decode("utf-8", "surrogatepass"))


def tool_results(kind: Kind, messages: list[Any]) -> list[ToolResult]:
    """Every tool result of ``messages``, oldest first."""
    names: dict[str, str] = {}
    out: list[ToolResult] = []
    for index, message in enumerate(messages):
        if isinstance(message, dict):
            _READERS[kind](index, message, names, out)
    return out


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def _setter(holder: Json, key: str) -> Callable[[str], None]:
    def put(text: str) -> None:
        holder[key] = text
    return put


def _anthropic(index: int, message: Json, names: dict[str, str], out: list[ToolResult]) -> None:
    content = message.get("content")
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_use":
            names[str(block.get("id"))] = str(block.get("name") or "")
        elif block.get("type") == "tool_result":
            out.append(ToolResult(index, names.get(str(block.get("tool_use_id")), ""), _text(block.get("content")),
                                  _setter(block, "content")))


def _chat(index: int, message: Json, names: dict[str, str], out: list[ToolResult]) -> None:
    for call in message.get("tool_calls") or []:
        if isinstance(call, dict):
            names[str(call.get("id"))] = str((call.get("function") or {}).get("name") or "")
    if message.get("role") == "tool":
        out.append(ToolResult(index, names.get(str(message.get("tool_call_id")), ""), _text(message.get("content")),
                              _setter(message, "content")))


def _responses(index: int, item: Json, names: dict[str, str], out: list[ToolResult]) -> None:
    if item.get("type") == "function_call":
        names[str(item.get("call_id"))] = str(item.get("name") or "")
    elif item.get("type") == "function_call_output":
        out.append(ToolResult(index, names.get(str(item.get("call_id")), ""), _text(item.get("output")),
                              _setter(item, "output")))


def _gemini(index: int, content: Json, names: dict[str, str], out: list[ToolResult]) -> None:
    for part in content.get("parts") or []:
        response = part.get("functionResponse") if isinstance(part, dict) else None
        if isinstance(response, dict):
            out.append(ToolResult(index, str(response.get("name") or ""), _text(response.get("response")),
                                  _gemini_setter(response)))


def _gemini_setter(response: Json) -> Callable[[str], None]:
    def put(text: str) -> None:
        response["response"] = {"output": text}
    return put


_READERS: dict[str, Callable[[int, Json, dict[str, str], list[ToolResult]], None]] = {
    "messages": _anthropic, "chat": _chat, "responses": _responses, "gemini": _gemini}
