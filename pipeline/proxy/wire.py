"""The conversation inside a request body: its messages, their chain of hashes, and the tool
results among them (with the tool's name, found at its call). Each format's knowledge (the
conversation's key, where a tool result is) is the wire layer's (:mod:`pipeline.llm.wire`);
the chain and the conversation's id are the proxy's own.

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
same chain (and look its stored summary up once), and each compaction policy measures the
same body. The memo is keyed by the objects themselves, which the policies never change in place (they write copies).
"""

from __future__ import annotations

import hashlib
from contextlib import contextmanager
from contextvars import ContextVar
from functools import partial
from typing import Any, Callable, Iterator, Optional

from pipeline.llm.wire import format_module
from pipeline.llm.wire.history import ToolResult
from pipeline.proxy import codec
from pipeline.proxy.routes import Kind

Json = dict[str, Any]

__all__ = ["Json", "ToolResult", "chain", "conversation_id", "messages_of", "one_request", "remembered", "size",
           "tool_results"]


def messages_of(kind: Kind, body: Json) -> Optional[list[Any]]:
    """The conversation's list in ``body`` (the body's own list object), or None."""
    found = body.get(format_module(kind).KEY) if kind != "passthrough" else None
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
    read = format_module(kind).tool_results
    for index, message in enumerate(messages):
        if isinstance(message, dict):
            read(index, message, names, out)
    return out
