"""Load a page in headless Chromium through the DevTools protocol (over a pipe; stdlib only).

``open_page(path, script)`` navigates to the file, collects every console message,
uncaught exception and log entry of level error, then evaluates ``script`` (which must
return a JSON-able value) and returns ``(errors, value)``. ``find_browser()`` names the
binary or returns None (tests skip with the reason then).
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--remote-debugging-pipe")


def find_browser() -> Optional[str]:
    explicit = os.environ.get("CHROMIUM")
    if explicit and shutil.which(explicit):
        return shutil.which(explicit)
    return next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)


class _Pipe:
    """One DevTools connection: JSON messages separated by NUL bytes."""

    def __init__(self, to_browser: int, from_browser: int, timeout: float) -> None:
        self.out, self.inp, self.deadline = to_browser, from_browser, time.monotonic() + timeout
        self.buffer, self.next_id, self.events = b"", 0, []

    def send(self, method: str, params: Optional[dict] = None, session: Optional[str] = None) -> dict:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.out, json.dumps(message).encode() + b"\0")
        return self._wait(lambda m: m.get("id") == self.next_id)

    def wait_event(self, method: str) -> dict:
        return self._wait(lambda m: m.get("method") == method)

    def _wait(self, wanted) -> dict:
        while True:
            while b"\0" in self.buffer:
                raw, self.buffer = self.buffer.split(b"\0", 1)
                message = json.loads(raw)
                if wanted(message):
                    if "error" in message:
                        raise RuntimeError(f"DevTools error: {message['error']}")
                    return message
                self.events.append(message)
            self._read()

    def _read(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0 or not select.select([self.inp], [], [], left)[0]:
            raise TimeoutError("the browser did not answer in time")
        chunk = os.read(self.inp, 1 << 16)
        if not chunk:
            raise RuntimeError("the browser closed the DevTools pipe")
        self.buffer += chunk


def _errors(events: list[dict]) -> list[str]:
    found = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            found.append("exception: " + json.dumps(params.get("exceptionDetails", {}))[:500])
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert", "warning"):
            found.append(f"console.{params['type']}: " + json.dumps(params.get("args", []))[:500])
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") in ("error", "warning"):
            found.append("log: " + params["entry"].get("text", ""))
    return found


def _as_fds_3_and_4(read_end: int, write_end: int):
    """Child setup: the browser reads commands on fd 3 and writes replies on fd 4."""

    def setup() -> None:
        import fcntl

        dup = getattr(fcntl, "F_DUPFD_CLOEXEC", fcntl.F_DUPFD)
        high_r, high_w = fcntl.fcntl(read_end, dup, 10), fcntl.fcntl(write_end, dup, 10)
        os.dup2(high_r, 3)
        os.dup2(high_w, 4)

    return setup


def open_page(browser: str, page: Path, script: str, timeout: float = 60.0,
              screenshot: Optional[Path] = None) -> tuple[list[str], Any]:
    """Open ``page``; return (console errors and warnings, value of ``script``); with
    ``screenshot``, a PNG of the page is written there."""
    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()
    with tempfile.TemporaryDirectory(prefix="pipeline-chromium-", ignore_cleanup_errors=True) as profile:
        proc = subprocess.Popen(
            [browser, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            close_fds=False,  # fds 3 and 4 are made in the child; Python's own fds are close-on-exec
            preexec_fn=_as_fds_3_and_4(to_r, from_w),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own process group, so its helpers end with it
        )
        os.close(to_r)
        os.close(from_w)
        pipe = _Pipe(to_w, from_r, timeout)
        try:
            return _session(pipe, page, script, screenshot)
        finally:
            _close(proc, pipe)
            os.close(to_w)
            os.close(from_r)


def _close(proc: subprocess.Popen, pipe: _Pipe) -> None:
    """Ask the browser to quit; end its process group if it does not within 10 s."""
    try:
        pipe.deadline = time.monotonic() + 5
        pipe.send("Browser.close")
    except (OSError, RuntimeError, TimeoutError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _session(pipe: _Pipe, page: Path, script: str, screenshot: Optional[Path] = None) -> tuple[list[str], Any]:
    targets = pipe.send("Target.getTargets")["result"]["targetInfos"]
    target = next(t["targetId"] for t in targets if t["type"] == "page")
    session = pipe.send("Target.attachToTarget", {"targetId": target, "flatten": True})["result"]["sessionId"]
    for domain in ("Page", "Runtime", "Log"):
        pipe.send(f"{domain}.enable", session=session)
    if screenshot is not None:
        pipe.send("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 900, "deviceScaleFactor": 1,
                                                          "mobile": False}, session=session)
    pipe.send("Page.navigate", {"url": page.resolve().as_uri()}, session=session)
    pipe.wait_event("Page.loadEventFired")
    result = pipe.send("Runtime.evaluate", {"expression": script, "returnByValue": True}, session=session)
    value = result["result"]["result"].get("value")
    if screenshot is not None:
        import base64

        shot = pipe.send("Page.captureScreenshot", {"format": "png"}, session=session)
        screenshot.write_bytes(base64.b64decode(shot["result"]["data"]))
    return _errors(pipe.events), value
