"""A scripted model server on 127.0.0.1 (tests, `pipeline export --verify`): both wire formats, replies from a script.

::

    from pipeline.loopback.chat import LoopbackServer

    with LoopbackServer(["hello", {"toolCalls": [{"name": "read", "arguments": {"path": "a"}}]}]) as server:
        httpx.post(server.openai_base_url + "/chat/completions", json={...})      # OpenAI chat completions
        httpx.post(server.anthropic_base_url + "/v1/messages", json={...})        # Anthropic messages
        server.bodies                                                            # every request body received

Replies have the shape the agent-loop vectors use for scripted model replies: a string
(plain text) or ``{text?, thinking?, thinkingSignature?, toolCalls?: [{name, arguments, id?}],
stopReason?, errorMessage?, usage?: {input, output, cacheRead, cacheWrite, totalTokens}}``
plus two loopback-only keys, ``status`` (force the HTTP status) and ``delay`` (seconds to
wait before answering). Each POST takes the next reply; the last one repeats. ``aside``, a
function of the request body, answers the requests it returns a reply for without taking from
the script: the side requests a client sends concurrently with its main one (a title request)
then cannot take the main request's reply, whichever arrives first.

Translation to the wire (the replies and events are built by the wire layer,
:mod:`pipeline.llm.wire.chat` and :mod:`pipeline.llm.wire.anthropic`):

* ``stopReason`` ``stop``/``length``/``toolUse`` (default ``toolUse`` with tool calls, else
  ``stop``) → ``finish_reason`` ``stop``/``length``/``tool_calls`` or ``stop_reason``
  ``end_turn``/``max_tokens``/``tool_use``;
* ``usage`` → ``prompt_tokens`` (input + cacheRead + cacheWrite), ``completion_tokens``,
  ``prompt_tokens_details.cached_tokens``/``cache_write_tokens``, or ``input_tokens``,
  ``output_tokens``, ``cache_read_input_tokens``, ``cache_creation_input_tokens``. The wire
  formats have no total that clients trust, so a ``totalTokens`` above the sum of the four
  counts is sent as extra prompt (input) tokens;
* ``stopReason: "error"`` → an HTTP error: the status from ``status`` or guessed from
  ``errorMessage`` (400 for a context-length text, 429 rate limits, 401 keys, 529/503
  overloaded, 503 unavailable, else 500) and the provider's error body carrying
  ``errorMessage``;
* ``stopReason: "aborted"`` → the server starts answering (headers, and the partial text when
  streaming) and then holds the connection open until the client goes away or
  :meth:`LoopbackServer.release` is called: an abort is the client's act, this gives it
  something to cancel.

``stream: true`` in the request body gets server-sent events (OpenAI chunks ending in
``data: [DONE]``, usage in a last chunk when ``stream_options.include_usage``; Anthropic
``message_start`` … ``message_stop``), otherwise one JSON object.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterable, Mapping

from pipeline.llm.wire import anthropic, chat
from pipeline.llm.wire.anthropic import anthropic_events, anthropic_message
from pipeline.llm.wire.chat import openai_chunks, openai_completion
from pipeline.llm.wire.sse import data_frame, event_frame
from pipeline.loopback.core import Handler, ReceivedRequest, ScriptedServer

__all__ = ["LoopbackServer", "ReceivedRequest", "error_status", "normalize_reply"]

OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"

_OVERFLOW_HINTS = ("too long", "context length", "context_length", "context window", "maximum context",
                   "too many tokens", "request_too_large", "exceeds the limit", "token limit")
_STATUS_HINTS = ((("429", "rate limit", "too many requests"), 429), (("401", "api key", "unauthorized"), 401),
                 (("overloaded",), 529), (("503", "unavailable"), 503), (("502", "bad gateway"), 502),
                 (("504", "timeout", "timed out"), 504))


# --------------------------------------------------------------------------- replies


def normalize_reply(reply: Any) -> dict:
    """A scripted reply as a dict with ``stopReason`` and the four usage counts filled in."""
    r = {"text": reply} if isinstance(reply, str) else dict(reply or {})
    calls = r.get("toolCalls") or []
    r.setdefault("stopReason", "toolUse" if calls else "stop")
    usage = dict(r.get("usage") or {})
    counts = {k: int(usage.get(k, 0)) for k in ("input", "output", "cacheRead", "cacheWrite")}
    total = usage.get("totalTokens")
    if isinstance(total, int) and total > sum(counts.values()):
        counts["input"] += total - sum(counts.values())
    r["usage"] = counts
    return r


def error_status(reply: Mapping[str, Any], provider: str) -> int:
    """The HTTP status an error reply is sent with (``status`` wins, else guessed from its text)."""
    if isinstance(reply.get("status"), int):
        return reply["status"]
    text = str(reply.get("errorMessage") or "").lower()
    if any(h in text for h in _OVERFLOW_HINTS):
        return 400
    for hints, status in _STATUS_HINTS:
        if any(h in text for h in hints):
            return 503 if status == 529 and provider == "openai" else status
    return 500


# --------------------------------------------------------------------------- error bodies


def openai_error(r: dict, status: int) -> dict:
    """The error body of an error reply (``context_length_exceeded`` for an overflow's text)."""
    text = str(r.get("errorMessage") or "error")
    code = "context_length_exceeded" if status == 400 and any(h in text.lower() for h in _OVERFLOW_HINTS) else None
    return chat.error_body(status, text, code)


def anthropic_error(r: dict, status: int) -> dict:
    """The error body of an error reply."""
    return anthropic.error_body(status, str(r.get("errorMessage") or "error"))


# --------------------------------------------------------------------------- server


class _Handler(Handler):
    server: Any

    def do_POST(self) -> None:
        received = self.received()
        body = received.body
        owner = self.server.owner
        index, reply = owner._take(received)
        provider = {OPENAI_PATH: "openai", ANTHROPIC_PATH: "anthropic"}.get(self.path.split("?")[0])
        if provider is None:
            return self._json(404, {"error": {"message": f"no route {self.path}"}})
        if reply is None:
            return self._json(500, {"error": {"message": "the loopback server has no scripted reply"}})
        r = normalize_reply(reply)
        if r.get("delay") and owner._released.wait(float(r["delay"])):
            return
        self._answer(provider, r, body if isinstance(body, dict) else {}, index)

    def _answer(self, provider: str, r: dict, request: dict, index: int) -> None:
        model = str(request.get("model") or "loopback-model")
        if r["stopReason"] == "error":
            status = error_status(r, provider)
            return self._json(status, (openai_error if provider == "openai" else anthropic_error)(r, status))
        aborted = r["stopReason"] == "aborted"
        if aborted:
            r = {**r, "stopReason": "stop"}
        if request.get("stream") is True:
            self._stream(provider, r, request, model, index, aborted)
        elif aborted:
            self._hold(head=True)
        elif provider == "openai":
            self._json(200, openai_completion(r, model, index))
        else:
            self._json(200, anthropic_message(r, model, index))

    def _stream(self, provider: str, r: dict, request: dict, model: str, index: int, partial: bool) -> None:
        self._event_stream()
        if provider == "openai":
            usage = bool((request.get("stream_options") or {}).get("include_usage"))
            frames = (data_frame(data) for data in openai_chunks(r, model, index, usage, partial))
        else:
            frames = (event_frame(name, data) for name, data in anthropic_events(r, model, index, partial))
        try:
            for frame in frames:
                self.wfile.write(frame.encode("utf-8"))
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return
        if partial:
            self._hold(head=False)
        self.close_connection = True

    def _hold(self, head: bool) -> None:
        """An aborted reply: keep the connection open until released or the wait runs out."""
        if head:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", "1000000")
            self.end_headers()
            self.wfile.flush()
        self.server.owner._released.wait(self.server.owner.abort_wait)
        self.close_connection = True


class LoopbackServer(ScriptedServer):
    """The scripted server; a context manager (``start``/``stop`` by hand also work)."""

    name = "loopback-llm"
    handler = _Handler

    def __init__(self, replies: Iterable[Any] = (), *, abort_wait: float = 10.0,
                 aside: Callable[[Any], Any] | None = None) -> None:
        super().__init__(replies, aside=aside)
        self._released = threading.Event()
        self.abort_wait = abort_wait

    def stop(self) -> None:
        self.release()
        super().stop()

    def release(self) -> None:
        """Let go of connections held open by ``aborted`` replies."""
        self._released.set()

    @property
    def openai_base_url(self) -> str:
        """Base URL for an OpenAI client (``…/v1``; it appends ``/chat/completions``)."""
        return self.url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        """Base URL for an Anthropic client (it appends ``/v1/messages``)."""
        return self.url

    def script(self, *replies: Any) -> None:
        with self._lock:
            self._replies.extend(replies)

    @property
    def bodies(self) -> list[Any]:
        return [r.body for r in self.received]

    def _take(self, received: ReceivedRequest) -> tuple[int, Any]:
        with self._lock:
            self.received.append(received)
            reply = self.aside_reply(received.body)
            if reply is not None:
                return len(self.received) - 1, reply
            return len(self.received) - 1, self.next_reply(len(self.received))
