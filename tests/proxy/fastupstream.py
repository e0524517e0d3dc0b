"""A fast loopback Anthropic upstream in its own process, for the fleet's load tests and benchmark.

``python -m tests.proxy.fastupstream [--summary-delay S]`` binds a free loopback port, prints
``listening PORT`` on stdout and serves (uvicorn, keep-alive) until killed:

* a summary request (its body holds ``<conversation>``) is answered, after ``--summary-delay``
  seconds, with a summary that passes the default profile's checks; the SHA-256 of each such
  body is kept, so a test can tell whether one history was summarized twice;
* any other ``POST`` at once with a message whose text is ``echo:`` and the text of the
  request's last message (a client checks it got its own answer, whole);
* ``GET /_seen`` returns ``{"requests": N, "summaries": [sha256, ...], "with_summary": M}``
  (M: the other requests that carried a summary).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import socket
import sys
from typing import Any

import uvicorn

from pipeline import compile_profile


def summary_text() -> str:
    summary = compile_profile("default").profile.summary
    return "\n".join(f"{summary.schema_format.section_prefix}{s.heading}\n- the files were read" for s in summary.schema_)


def last_text(body: dict[str, Any]) -> str:
    """The text of the last message of an Anthropic Messages body."""
    content = (body.get("messages") or [{}])[-1].get("content")
    if isinstance(content, list):
        texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return texts[-1] if texts else ""
    return str(content or "")


class Upstream:
    def __init__(self, summary_delay: float) -> None:
        self.summary_delay = summary_delay
        self.summary = summary_text()
        self.requests = 0
        self.summaries: list[str] = []
        self.with_summary = 0
        self.marker = self.summary.splitlines()[0].encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["method"] == "GET":
            await _reply(send, {"requests": self.requests, "summaries": self.summaries,
                                "with_summary": self.with_summary})
            return
        self.requests += 1
        if b"<conversation>" in raw:
            self.summaries.append(hashlib.sha256(raw).hexdigest())
            await asyncio.sleep(self.summary_delay)
            text = self.summary
        else:
            self.with_summary += self.marker in raw
            text = "echo:" + last_text(json.loads(raw))
        await _reply(send, {"id": "m", "type": "message", "role": "assistant", "model": "claude-x",
                            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                            "usage": {"input_tokens": len(raw) // 4, "output_tokens": 5}})


async def _reply(send: Any, data: Any) -> None:
    body = json.dumps(data).encode()
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--summary-delay", type=float, default=0.0)
    args = parser.parse_args()
    # named TCP, so asyncio sets TCP_NODELAY on each accepted connection (else an answer's head and
    # body, two small writes, wait for the client's delayed ACK: ~40 ms a request)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)  # connections wait in the backlog until uvicorn accepts them
    print(f"listening {sock.getsockname()[1]}", flush=True)
    # idle connections kept 10 minutes, as providers keep theirs for long: uvicorn's 5 s would close
    # one of the proxy's pooled connections just as the proxy reuses it (a 502 that is not the fleet's)
    config = uvicorn.Config(Upstream(args.summary_delay), log_level="error", access_log=False, lifespan="off",
                            backlog=2048, timeout_keep_alive=600)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
