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

from typing import Any, Iterator

from pipeline.llm.wire import responses
from pipeline.llm.wire.sse import event_frame
from pipeline.loopback.chat import normalize_reply
from pipeline.loopback.core import Handler, ReceivedRequest, ScriptedServer

__all__ = ["RESPONSES_PATH", "ResponsesLoopbackServer", "response_events", "response_object"]

RESPONSES_PATH = "/v1/responses"


def response_object(reply: Any, model: str, index: int, status: str = "completed") -> dict:
    """The ``response`` object for a scripted reply (built by :mod:`pipeline.llm.wire.responses`)."""
    return responses.response_object(normalize_reply(reply), model, index, status)


def response_events(reply: Any, model: str, index: int) -> Iterator[dict]:
    """The streamed events of a scripted reply (built by :mod:`pipeline.llm.wire.responses`)."""
    return responses.response_events(normalize_reply(reply), model, index)


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
                self.wfile.write(event_frame(event["type"], event).encode("utf-8"))
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return
        self.close_connection = True


class ResponsesLoopbackServer(ScriptedServer):
    """The scripted server; a context manager."""

    name = "loopback-responses"
    handler = _Handler

    default_max_requests = 50
    default_timeout = 300.0

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
