"""A scripted Gemini API server on 127.0.0.1 (tests, `pipeline export --verify`): the wire Gemini CLI speaks.

::

    from pipeline.loopback.gemini import GeminiLoopbackServer

    with GeminiLoopbackServer(["hello"]) as server:
        env["GOOGLE_GEMINI_BASE_URL"] = server.url    # Gemini CLI's base-URL override
        ...
        server.bodies                                  # every generateContent request body

Routes: ``POST /v1beta/models/<model>:generateContent`` (one JSON response),
``:streamGenerateContent`` (server-sent events, one ``data:`` chunk per reply) and
``:countTokens`` (``{"totalTokens": …}``, an estimate, not scripted). Replies are the
scripted replies of :mod:`pipeline.loopback.chat` (a string, or ``{text?, toolCalls?,
usage?}``); each generate request takes the next, the last repeats (``aside``: as
:mod:`pipeline.loopback.core` says). ``usage`` becomes
``usageMetadata`` (``promptTokenCount`` = input + cacheRead, ``candidatesTokenCount``).

Bounded: after ``max_requests`` generate requests, or once ``timeout`` seconds have passed
since start, every request gets a 500 (a runaway client ends instead of looping).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pipeline.llm.wire import gemini
from pipeline.llm.wire.sse import data_frame
from pipeline.loopback.chat import normalize_reply
from pipeline.loopback.core import Handler, ReceivedRequest, ScriptedServer

__all__ = ["GeminiLoopbackServer", "gemini_response"]

_ROUTE = re.compile(r"^/v1(?:beta|alpha)?/models/([^:/]+):(generateContent|streamGenerateContent|countTokens)$")


def gemini_response(reply: Any, model: str) -> dict:
    """The ``GenerateContentResponse`` for a scripted reply (built by :mod:`pipeline.llm.wire.gemini`)."""
    return gemini.gemini_response(normalize_reply(reply), model)


class _Handler(Handler):
    server: Any

    def do_POST(self) -> None:
        received = self.received()
        raw, path = received.raw, self.path.split("?")[0]
        match = _ROUTE.match(path)
        if match is None:
            self.server.owner.record(received)
            return self._json(404, gemini.error_body(404, f"no route {path}"))
        model, method = match.groups()
        within, reply = self.server.owner._take(received, method != "countTokens")
        if method == "countTokens":
            return self._json(200, {"totalTokens": max(1, len(raw) // 4)})
        if not within or reply is None:
            return self._json(500, gemini.error_body(500, "the loopback server has no reply for this request "
                                                          "(script or bounds)"))
        response = gemini_response(reply, model)
        if method == "generateContent":
            return self._json(200, response)
        data = data_frame(json.dumps(response), "\r\n\r\n").encode("utf-8")
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()


class GeminiLoopbackServer(ScriptedServer):
    """The scripted server; a context manager."""

    name = "loopback-gemini"
    handler = _Handler

    default_max_requests = 50
    default_timeout = 300.0

    @property
    def bodies(self) -> list[Any]:
        """The bodies of the generate requests (countTokens left out)."""
        return [r.body for r in self.received if "enerateContent" in r.path]

    def _take(self, received: ReceivedRequest, generate: bool) -> tuple[bool, Any]:
        with self._lock:
            self.received.append(received)
            if not generate:
                return True, None
            aside = self.aside_reply(received.body)
            if aside is not None:
                return True, aside
            reply = self.next_reply(sum(1 for r in self.received if "enerateContent" in r.path))
            return reply is not None, reply
