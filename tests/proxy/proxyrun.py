"""Running the real `pipeline proxy` command for tests: a subprocess on a free loopback port."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

READY = re.compile(r"^pipeline proxy: listening on (http://\S+)$")


class ProxyProcess:
    """``python -m pipeline proxy ARGS --listen 127.0.0.1:0``; ``url`` once it printed its line."""

    def __init__(self, *args: str, store: "Path | str", env: Optional[dict] = None, cwd: Optional[Path] = None) -> None:
        """``store``: a path for ``--store sqlite:PATH``, or a ``redis://`` URL as it is."""
        where = store if isinstance(store, str) else f"sqlite:{store}"
        self.args = [sys.executable, "-m", "pipeline", "proxy", *args, "--store", where]
        if "--listen" not in args:
            self.args += ["--listen", "127.0.0.1:0"]
        self.env = dict(os.environ if env is None else env)
        self.cwd = cwd
        self.proc: Optional[subprocess.Popen] = None
        self.url = ""
        self.stderr_lines: list[str] = []

    def start(self, timeout: float = 60.0) -> "ProxyProcess":
        self.proc = subprocess.Popen(self.args, stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     env=self.env, cwd=self.cwd)
        deadline = time.monotonic() + timeout
        assert self.proc.stderr is not None
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            self.stderr_lines.append(line.rstrip("\n"))
            m = READY.match(line.rstrip("\n"))
            if m:
                self.url = m.group(1)
                return self
        self.stop()
        raise AssertionError(f"the proxy did not start: {self.stderr_lines}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        if self.proc.stderr is not None:
            self.stderr_lines += self.proc.stderr.read().splitlines()
        return code

    def __enter__(self) -> "ProxyProcess":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
