"""The proxy as an ASGI application: route, check, apply the policy, forward, stream back.

One request:

1. its route (:mod:`pipeline.proxy.routes`); ``GET /_pipeline/stats`` (the counters as
   JSON), ``GET /metrics`` (Prometheus, :mod:`pipeline.proxy.metrics`) and ``GET /`` (the
   status page, :mod:`pipeline.proxy.status`) are the proxy's own;
2. the client's token when the proxy asks for one (``x-pipeline-token``, compared in constant
   time), else 401 in the provider's error shape;
3. the body, read up to ``max_body`` bytes (413 past it); for a route the policy reads, a body
   that is not a JSON object is a 400 in the provider's shape, naming line and column;
4. the policy (:class:`~pipeline.proxy.policy.Policy`): it returns the body to forward, or ``None`` to leave it
   alone, and then the client's bytes go upstream unchanged;
5. the upstream call with the client's own headers (credentials included; never logged or
   stored), hop-by-hop headers dropped; the answer is streamed back chunk by chunk as it
   arrives, and a client that goes away cancels the upstream call.

An upstream that cannot be reached is a 502, one that stays silent past the idle timeout, or
whose answer is not whole within the answer deadline (one that trickles), a 504, each in the
client's provider shape; an upstream's own 4xx or 5xx is passed through as it came. An answer
that breaks off after its head went to the client is cut (:meth:`ProxyApp._cut`). Nothing here
knows a profile: the policy and the deadlines are handed in.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Mapping, MutableMapping, Optional
from urllib.parse import urlsplit

from pipeline.proxy import codec
from pipeline.proxy.metrics import CONTENT_TYPE, Metrics
from pipeline.proxy.policy import Policy
from pipeline.proxy.routes import Route, Upstreams, route
from pipeline.proxy.shapes import ProxyFailure, error_body, error_event
from pipeline.proxy.status import StatusInfo, status_html
from pipeline.proxy.store import ProxyStore
from pipeline.proxy.upstream import Answer, AnswerTimeout, UpstreamError, UpstreamPool, UpstreamTimeout
from pipeline.proxy.usage import UsageTap
from pipeline.proxy.wire import Request

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

STATS_PATH = "/_pipeline/stats"
METRICS_PATH = "/metrics"
STATUS_PATH = "/"
TOKEN_HEADER = "x-pipeline-token"
#: hop-by-hop headers (HTTP's Connection semantics) and those the client library sets again
_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                  "transfer-encoding", "upgrade", "host", "content-length", TOKEN_HEADER})



@dataclass(frozen=True)
class ProxySettings:
    """Where requests go and the proxy's bounds."""

    upstreams: Upstreams = field(default_factory=Upstreams)
    #: the token clients must present (``--token-env``); None on loopback
    token: Optional[str] = None
    max_body: int = 64 * 1024 * 1024
    connect_timeout: float = 10.0
    #: the longest silence of an upstream between two bytes (the profile's ``summarizer.timeout_s``)
    idle_timeout: float = 120.0
    #: the longest an answer may take, from the request to its last byte (the profile's
    #: ``summarizer.call_deadline_s``, which bounds a model call of ``pipeline run`` too)
    answer_timeout: float = 300.0


class ProxyApp:
    """The ASGI application (``uvicorn`` serves it; tests may call it in process)."""

    def __init__(self, settings: ProxySettings, store: ProxyStore, policy: Optional[Policy] = None,
                 status: Optional[StatusInfo] = None) -> None:
        self.settings = settings
        self.store = store
        self.policy = policy
        self.status = status
        self.metrics = Metrics(store)
        self._client: Optional[UpstreamPool] = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)

    # ------------------------------------------------------------------ lifespan

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self.client()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def client(self) -> UpstreamPool:
        """The one upstream client (:mod:`pipeline.proxy.upstream`): its pool is every agent's; it
        keeps no cookies (each agent's own pass through as its headers)."""
        if self._client is None:
            settings = self.settings
            self._client = UpstreamPool(settings.connect_timeout, settings.idle_timeout,
                                        answer_timeout=settings.answer_timeout)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    # ------------------------------------------------------------------ one request

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope["headers"]]
        names = dict(headers)
        path, method = scope["path"], scope["method"]
        if method == "GET" and path in (STATS_PATH, METRICS_PATH, STATUS_PATH) and self._authorized(names):
            await self._own_page(path, send)
            return
        where = route(path, scope.get("query_string", b"").decode("latin-1"), names, self.settings.upstreams)
        forwarding = read = False
        try:
            if not self._authorized(names):
                raise ProxyFailure(401, f"this proxy needs its token in the {TOKEN_HEADER} header")
            body = await _read_body(receive, self.settings.max_body)
            read = True
            started = time.perf_counter()
            forward, conversation = (await asyncio.to_thread(self._apply, where, body, names) if method == "POST"
                                     and where.kind != "passthrough" else (None, None))
            outcome = "unchanged" if forward is None else "rewritten"
            sent = body if forward is None else forward
            self.metrics.request(where.kind, outcome)
            self.metrics.added_latency(where.kind, time.perf_counter() - started)
            forwarding = True
            # the store's record of the request (a SQLite write, a round trip to Redis) is made in
            # a worker thread while the upstream is called; the answer waits for it
            booked = asyncio.ensure_future(asyncio.to_thread(
                self.store.forwarded, outcome, conversation, len(body) // 4, len(sent) // 4))
            try:
                await self._forward(method, where, headers, sent, receive, send, conversation, booked)
            finally:
                await booked
        except ClientGone:
            return
        except ProxyFailure as failure:
            if not forwarding:  # the proxy's own answer (an upstream's failure is counted as one)
                if read:  # a body the proxy could not read as JSON: a request all the same
                    self.store.count("requests")
                self.store.count("proxy_errors")
                self.metrics.request(where.kind, "refused")
            await _reply(send, failure.status, error_body(where.provider, failure.status, failure.message))

    async def _own_page(self, path: str, send: Send) -> None:
        """The proxy's own pages, read from the store in a worker thread (never on the event loop:
        a store that is slow to answer, Redis away, holds up no other request)."""
        if path == METRICS_PATH:
            await _reply(send, 200, await asyncio.to_thread(self.metrics.text), CONTENT_TYPE)
        elif path == STATUS_PATH and self.status is not None:
            page = await asyncio.to_thread(status_html, self.status, self.store)
            await _reply(send, 200, page, "text/html; charset=utf-8")
        else:
            counters = await asyncio.to_thread(self.store.counters)
            await _reply(send, 200, json.dumps(counters).encode(), "application/json")

    def _authorized(self, names: dict[str, str]) -> bool:
        token = self.settings.token
        return token is None or hmac.compare_digest(names.get(TOKEN_HEADER, "").encode(), token.encode())

    def _apply(self, where: Route, body: bytes, headers: Mapping[str, str]) -> tuple[Optional[bytes], Optional[str]]:
        """The bytes to forward instead of ``body`` (None: the client's), and the conversation's id."""
        data, fast = _json_object(body)
        request = Request(where, data, headers, self.store.anchor)  # the one view the policies read
        conversation = request.conversation
        changed = None if self.policy is None else self.policy.apply(request, data)
        if changed is None:
            return None, conversation
        return codec.dumps(changed, fast=fast), conversation

    async def _forward(self, method: str, where: Route, headers: list[tuple[str, str]], body: bytes,
                       receive: Receive, send: Send, conversation: Optional[str] = None,
                       booked: Optional[Awaitable[None]] = None) -> None:
        """Call the upstream and stream its answer back, once ``booked`` is done; a client that
        goes away cancels it."""
        outgoing = [(k, v) for k, v in headers if k not in _HOP]
        call = asyncio.ensure_future(self._relay(method, where, outgoing, body, send, conversation, booked))
        gone = asyncio.ensure_future(_disconnected(receive))
        done, _ = await asyncio.wait({call, gone}, return_when=asyncio.FIRST_COMPLETED)
        if call not in done:
            call.cancel()
        gone.cancel()
        await asyncio.gather(call, gone, return_exceptions=True)
        if call.done() and not call.cancelled() and call.exception() is not None:
            raise call.exception()  # type: ignore[misc]

    async def _relay(self, method: str, where: Route, headers: list[tuple[str, str]], body: bytes,
                     send: Send, conversation: Optional[str], booked: Optional[Awaitable[None]] = None) -> None:
        try:
            response = await self.client().request(method, where.url, headers, body)
        except UpstreamTimeout as err:
            self.store.count("upstream_errors")
            silent = f"the upstream {_host(where.url)} did not answer in time"
            raise ProxyFailure(504, self._too_long(where) if isinstance(err, AnswerTimeout) else silent) from None
        except UpstreamError as err:
            self.store.count("upstream_errors")
            raise ProxyFailure(502, f"cannot reach the upstream {_host(where.url)}: {err.reason()}") from None
        try:
            if response.status >= 400:
                self.store.count("upstream_errors")
            back = [(k, v) for k, v in response.headers if k.decode("latin-1") not in _HOP or k == b"content-length"]
            if booked is not None:
                await asyncio.shield(booked)  # the counters a client reads after its answer count it
            await send({"type": "http.response.start", "status": response.status, "headers": back})
            tap = UsageTap(response.header(b"content-type") or "", response.header(b"content-encoding") is not None)
            last = b""
            try:
                async for chunk in response.chunks():
                    tap.feed(chunk)
                    last = chunk
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
            except UpstreamError as err:
                self.store.count("upstream_errors")
                await self._cut(where, response, err, last, send)
                return
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            reported = tap.reported() if conversation is not None and response.status < 400 else None
            if reported is not None and conversation is not None:
                self.store.usage(conversation, reported)
        finally:
            response.release()

    async def _cut(self, where: Route, response: Answer, err: UpstreamError, last: bytes, send: Send) -> None:
        """An answer the upstream broke off, or that ran past the answer deadline, once its head
        went to the client: an event stream sent in chunks ends with the error as its last event
        (in the provider's shape) and the stream's proper end; any other answer is left cut, so
        the server closes the connection and the client sees a body shorter than announced,
        never a whole-looking one. An event the upstream left half-written (``last``, the piece
        sent last, does not end with a blank line) is closed by one first: a blank line ends it,
        and an event without data is dropped by every reader of the format, so the error event is
        read on its own."""
        kind = (response.header(b"content-type") or "").lower()
        if (kind.startswith("text/event-stream") and response.header(b"content-length") is None
                and response.header(b"content-encoding") is None):
            if isinstance(err, AnswerTimeout):
                status, message = 504, self._too_long(where)
            else:
                status, message = 502, f"the upstream {_host(where.url)} broke off its answer: {err.reason()}"
            event = error_event(where.provider, status, message)
            if not last.endswith((b"\n\n", b"\r\n\r\n")):
                event = b"\n\n" + event
            await send({"type": "http.response.body", "body": event, "more_body": False})

    def _too_long(self, where: Route) -> str:
        return (f"the upstream {_host(where.url)} did not finish its answer within {self.settings.answer_timeout:g} s "
                f"(the profile's summarizer.call_deadline_s; raise it for longer answers)")


class ClientGone(Exception):
    """The client went away before its request was read."""


async def _read_body(receive: Receive, limit: int) -> bytes:
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise ProxyFailure(413, f"the request body is larger than the proxy's limit of {limit} bytes")
        parts.append(chunk)
        if not message.get("more_body", False):
            return b"".join(parts)


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def _json_object(body: bytes) -> tuple[dict[str, Any], bool]:
    """The body's object, and whether orjson read it (:func:`pipeline.proxy.codec.loads`)."""
    try:
        data, fast = codec.loads(body)
    except UnicodeDecodeError:
        raise ProxyFailure(400, "the request body is not UTF-8 JSON") from None
    except json.JSONDecodeError as err:
        raise ProxyFailure(400, f"the request body is not valid JSON: {err.msg} at line {err.lineno} "
                                f"column {err.colno}") from None
    if not isinstance(data, dict):
        raise ProxyFailure(400, "the request body is not a JSON object")
    return data, fast


async def _reply(send: Send, status: int, body: bytes, kind: str = "application/json") -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", kind.encode()), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _host(url: str) -> str:
    return urlsplit(url).hostname or url
