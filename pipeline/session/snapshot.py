"""The snapshot of the recorded system prompt a compaction entry carries (pi 1.x).

A compaction drops everything before its kept range, recorded system messages included, so
pi writes the replay of the branch's projection at that point on the compaction entry
(``systemMessage``, stamped with the entry's time); the projection then shows it first,
before the summary (:func:`~pipeline.session.projection.project_path`). The replay itself
is :mod:`pipeline.session.system`'s.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from pipeline.js import date_ms
from pipeline.session.entries import Entry
from pipeline.session.messages import AgentMessage
from pipeline.session.projection import project_path
from pipeline.session.system import current_system_message


def projected_messages(path: Sequence[Entry]) -> list[AgentMessage]:
    """The messages of pi 1.x's projection of ``path`` (``buildSessionContext`` in 1.x)."""
    return [m for item in project_path(path) for m in item.messages]


def system_snapshot(path: Sequence[Entry], timestamp: str) -> Optional[dict[str, Any]]:
    """The ``systemMessage`` of a compaction entry appended at the end of ``path`` at
    ``timestamp`` (ISO): the projection's current system message, its time the entry's."""
    current = current_system_message(projected_messages(path))
    if current is None:
        return None
    current["timestamp"] = date_ms(timestamp)
    return current
