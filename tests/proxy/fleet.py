"""A fleet for the tests and ``benchmarks/fleet.py``: replicas of the real ``pipeline proxy`` on one
Redis, a fast upstream process, and a client pool that spreads conversations over the replicas.

The pool does what a load balancer does: a request goes to the next replica in turn, and one
the replica could not take (connection refused or dropped before an answer) is sent to the
next replica.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import httpx

ROOT = Path(__file__).resolve().parents[2]
PROFILE = """extends: builtin:default
name: fleet
compaction:
  trigger: {tokens: 600}
  keep_recent_tokens: 150
"""
HEADERS = {"x-api-key": "sk-client-key", "anthropic-version": "2023-06-01"}


class FastUpstream:
    """``python -m tests.proxy.fastupstream`` in its own process."""

    def __init__(self, summary_delay: float = 0.0) -> None:
        self.args = [sys.executable, "-m", "tests.proxy.fastupstream", "--summary-delay", str(summary_delay)]
        self.proc: Optional[subprocess.Popen] = None
        self.url = ""

    def __enter__(self) -> "FastUpstream":
        self.proc = subprocess.Popen(self.args, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.startswith("listening "), f"the upstream did not start: {line!r}"
        self.url = f"http://127.0.0.1:{int(line.split()[1])}"
        return self

    def seen(self) -> dict[str, Any]:
        return dict(httpx.get(self.url + "/_seen", timeout=30).json())

    def __exit__(self, *exc: object) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(10)


def user_text(conversation: int, turn: int) -> str:
    return f"c{conversation} turn {turn} " + "x" * 40


@dataclass
class Pool:
    """The clients' side: ``urls`` (the replicas), one keep-alive client, the answers checked."""

    urls: list[str]
    client: httpx.AsyncClient = field(default_factory=lambda: httpx.AsyncClient(
        timeout=120, limits=httpx.Limits(max_connections=256, max_keepalive_connections=256)))
    answered: int = 0
    retried: int = 0
    latencies: list[float] = field(default_factory=list)

    async def ask(self, at: int, body: dict[str, Any]) -> dict[str, Any]:
        """POST ``body`` to replica ``at`` (mod their number), else the next ones; the answer's JSON."""
        content = json.dumps(body)
        loop = asyncio.get_running_loop()
        for attempt in range(len(self.urls) * 3):
            url = self.urls[(at + attempt) % len(self.urls)]
            started = loop.time()
            try:
                answer = await self.client.post(url + "/v1/messages", content=content, headers=HEADERS)
            except (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError):
                self.retried += 1
                await asyncio.sleep(0.01 * attempt)
                continue
            assert answer.status_code == 200, answer.text
            self.latencies.append(loop.time() - started)
            self.answered += 1
            return dict(answer.json())
        raise AssertionError(f"no replica answered: {self.urls}")

    async def conversation(self, number: int, turns: int) -> None:
        """One conversation of ``turns`` requests, each answer checked whole and its own."""
        messages: list[dict[str, Any]] = []
        for turn in range(turns):
            text = user_text(number, turn)
            messages.append({"role": "user", "content": text})
            answer = await self.ask(number + turn, {"model": "claude-x", "max_tokens": 16, "system": "own",
                                                    "messages": messages})
            reply = answer["content"][0]["text"]
            assert reply == "echo:" + text, (number, turn, reply)
            messages.append({"role": "assistant", "content": reply})

    async def run(self, conversations: int, turns: int, concurrency: Optional[int] = None) -> None:
        gate = asyncio.Semaphore(concurrency or conversations)

        async def one(number: int) -> None:
            async with gate:
                await self.conversation(number, turns)
        await asyncio.gather(*(one(n) for n in range(conversations)))

    async def aclose(self) -> None:
        await self.client.aclose()
