"""A loopback server that answers agent turns and summary calls from two scripts.

Agent turns stream (``stream: true``), summary calls do not; each kind takes the next
reply of its own script (the last one repeats), so a test need not know how many
summary calls a compaction makes.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from pipeline.testing.loopback import LoopbackServer


class RoutedServer(LoopbackServer):
    def __init__(self, agent: list, summary: list) -> None:
        super().__init__()
        self.scripts = {"agent": deque(agent), "summary": deque(summary)}
        self.last: dict[str, Any] = {"agent": None, "summary": None}
        self.kinds: list[str] = []

    def _take(self, received: Any) -> tuple[int, Any]:
        kind = "agent" if isinstance(received.body, dict) and received.body.get("stream") is True else "summary"
        with self._lock:
            self.received.append(received)
            self.kinds.append(kind)
            if self.scripts[kind]:
                self.last[kind] = self.scripts[kind].popleft()
            return len(self.received) - 1, self.last[kind]
