"""httpx's transport with a network backend that honours the current deadline
(:mod:`pipeline.llm.deadline`), the summary clients' I/O (see :mod:`pipeline.llm.limits`).

Apart from :mod:`pipeline.llm.limits` so that importing the bounds does not import httpx:
``pipeline run``'s agent turns go over :mod:`pipeline.llm.post`, and only a summary call
imports this module.
"""

from __future__ import annotations

import ssl
from typing import Any, Iterable, Union

import httpcore
import httpx

from pipeline.llm.deadline import bounded_timeout

#: A socket option as httpcore takes it (``setsockopt``'s arguments).
SocketOption = Union[tuple[int, int, int], tuple[int, int, Union[bytes, bytearray]], tuple[int, int, None, int]]


class _DeadlineStream(httpcore.NetworkStream):
    """A network stream whose every operation ends by the current deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, bounded_timeout(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, bounded_timeout(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        bounded = bounded_timeout(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, bounded))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[SocketOption] | None = None) -> httpcore.NetworkStream:
        bounded = bounded_timeout(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_tcp(host, port, bounded, local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[SocketOption] | None = None) -> httpcore.NetworkStream:
        bounded = bounded_timeout(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_unix_socket(path, bounded, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class BoundedTransport(httpx.HTTPTransport):
    """httpx's transport with a network backend that honours the current deadline."""

    def __init__(self) -> None:
        context = httpx.create_ssl_context()
        super().__init__(verify=context)
        self._pool = httpcore.ConnectionPool(ssl_context=context, network_backend=_DeadlineBackend())


def bounded_http_client() -> httpx.Client:
    """An ``httpx.Client`` whose connections end by the current deadline (:class:`BoundedTransport`)."""
    return httpx.Client(transport=BoundedTransport())
