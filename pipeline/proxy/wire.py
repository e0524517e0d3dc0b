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

One request is read by the policies through one :class:`Request`, which the app builds once:
its route, the client's headers and body, and what is computed from them once and kept on
it (each message's link of the chain, each body's size, the stored summary of a history, a
body a summary rewrites), so the app's conversation id is the chain's first link, ``hybrid``'s
masking and summary walk the same chain (and look its stored summary up once), and each
compaction policy measures the same body. What it keeps is keyed by the objects themselves,
which it holds (so an id is never another object's) and the policies never change in place
(they write copies); it is dropped with the request. :func:`chain` and :func:`size` alone
compute anew on each call.
"""

from __future__ import annotations

import hashlib
from functools import partial
from typing import Any, Callable, Mapping, Optional

from pipeline.llm.wire import format_module
from pipeline.llm.wire.history import ToolResult
from pipeline.proxy import codec
from pipeline.proxy.routes import Kind, Route

Json = dict[str, Any]
#: the bounds of :attr:`Request.scale`: an upstream that counts fewer tokens than the estimate
#: never lowers the count (a compaction is never late for it), one far above it is read as at
#: most four times the estimate
SCALE_BOUNDS = (1.0, 4.0)

__all__ = ["Json", "Request", "ToolResult", "chain", "conversation_id", "messages_of", "size", "tool_results"]


def messages_of(kind: Kind, body: Json) -> Optional[list[Any]]:
    """The conversation's list in ``body`` (the body's own list object), or None."""
    found = body.get(format_module(kind).KEY) if kind != "passthrough" else None
    return found if isinstance(found, list) else None


class Request:
    """One request as the policies read it (see the module docstring); built once by the app."""

    def __init__(self, route: Route, body: Json, headers: Mapping[str, str] = {},
                 anchor: Optional[Callable[[str], Optional[tuple[int, int]]]] = None) -> None:
        self.route = route
        self.body = body
        #: the client's headers, lower-case (a policy that calls the upstream as the client reads its key)
        self.headers = headers
        #: the store's anchor of a conversation (:meth:`~pipeline.proxy.store.ProxyStore.anchor`)
        self._anchor = anchor
        self._known: dict[tuple[int, str], tuple[Any, Any]] = {}

    @property
    def kind(self) -> Kind:
        return self.route.kind

    @property
    def messages(self) -> Optional[list[Any]]:
        """The client's conversation (the body's own list), or None."""
        return messages_of(self.route.kind, self.body)

    @property
    def conversation(self) -> Optional[str]:
        """The conversation's id: the first link of the chain of the client's messages."""
        messages = self.messages
        return self.chain(messages[:1])[1] if messages else None

    def once(self, value: Any, what: str, compute: Callable[[], Any]) -> Any:
        """``compute()`` for ``value`` and ``what``, computed once in this request."""
        found = self._known.get((id(value), what))
        if found is not None and found[0] is value:  # the object held: its id is not another's
            return found[1]
        result = compute()
        self._known[(id(value), what)] = (value, result)
        return result

    def chain(self, messages: list[Any]) -> list[str]:
        """:func:`chain`, each message's link hashed once in this request."""
        out = [""]
        for message in messages:
            before = out[-1]
            out.append(self.once(message, before, partial(_link, before, message)))
        return out

    def size(self, value: Any) -> int:
        """:func:`size`, measured once in this request."""
        return int(self.once(value, "size", lambda: size(value)))

    def tokens(self, value: Any) -> float:
        """What counts toward the trigger: the estimate of ``value`` (a quarter of its JSON
        characters) anchored to the upstream's reported input for this conversation, that is
        scaled by :attr:`scale`."""
        return self.size(value) / 4 * self.scale

    @property
    def scale(self) -> float:
        """The largest ratio, in this conversation, of the input an upstream's answer reported
        (cached included) to the proxy's estimate of the request it answered, within
        :data:`SCALE_BOUNDS`; 1 before any report (or without a store), looked up once a
        request. It never falls as the conversation grows, so a history whose count once fired
        the trigger (a stored summary) is never read as below it later."""
        conversation = self.conversation
        if self._anchor is None or conversation is None:
            return 1.0
        found = self.once(self.body, "anchor", lambda: self._anchor(conversation) if self._anchor else None)
        if not found or found[0] <= 0 or found[1] <= 0:
            return 1.0
        low, high = SCALE_BOUNDS
        return float(min(max(found[0] / found[1], low), high))


def chain(messages: list[Any]) -> list[str]:
    """``chain[i]``: the hash of the first ``i`` messages (``len(messages) + 1`` of them)."""
    out = [""]
    for message in messages:
        out.append(_link(out[-1], message))
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
    return _characters(codec.dumps(value))


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
