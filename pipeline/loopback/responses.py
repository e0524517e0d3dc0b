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
the last one repeats. ``usage`` becomes ``input_tokens`` (input + cacheRead + cacheWrite),
``input_tokens_details.cached_tokens``, ``output_tokens``, ``total_tokens``.

Bounded: after ``max_requests`` responses requests, or once ``timeout`` seconds have passed
since start, every request gets a 500 (a runaway client ends instead of looping).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterable, Iterator

from pipeline.loopback.chat import ReceivedRequest, normalize_reply

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


class ResponsesLoopbackServer:
    """The scripted server; a context manager."""

    def __init__(self, replies: Iterable[Any] = (), *, max_requests: int = 50, timeout: float = 300.0) -> None:
        self._replies: deque[Any] = deque(replies)
        self._last: Any = None
        self._lock = threading.Lock()
        self.max_requests = max_requests
        self.timeout = timeout
        self.received: list[ReceivedRequest] = []
        self._started = 0.0
        self._httpd: _HTTPServer | None = None

    def __enter__(self) -> "ResponsesLoopbackServer":
        self._httpd = _HTTPServer(self)
        self._started = time.monotonic()
        threading.Thread(target=self._httpd.serve_forever, args=(0.01,), name="loopback-responses",
                         daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the loopback server is not running")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

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
            if count > self.max_requests or time.monotonic() - self._started > self.timeout:
                return count - 1, None
            if self._replies:
                self._last = self._replies.popleft()
            return count - 1, self._last


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, owner: ResponsesLoopbackServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.owner = owner


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        received = ReceivedRequest("GET", self.path, {k.lower(): v for k, v in self.headers.items()}, b"", None)
        with self.server.owner._lock:
            self.server.owner.received.append(received)
        self._json(404, {"object": "list", "data": [], "error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        received = ReceivedRequest("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, raw, body)
        owner = self.server.owner
        if self.path.split("?")[0] != RESPONSES_PATH:
            with owner._lock:
                owner.received.append(received)
            return self._json(404, {"error": {"message": f"no route {self.path}"}})
        index, reply = owner._take(received)
        if reply is None:
            return self._json(500, {"error": {"message": "the loopback server has no reply for this request "
                                                         "(script or bounds)", "type": "server_error"}})
        request = body if isinstance(body, dict) else {}
        model = str(request.get("model") or "loopback-model")
        if request.get("stream") is not True:
            return self._json(200, response_object(reply, model, index))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        try:
            for event in response_events(reply, model, index):
                self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode("utf-8"))
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return
        self.close_connection = True

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
