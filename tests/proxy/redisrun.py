"""A real ``redis-server`` for the fleet tests: a free loopback port, its files in a tmp dir.

The binary comes from Debian's ``redis-server`` package (``.ci/run`` installs it); a machine
without it fails the tests that need it, saying how to install it: they never skip.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Optional

import redis


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """``redis-server`` on 127.0.0.1:``port`` (a free one by default), no persistence, in ``home``."""

    def __init__(self, home: Path, port: Optional[int] = None) -> None:
        binary = shutil.which("redis-server")
        assert binary is not None, ("redis-server is not installed: apt-get install -y redis-server "
                                    "(.ci/run installs it)")
        self.binary = binary
        self.home = home
        self.port = port or free_port()
        self.proc: Optional[subprocess.Popen] = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 20.0) -> "RedisServer":
        self.home.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.home), "--logfile", str(self.home / "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=0.5)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                client.ping()
                client.close()
                return self
            except redis.ConnectionError:
                assert self.proc.poll() is None, (self.home / "redis.log").read_text(errors="replace")
                time.sleep(0.05)
        self.stop()
        raise AssertionError(f"redis-server did not answer on port {self.port} in {timeout} s")

    def client(self) -> "redis.Redis":
        return redis.Redis(host="127.0.0.1", port=self.port, decode_responses=True)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def __enter__(self) -> "RedisServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
