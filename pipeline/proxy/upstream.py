"""The proxy's HTTP/1.1 client for its upstreams, on asyncio's streams.

What the proxy needs of a client and nothing more: a request's head and body written as they
are (the client's headers, its credentials included, go out untouched and are never logged),
the answer's head read, its body streamed back piece by piece as it arrives (``content-length``,
``chunked``, or until the upstream closes), and the connection kept for the next request to
the same origin. httpx did this before; its pure-Python layers (httpcore, anyio, h11) were
about half of what the proxy spent on a request (docs/benchmarks.md).

* **Pooling.** Idle connections are kept per origin (scheme, host, port), at most
  :data:`MAX_IDLE` in all and each for :data:`KEEP_IDLE_S` seconds; one the upstream closed
  while idle is dropped when it is taken.
* **One retry.** A request whose connection ends before a single byte of the answer came back
  (a kept-alive connection the upstream closed as the request went out) is sent once more on a
  new connection, as browsers do; a second such end is :class:`RemoteProtocolError`.
* **Deadlines.** Connecting (TLS and a proxy's ``CONNECT`` included) within ``connect_timeout``;
  every later wait (writing, the answer's head, each piece of its body) within ``idle_timeout``:
  :class:`UpstreamTimeout` past either. The whole exchange, from the request's start to the
  answer's last byte, within ``answer_timeout``: :class:`AnswerTimeout` past it (an upstream
  that trickles, never silent for long but never done).
* **TLS** with the system's trust store (OpenSSL's default paths; ``SSL_CERT_FILE`` and
  ``SSL_CERT_DIR`` name others), the host's name checked, HTTP/1.1 offered by ALPN.
* **Proxies from the environment** (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, their
  lower-case forms, ``NO_PROXY``): an ``http://`` proxy, with ``user:password@`` sent as basic
  ``Proxy-Authorization``; an ``http`` upstream is asked for in absolute form, an ``https``
  one through a ``CONNECT`` tunnel. Any other proxy (``https://``, ``socks5://``) is
  :class:`ProxyNotSupported`, whose message names the variable.
* **No cookies** are kept, no redirect followed, nothing decoded: the answer's bytes are the
  client's.
"""

from __future__ import annotations

import asyncio
import base64
import ipaddress
import os
import socket
import ssl
import time
from collections import deque
from dataclasses import dataclass
from types import TracebackType
from typing import AsyncIterator, Mapping, Optional
from urllib.parse import quote, unquote, urlsplit

#: idle connections kept, over all origins
MAX_IDLE = 64
#: how long an idle connection is kept (httpx's default: servers close theirs after 5 s or more)
KEEP_IDLE_S = 5.0
#: the longest answer head read
MAX_HEAD = 256 * 1024
_READ = 64 * 1024
#: what may stand unquoted in a request target (a path's and a query's characters, escapes kept)
_TARGET_SAFE = "/?:@!$&'()*+,;=-._~%[]"


class UpstreamError(Exception):
    """The upstream could not be reached, or broke off; :meth:`reason` is what a client is told."""

    def reason(self) -> str:
        return type(self).__name__


class ConnectError(UpstreamError):
    """No connection: refused, unresolvable, or its TLS handshake failed."""


class RemoteProtocolError(UpstreamError):
    """The connection ended before a whole answer, or what came back is not HTTP/1.1."""


class ReadError(UpstreamError):
    """The connection failed while the answer was read."""


class UpstreamTimeout(UpstreamError):
    """The upstream did not connect or answer within its deadline."""


class AnswerTimeout(UpstreamTimeout):
    """The answer was not whole within the exchange's ``answer_timeout``."""


class ProxyNotSupported(UpstreamError):
    """The environment names a proxy this client cannot use."""

    def reason(self) -> str:
        return str(self)


class ProxyRefused(UpstreamError):
    """The environment's proxy answered its ``CONNECT`` with something else than 2xx."""

    def reason(self) -> str:
        return str(self)


class _Nothing(UpstreamError):
    """The connection ended before a byte of the answer: the request may be sent again."""


@dataclass(frozen=True)
class Origin:
    scheme: str
    host: str
    port: int

    @property
    def authority(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == (443 if self.scheme == "https" else 80) else f"{host}:{self.port}"


@dataclass(frozen=True)
class _Via:
    """A proxy from the environment, and its basic credentials."""

    origin: Origin
    authorization: Optional[str]


def split(url: str) -> tuple[Origin, str]:
    """``url``'s origin and its request target (path and query)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConnectError(f"not an http(s) URL: {url}")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    target = quote(parts.path or "/", safe=_TARGET_SAFE) + (f"?{quote(parts.query, safe=_TARGET_SAFE)}"
                                                            if parts.query else "")
    return Origin(parts.scheme, parts.hostname, port), target


class _Deadline:
    """``with _Deadline(s, ends):`` cancels the task past ``s`` seconds, which leaves as
    :class:`UpstreamTimeout`, or past ``ends`` (:func:`time.monotonic`) if that comes first,
    which leaves as :class:`AnswerTimeout`."""

    __slots__ = ("seconds", "late", "task", "handle", "fired")

    def __init__(self, seconds: float, ends: float = float("inf")) -> None:
        left = ends - time.monotonic()
        self.late = left < seconds
        self.seconds = max(left, 0.0) if self.late else seconds
        self.fired = False

    def __enter__(self) -> "_Deadline":
        task = asyncio.current_task()
        assert task is not None
        self.task = task
        self.handle = asyncio.get_running_loop().call_later(self.seconds, self._fire)
        return self

    def _fire(self) -> None:
        self.fired = True
        self.task.cancel()

    def __exit__(self, kind: Optional[type], error: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.handle.cancel()
        if self.fired and kind is asyncio.CancelledError:
            uncancel = getattr(self.task, "uncancel", None)
            if uncancel is not None:  # Python 3.11+: the task is not left counted as cancelling
                uncancel()
            raise (AnswerTimeout() if self.late else UpstreamTimeout()) from None


class _Wait:
    """The waits of one exchange: each within ``idle`` seconds and none past ``ends``."""

    __slots__ = ("idle", "ends")

    def __init__(self, idle: float, ends: float) -> None:
        self.idle, self.ends = idle, ends

    def __call__(self) -> _Deadline:
        return _Deadline(self.idle, self.ends)


class _Connection:
    """One connection to an origin (directly, or through a proxy)."""

    __slots__ = ("reader", "writer", "origin", "absolute", "idle_since")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, origin: Origin,
                 absolute: bool) -> None:
        self.reader, self.writer, self.origin = reader, writer, origin
        #: requests go in absolute form (to an http upstream through a proxy)
        self.absolute = absolute
        self.idle_since = 0.0

    def alive(self, now: float) -> bool:
        return (now - self.idle_since < KEEP_IDLE_S and not self.reader.at_eof()
                and not self.writer.is_closing())

    def close(self) -> None:
        self.writer.close()


class Answer:
    """An answer's status and head (lower-case names, bytes as they came), its body by
    :meth:`chunks`, and :meth:`release` once done (the connection back to the pool when the
    body was read whole, closed otherwise)."""

    def __init__(self, pool: "UpstreamPool", connection: _Connection, status: int,
                 headers: list[tuple[bytes, bytes]], framing: str, length: int, reusable: bool, wait: _Wait) -> None:
        self.status = status
        self.headers = headers
        self._pool, self._connection, self._wait = pool, connection, wait
        self._framing, self._length, self._reusable = framing, length, reusable
        self._complete = framing == "none"

    def header(self, name: bytes) -> Optional[str]:
        for key, value in self.headers:
            if key == name:
                return value.decode("latin-1")
        return None

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive (the chunked framing taken off)."""
        reader, wait = self._connection.reader, self._wait
        try:
            if self._framing == "length":
                async for piece in _pieces(reader, self._length, wait, "the answer ended before its content-length"):
                    yield piece
            elif self._framing == "chunked":
                async for piece in _dechunked(reader, wait):
                    yield piece
            elif self._framing == "close":
                while True:
                    with wait():
                        piece = await reader.read(_READ)
                    if not piece:
                        break
                    yield piece
        except (ConnectionError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as err:
            raise ReadError(type(err).__name__) from None
        self._complete = True

    def release(self) -> None:
        connection = self._connection
        connection.idle_since = time.monotonic()
        if self._complete and self._reusable:
            self._pool.keep(connection)
        else:
            connection.close()


async def _pieces(reader: asyncio.StreamReader, size: int, wait: _Wait, cut: str) -> AsyncIterator[bytes]:
    """The next ``size`` bytes as they come, each read within ``wait``; ``cut`` says what an end
    of the connection before them means."""
    left = size
    while left:
        with wait():
            piece = await reader.read(min(left, _READ))
        if not piece:
            raise RemoteProtocolError(cut)
        left -= len(piece)
        yield piece


async def _dechunked(reader: asyncio.StreamReader, wait: _Wait) -> AsyncIterator[bytes]:
    while True:
        with wait():
            line = await reader.readuntil(b"\r\n")
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise RemoteProtocolError("a chunk's size is not hexadecimal") from None
        if size == 0:
            while True:  # trailers, up to the empty line
                with wait():
                    if await reader.readuntil(b"\r\n") == b"\r\n":
                        return
        async for piece in _pieces(reader, size, wait, "the answer ended inside a chunk"):
            yield piece
        with wait():
            if await reader.readexactly(2) != b"\r\n":
                raise RemoteProtocolError("a chunk does not end with CRLF")


class UpstreamPool:
    """The proxy's one client: every request to every upstream goes through it."""

    def __init__(self, connect_timeout: float, idle_timeout: float, environ: Optional[Mapping[str, str]] = None,
                 answer_timeout: float = float("inf")) -> None:
        self.connect_timeout, self.idle_timeout, self.answer_timeout = connect_timeout, idle_timeout, answer_timeout
        self._idle: dict[Origin, deque[_Connection]] = {}
        self._count = 0
        self._proxies = _proxies(os.environ if environ is None else environ)
        self._tls: Optional[ssl.SSLContext] = None

    async def request(self, method: str, url: str, headers: list[tuple[str, str]], body: bytes) -> Answer:
        """``method`` on ``url`` with ``headers`` (as the client sent them, hop-by-hop ones taken
        out, no ``host`` nor ``content-length``) and ``body``; the answer once its head came (its
        body due, whole, within ``answer_timeout`` of this call)."""
        origin, target = split(url)
        wait = _Wait(self.idle_timeout, time.monotonic() + self.answer_timeout)
        for attempt in (1, 2):
            connection = await self._connection(origin, wait.ends)
            try:
                return await self._exchange(connection, method, target, headers, body, wait)
            except _Nothing:
                connection.close()
                if attempt == 2:
                    raise RemoteProtocolError("the upstream closed the connection without an answer") from None
            except BaseException:
                connection.close()
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    def keep(self, connection: _Connection) -> None:
        if self._count >= MAX_IDLE:
            connection.close()
            return
        self._idle.setdefault(connection.origin, deque()).append(connection)
        self._count += 1

    async def aclose(self) -> None:
        for idle in self._idle.values():
            for connection in idle:
                connection.close()
        self._idle.clear()
        self._count = 0

    # ------------------------------------------------------------------ one exchange

    async def _exchange(self, connection: _Connection, method: str, target: str, headers: list[tuple[str, str]],
                        body: bytes, wait: _Wait) -> Answer:
        origin = connection.origin
        if connection.absolute:
            target = f"{origin.scheme}://{origin.authority}{target}"
        lines = [f"{method} {target} HTTP/1.1", f"host: {origin.authority}"]
        lines += [f"{name}: {value}" for name, value in headers]
        if body or method not in ("GET", "HEAD", "DELETE", "OPTIONS"):
            lines.append(f"content-length: {len(body)}")
        via = self._via(origin) if connection.absolute else None
        if via is not None and via.authorization is not None:
            lines.append(f"proxy-authorization: {via.authorization}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        writer = connection.writer
        try:
            with wait():
                writer.writelines((head, body))  # one writev on uvloop, the body not copied first
                await writer.drain()
        except (ConnectionError, OSError):
            raise _Nothing() from None
        while True:
            status, answer_headers, version = await self._head(connection.reader, wait)
            if not 100 <= status < 200:
                break
            if status == 101:
                raise RemoteProtocolError("the upstream switched protocols")
        framing, length = _framing(method, status, answer_headers)
        closing = version != b"HTTP/1.1" or any(
            k == b"connection" and b"close" in v.lower() for k, v in answer_headers)
        return Answer(self, connection, status, answer_headers, framing, length, not closing and framing != "close",
                      wait)

    async def _head(self, reader: asyncio.StreamReader, wait: _Wait) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        try:
            with wait():
                raw = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as err:
            if not err.partial:
                raise _Nothing() from None
            raise RemoteProtocolError("the answer's head was cut off") from None
        except asyncio.LimitOverrunError:
            raise RemoteProtocolError("the answer's head is too long") from None
        except (ConnectionError, OSError):
            raise _Nothing() from None
        return _parse_head(raw)

    # ------------------------------------------------------------------ connections

    async def _connection(self, origin: Origin, ends: float) -> _Connection:
        idle, now = self._idle.get(origin), time.monotonic()
        while idle:
            connection = idle.pop()
            self._count -= 1
            if connection.alive(now):
                return connection
            connection.close()
        try:
            with _Deadline(self.connect_timeout, ends):
                return await self._open(origin)
        except (ConnectionError, OSError, ssl.SSLError, asyncio.IncompleteReadError) as err:
            raise ConnectError(type(err).__name__) from None

    async def _open(self, origin: Origin) -> _Connection:
        via = self._via(origin)
        tls = self._context() if origin.scheme == "https" else None
        if via is None:
            reader, writer = await asyncio.open_connection(origin.host, origin.port, ssl=tls, limit=MAX_HEAD)
            return _Connection(reader, writer, origin, absolute=False)
        if tls is None:
            reader, writer = await asyncio.open_connection(via.origin.host, via.origin.port, limit=MAX_HEAD)
            return _Connection(reader, writer, origin, absolute=True)
        sock = await _tunnel(via, origin)
        reader, writer = await asyncio.open_connection(sock=sock, ssl=tls, server_hostname=origin.host, limit=MAX_HEAD)
        return _Connection(reader, writer, origin, absolute=False)

    def _context(self) -> ssl.SSLContext:
        if self._tls is None:
            self._tls = ssl.create_default_context()
            self._tls.set_alpn_protocols(["http/1.1"])
        return self._tls

    def _via(self, origin: Origin) -> Optional[_Via]:
        """The environment's proxy for ``origin``, if any (:class:`ProxyNotSupported` for one it cannot use)."""
        proxies = self._proxies
        url = proxies.get(origin.scheme) or proxies.get("all")
        if not url or _bypassed(origin, proxies.get("no", "")):
            return None
        names = {"http": "HTTP_PROXY", "https": "HTTPS_PROXY"}
        name = names[origin.scheme] if proxies.get(origin.scheme) else "ALL_PROXY"
        parts = urlsplit(url if "://" in url else f"http://{url}")
        if parts.scheme != "http" or not parts.hostname:
            raise ProxyNotSupported(
                f"{name} names a {parts.scheme or 'schemeless'} proxy; pipeline proxy reaches upstreams through "
                f"http:// proxies only (https upstreams by CONNECT): set {name} to an http:// proxy, or add the "
                f"upstream's host to NO_PROXY")
        authorization = None
        if parts.username is not None:
            pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
            authorization = "Basic " + base64.b64encode(pair).decode("ascii")
        return _Via(Origin("http", parts.hostname, parts.port or 80), authorization)


def _proxies(environ: Mapping[str, str]) -> dict[str, str]:
    """The ``*_proxy`` variables of ``environ`` by scheme (and ``all``, ``no``), read as urllib's
    ``getproxies_environment`` reads them: a lower-case name wins over its upper-case one."""
    found = {name.lower()[:-6]: value for name, value in environ.items() if value and name.lower().endswith("_proxy")}
    if "REQUEST_METHOD" in environ:  # a CGI script: HTTP_PROXY is the request's Proxy header (httpoxy)
        found.pop("http", None)
    for name, value in environ.items():
        if name.endswith("_proxy"):
            if value:
                found[name[:-6]] = value
            else:
                found.pop(name[:-6], None)
    return found


def _bypassed(origin: Origin, no_proxy: str) -> bool:
    """Whether ``NO_PROXY`` names ``origin``: ``*``, its host or a domain above it (``example.com``,
    ``.example.com``), ``HOST:PORT`` for that port only, or an IP network (``10.0.0.0/8``)."""
    for entry in (e.strip().lower() for e in no_proxy.split(",")):
        if entry == "*":
            return True
        host, _, port = entry.rpartition(":") if entry.count(":") == 1 else (entry, "", "")
        if not host or (port and port != str(origin.port)):
            continue
        host = host.strip("[]").lstrip(".")
        if origin.host == host or origin.host.endswith("." + host) or _in_network(origin.host, host):
            return True
    return False


def _in_network(host: str, network: str) -> bool:
    try:
        return ipaddress.ip_address(host) in ipaddress.ip_network(network, strict=False)
    except ValueError:
        return False


async def _tunnel(via: _Via, origin: Origin) -> socket.socket:
    """A socket to ``via`` on which a ``CONNECT`` to ``origin`` was answered 2xx."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(via.origin.host, via.origin.port, type=socket.SOCK_STREAM)
    error: OSError = ConnectionRefusedError(f"cannot connect to {via.origin.host}")
    for family, kind, proto, _, address in infos:
        sock = socket.socket(family, kind, proto)
        sock.setblocking(False)
        try:
            await loop.sock_connect(sock, address)
            break
        except OSError as err:
            sock.close()
            error = err
    else:
        raise error
    try:
        lines = [f"CONNECT {_hostport(origin)} HTTP/1.1", f"host: {_hostport(origin)}"]
        if via.authorization is not None:
            lines.append(f"proxy-authorization: {via.authorization}")
        await loop.sock_sendall(sock, ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        head = b""
        while b"\r\n\r\n" not in head:
            piece = await loop.sock_recv(sock, 4096)
            if not piece or len(head) > MAX_HEAD:
                raise ConnectionResetError("the proxy closed the tunnel")
            head += piece
        status = _parse_head(head.split(b"\r\n\r\n", 1)[0] + b"\r\n\r\n")[0]
        if not 200 <= status < 300:
            raise ProxyRefused(f"the proxy {via.origin.authority} refused to CONNECT to {_hostport(origin)}: "
                               f"status {status}")
    except BaseException:
        sock.close()
        raise
    return sock


def _hostport(origin: Origin) -> str:
    host = f"[{origin.host}]" if ":" in origin.host else origin.host
    return f"{host}:{origin.port}"


def _parse_head(raw: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    lines = raw[:-4].split(b"\r\n")
    version, _, rest = lines[0].partition(b" ")
    if not version.startswith(b"HTTP/1.") or not rest[:3].isdigit():
        raise RemoteProtocolError("the upstream's answer is not HTTP/1.1")
    headers = []
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not name or name[-1:] in (b" ", b"\t") or line[:1] in (b" ", b"\t"):
            raise RemoteProtocolError("a header line of the upstream's answer is malformed")
        headers.append((name.lower(), value.strip(b" \t")))
    return int(rest[:3]), headers, version


def _framing(method: str, status: int, headers: list[tuple[bytes, bytes]]) -> tuple[str, int]:
    """How the answer's body ends (RFC 9112 6.3): ``none``, ``chunked``, ``length`` (and its length), ``close``."""
    if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        return "none", 0
    encodings = [v for k, v in headers if k == b"transfer-encoding"]
    if encodings:
        if encodings[-1].lower().rsplit(b",", 1)[-1].strip() != b"chunked":
            return "close", 0
        return "chunked", 0
    lengths = {v.strip() for k, v in headers if k == b"content-length"}
    if len(lengths) > 1 or (lengths and not next(iter(lengths)).isdigit()):
        raise RemoteProtocolError("the answer's content-length is not one number")
    if lengths:
        length = int(next(iter(lengths)))
        return ("length", length) if length else ("none", 0)
    return "close", 0
