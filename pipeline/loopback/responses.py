"""A scripted OpenAI Responses API server on 127.0.0.1 (tests, `pipeline export --verify`): the wire Codex CLI speaks.

::

    from pipeline.loopback.responses import ResponsesLoopbackServer

    with ResponsesLoopbackServer(["hello"]) as server:
        # config.toml: [model_providers.loop] base_url = server.base_url, wire_api = "responses"
        ...
        server.bodies                                  # every POST /v1/responses body

Route: ``POST /v1/responses`` (any query string). A request with ``"stream": true`` gets
server-sent events ``response.created``, ``response.in_progress``, then per output item
``response.output_item.added`` / ``response.content_part.added`` /
``response.output_text.delta`` / ``response.output_text.done`` /
``response.content_part.done`` / ``response.output_item.done`` (a tool call is a
``function_call`` item with its ``arguments``), and ``response.completed`` with the whole
response and its ``usage``; otherwise the response object as one JSON body. Other paths
(``/v1/models`` and the like) get a 404 with an empty model list where a GET asks.

Replies are the scripted replies of :mod:`pipeline.loopback.chat` (a string, or
``{text?, toolCalls?: [{name, arguments, id?}], usage?}``); each request takes the next,
the last one repeats (``aside``: as :mod:`pipeline.loopback.core` says). ``usage`` becomes ``input_tokens`` (input + cacheRead + cacheWrite),
``input_tokens_details.cached_tokens``, ``output_tokens``, ``total_tokens``.

Bounded: after ``max_requests`` responses requests, or once ``timeout`` seconds have passed
since start, every request gets a 500 (a runaway client ends instead of looping).
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Iterator

from pipeline.loopback.chat import normalize_reply
from pipeline.loopback.core import Handler, ReceivedRequest, ScriptedServer

__all__ = ["RESPONSES_PATH", "ResponsesLoopbackServer", "response_events", "response_object"]

RESPONSES_PATH = "/v1/responses"


def _usage(u: dict) -> dict:
    prompt = u["input"] + u["cacheRead"] + u["cacheWrite"]
    return {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": u["cacheRead"]},
            "output_tokens": u["output"], "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + u["output"]}


def _items(r: dict, index: int) -> list[dict]:
    items: list[dict] = []
    if r.get("text") is not None:
        items.append({"type": "message", "id": f"msg_loopback_{index}", "status": "completed", "role": "assistant",
                      "content": [{"type": "output_text", "text": r["text"], "annotations": []}]})
    for j, call in enumerate(r.get("toolCalls") or []):
        items.append({"type": "function_call", "id": f"fc_loopback_{index}_{j}", "status": "completed",
                      "call_id": call.get("id") or f"call_{index}_{j}", "name": call["name"],
                      "arguments": json.dumps(call.get("arguments") or {})})
    return items


def response_object(reply: Any, model: str, index: int, status: str = "completed") -> dict:
    """The ``response`` object for a scripted reply."""
    r = normalize_reply(reply)
    return {"id": f"resp_loopback_{index}", "object": "response", "created_at": 0, "status": status,
            "model": model, "output": _items(r, index) if status == "completed" else [],
            "usage": _usage(r["usage"]) if status == "completed" else None}


def response_events(reply: Any, model: str, index: int) -> Iterator[dict]:
    """The streamed events of a scripted reply, each with its ``type`` and ``sequence_number``."""
    r = normalize_reply(reply)
    events: list[dict] = [{"type": "response.created", "response": response_object(reply, model, index, "in_progress")},
                          {"type": "response.in_progress",
                           "response": response_object(reply, model, index, "in_progress")}]
    for i, item in enumerate(_items(r, index)):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            part = {"type": "output_text", "text": "", "annotations": []}
            events += [
                {"type": "response.output_item.added", "output_index": i, "item": {**item, "status": "in_progress",
                                                                                   "content": []}},
                {"type": "response.content_part.added", "output_index": i, "item_id": item["id"],
                 "content_index": 0, "part": part},
                {"type": "response.output_text.delta", "output_index": i, "item_id": item["id"],
                 "content_index": 0, "delta": text},
                {"type": "response.output_text.done", "output_index": i, "item_id": item["id"],
                 "content_index": 0, "text": text},
                {"type": "response.content_part.done", "output_index": i, "item_id": item["id"],
                 "content_index": 0, "part": {**part, "text": text}},
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
    events.append({"type": "response.completed", "response": response_object(reply, model, index)})
    for n, event in enumerate(events):
        yield {**event, "sequence_number": n}


class _Handler(Handler):
    server: Any

    def do_GET(self) -> None:
        self.server.owner.record(self.received("GET"))
        self._json(404, {"object": "list", "data": [], "error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        received = self.received()
        body = received.body
        owner = self.server.owner
        if self.path.split("?")[0] != RESPONSES_PATH:
            owner.record(received)
            return self._json(404, {"error": {"message": f"no route {self.path}"}})
        index, reply = owner._take(received)
        if reply is None:
            return self._json(500, {"error": {"message": "the loopback server has no reply for this request "
                                                         "(script or bounds)", "type": "server_error"}})
        request = body if isinstance(body, dict) else {}
        model = str(request.get("model") or "loopback-model")
        if request.get("stream") is not True:
            return self._json(200, response_object(reply, model, index))
        self._event_stream()
        try:
            for event in response_events(reply, model, index):
                self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode("utf-8"))
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return
        self.close_connection = True


class ResponsesLoopbackServer(ScriptedServer):
    """The scripted server; a context manager."""

    name = "loopback-responses"
    handler = _Handler

    def __init__(self, replies: Iterable[Any] = (), *, max_requests: int = 50, timeout: float = 300.0,
                 aside: Callable[[Any], Any] | None = None) -> None:
        super().__init__(replies, max_requests=max_requests, timeout=timeout, aside=aside)

    @property
    def base_url(self) -> str:
        """The provider base URL (``…/v1``; the client appends ``/responses``)."""
        return self.url + "/v1"

    @property
    def bodies(self) -> list[Any]:
        """The bodies of the responses requests."""
        return [r.body for r in self.received if r.path.split("?")[0] == RESPONSES_PATH]

    def _take(self, received: ReceivedRequest) -> tuple[int, Any]:
        with self._lock:
            self.received.append(received)
            count = len(self.bodies)
            aside = self.aside_reply(received.body)
            return count - 1, aside if aside is not None else self.next_reply(count)
