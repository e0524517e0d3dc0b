"""Serving the proxy with uvicorn: bind, say where once, run until SIGINT or SIGTERM.

uvicorn is the ASGI server (the ``proxy`` extra): HTTP/1.1 keep-alive and streaming
responses, a graceful shutdown that lets requests in flight finish (cancelled after
``graceful_s``), and nothing else loaded. uvicorn's ``auto`` loop and parser are uvloop and
httptools (both C) when installed, as the ``[proxy]`` extra does where they build: the
pure-Python h11 parser and asyncio's loop spent most of the proxy's own time on a large
body; without them the proxy serves the same, slower. The socket is bound here, before the server
starts, so ``--listen HOST:0`` knows the port it got and the one line it prints,
``pipeline proxy: listening on http://HOST:PORT``, names a port that already accepts.
"""

from __future__ import annotations

import logging
import socket
import sys
from dataclasses import dataclass
from types import FrameType
from typing import Any, Optional

from pipeline.errors import Location, PipelineError, Problem, UsageError

LOOPBACK = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class Listen:
    """``HOST:PORT`` as given to ``--listen`` (IPv6 hosts in brackets)."""

    host: str
    port: int

    @classmethod
    def parse(cls, text: str) -> "Listen":
        host, sep, port = text.rpartition(":")
        host = host.strip("[]")
        if not sep or not host or not port.isdigit() or int(port) > 65535:
            raise UsageError(Problem(f"{text!r} is not HOST:PORT", key="--listen",
                                     hint="for example 127.0.0.1:8787, or 127.0.0.1:0 for a free port",
                                     code="proxy.usage"))
        return cls(host, int(port))

    @property
    def loopback(self) -> bool:
        return self.host in LOOPBACK or self.host.startswith("127.")


def bind(listen: Listen) -> socket.socket:
    """A listening socket on ``listen`` (a taken port is a located error)."""
    family = socket.AF_INET6 if ":" in listen.host else socket.AF_INET
    # IPPROTO_TCP named, and TCP_NODELAY set: asyncio sets no-delay only on sockets whose protocol
    # says TCP, and the answer's head and body go as separate small writes (Nagle's delay with the
    # client's delayed ACK added 40 ms to every request)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        sock.bind((listen.host, listen.port))
    except OSError as err:
        sock.close()
        raise PipelineError(Problem(f"cannot listen on {listen.host}:{listen.port}: {err.strerror}",
                                    Location("--listen"), key="--listen",
                                    hint="choose another port, or 0 for a free one", code="proxy.listen")) from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def serve(app: Any, sock: socket.socket, *, graceful_s: float = 30.0) -> None:
    """Run ``app`` on ``sock`` until SIGINT or SIGTERM, then finish in-flight requests and return."""
    import uvicorn

    class Server(uvicorn.Server):
        async def startup(self, sockets: Optional[list[socket.socket]] = None) -> None:
            await super().startup(sockets)
            if self.started:
                host, port = sock.getsockname()[:2]
                shown = f"[{host}]" if ":" in host else host
                print(f"pipeline proxy: listening on http://{shown}:{port}", file=sys.stderr, flush=True)

        def handle_exit(self, sig: int, frame: Optional[FrameType]) -> None:
            # a signal ends the server; it is not raised again afterwards (the command exits 0)
            if self.should_exit:
                self.force_exit = True
            self.should_exit = True

    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False,
                            timeout_graceful_shutdown=max(1, int(graceful_s)), server_header=False, date_header=False)
    logging.getLogger("uvicorn.error").addFilter(_not_a_cut_answer)
    Server(config).run(sockets=[sock])


#: what uvicorn logs when an application returns before its answer's end: the proxy does so on
#: purpose for an answer its upstream broke off (:meth:`pipeline.proxy.app.ProxyApp._cut`)
_CUT = "ASGI callable returned without completing response."


def _not_a_cut_answer(record: logging.LogRecord) -> bool:
    return record.getMessage() != _CUT
