"""One POST and its answer, streamed, on the standard library's :mod:`http.client`.

The agent-turn transport of :class:`pipeline.llm.chat.ChatClient`: a turn is one request
whose answer (an event stream, or a JSON body) is read as it arrives, so it needs no more
than HTTP/1.1 on one connection, and :mod:`http.client` is part of what every Python
start pays for anyway (httpx would add tens of milliseconds of imports to each
``pipeline run``). What it keeps of the client it replaces:

* the **timeouts**: ``connect`` seconds to open the connection (and the TLS handshake),
  ``timeout`` seconds for every later send and read; which one ran out is named as httpx
  named it (``ConnectTimeout``, ``WriteTimeout``, ``ReadTimeout``);
* **TLS** verified against the same certificates: ``SSL_CERT_FILE``, else ``SSL_CERT_DIR``,
  else certifi's bundle;
* a ``user-agent`` header (:data:`USER_AGENT`; httpx sent its own name);
* a URL's **user info** sent as HTTP Basic credentials (in place of any ``authorization``
  header), as httpx sends it;
* **one connection kept** between turns (a TLS handshake per turn costs more than the
  turn's request): it is reused only after an answer read to its end, and a request on
  a reused connection that the server had closed meanwhile is sent once more on a new one.

Only ``identity`` bodies are asked for (the clients' ``accept-encoding`` header); a server
that compresses anyway is decoded by :func:`pipeline.llm.limits.body_decoder` (gzip and
deflate, never past the caller's cap).
"""

from __future__ import annotations

import http.client
import os
import socket
import ssl
import threading
from base64 import b64encode
from codecs import getincrementaldecoder
from typing import Iterator, Mapping, Optional
from urllib.parse import unquote, urlsplit

from pipeline.llm.limits import body_decoder
from pipeline.version import __version__

#: Sent unless the caller's headers name one (http.client sends none; some front ends refuse that).
USER_AGENT = f"context-pipeline/{__version__}"

#: The failures of a request on a reused connection that the server had closed while it was idle.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError, ConnectionAbortedError)
_CHUNK = 64 * 1024
_NEWLINES = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"  # str.splitlines' line ends


class PostTimeout(Exception):
    """The connect, a send or a read took longer than allowed; ``phase`` names which, as httpx did."""

    def __init__(self, phase: str) -> None:
        super().__init__(phase)
        self.phase = phase


class Poster:
    """POSTs to one ``url``; :meth:`post` returns the open :class:`Answer`. Thread-safe: each
    request takes the kept connection (or opens one) and gives it back once read to its end."""

    def __init__(self, url: str, *, timeout: float, connect: float) -> None:
        parts = urlsplit(url)
        self.https = parts.scheme == "https"
        self.host = parts.hostname or ""
        try:
            self.port, self._invalid = parts.port, ""
        except ValueError as err:  # a port that is no number: each request fails with it, as httpx's did
            self.port, self._invalid = None, str(err)
        self.target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.basic = _basic_credentials(parts.username, parts.password)
        self.timeout, self.connect = timeout, connect
        self._idle: Optional[http.client.HTTPConnection] = None
        self._closed = False
        self._lock = threading.Lock()

    def post(self, body: bytes, headers: Mapping[str, str]) -> "Answer":
        """Send ``body``; the answer's status and headers are read, its body is not."""
        if self._invalid:
            raise http.client.InvalidURL(self._invalid)
        sent = {"user-agent": USER_AGENT, **headers}
        if self.basic is not None:
            sent = {k: v for k, v in sent.items() if k.lower() != "authorization"}
            sent["authorization"] = self.basic
        with self._lock:
            kept, self._idle = self._idle, None
        if kept is not None:
            try:
                return self._exchange(kept, body, sent)
            except _STALE:
                kept.close()
        return self._exchange(self._open(), body, sent)

    def close(self) -> None:
        """Close the kept connection; one still reading an answer is closed when it is done."""
        with self._lock:
            kept, self._idle, self._closed = self._idle, None, True
        if kept is not None:
            kept.close()

    def _open(self) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection
        if self.https:
            conn = http.client.HTTPSConnection(self.host, self.port, timeout=self.connect, context=_tls_context())
        else:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=self.connect)
        try:
            conn.connect()
        except (TimeoutError, socket.timeout):
            conn.close()
            raise PostTimeout("ConnectTimeout") from None
        except BaseException:
            conn.close()
            raise
        if conn.sock is not None:
            conn.sock.settimeout(self.timeout)
        return conn

    def _exchange(self, conn: http.client.HTTPConnection, body: bytes, headers: dict[str, str]) -> "Answer":
        try:
            try:
                conn.request("POST", self.target, body=body, headers=headers)
            except (TimeoutError, socket.timeout):
                raise PostTimeout("WriteTimeout") from None
            try:
                response = conn.getresponse()
            except (TimeoutError, socket.timeout):
                raise PostTimeout("ReadTimeout") from None
        except BaseException:
            conn.close()
            raise
        return Answer(self, conn, response)

    def _keep(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            spare, self._idle = (conn, None) if self._closed else (self._idle, conn)
        if spare is not None:
            spare.close()


class Answer:
    """An answer being read: ``status``, ``headers`` (names in lower case) and the body as
    :meth:`chunks` or :meth:`lines`. A context manager: leaving it closes the connection,
    unless the body was read to its end (then the connection is kept for the next request)."""

    def __init__(self, poster: Poster, conn: http.client.HTTPConnection, response: http.client.HTTPResponse) -> None:
        self._poster, self._conn, self._response = poster, conn, response
        self.status = response.status
        self.headers = {name.lower(): value for name, value in response.getheaders()}
        self._finished = False

    def __enter__(self) -> "Answer":
        return self

    def __exit__(self, *exc: object) -> None:
        if self._finished and not self._response.will_close:
            self._poster._keep(self._conn)
        else:
            self._conn.close()

    def chunks(self, label: str, cap: int) -> Iterator[bytes]:
        """The body as it arrives, decoded (``content-encoding``) never past ``cap + 1`` bytes at once."""
        decoder = body_decoder(self.headers.get("content-encoding", ""), label)
        while True:
            try:
                raw = self._response.read1(_CHUNK)
            except (TimeoutError, socket.timeout):
                raise PostTimeout("ReadTimeout") from None
            if not raw:  # the end: closed, so the connection takes its next request (read1 leaves it open)
                self._response.close()
                self._finished = True
                return
            yield raw if decoder is None else decoder.feed(raw, cap)

    def lines(self, label: str, cap: int) -> Iterator[str]:
        """The body's lines (UTF-8, undecodable bytes replaced), split as :meth:`str.splitlines`
        splits, a ``\\r\\n`` across two chunks included: the lines httpx's ``iter_lines`` gave."""
        text = getincrementaldecoder("utf-8")(errors="replace")
        pending = ""
        for chunk in self.chunks(label, cap):
            pending += text.decode(chunk)
            held = pending.endswith("\r")  # maybe the first half of a \r\n
            ready, pending = _split(pending[:-1] if held else pending)
            pending += "\r" if held else ""
            yield from ready
        pending += text.decode(b"", final=True)
        yield from pending.splitlines()


def _split(text: str) -> tuple[list[str], str]:
    """The complete lines of ``text`` and what is left after the last line end."""
    lines = text.splitlines(keepends=True)
    rest = lines.pop() if lines and lines[-1][-1:] not in _NEWLINES else ""
    return [line[:-2] if line.endswith("\r\n") else line[:-1] for line in lines], rest


def _basic_credentials(user: Optional[str], password: Optional[str]) -> Optional[str]:
    if user is None and password is None:
        return None
    pair = f"{unquote(user or '')}:{unquote(password or '')}".encode()
    return "Basic " + b64encode(pair).decode("ascii")


def _tls_context() -> ssl.SSLContext:
    """The verified TLS context httpx builds: ``SSL_CERT_FILE``, ``SSL_CERT_DIR``, else certifi's bundle
    (http.client imports :mod:`ssl` itself; certifi is imported here, for an https URL only)."""
    if os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
    if os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
    import certifi

    return ssl.create_default_context(cafile=certifi.where())
