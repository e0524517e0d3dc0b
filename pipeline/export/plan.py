"""What an export changes: :class:`Change`, :class:`Plan`, and the conflicts it records.

Shared by :mod:`pipeline.export.apply` (the owned files) and :mod:`pipeline.export.shared`
(the keys of shared files); :mod:`pipeline.export.writer` writes a plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Optional

from pipeline.errors import Location, Problem
from pipeline.export.paths import link_in_the_way

Action = Literal["create", "update", "delete", "unchanged"]


@dataclass(frozen=True)
class Change:
    """What exporting does to one file."""

    path: str  # relative to the root
    action: Action
    text: Optional[str] = None  # the new text (create, update)
    keys: tuple[str, ...] = ()  # shared JSON: the keys set or removed, as people read them
    shared: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "action": self.action}
        if self.shared:
            out["keys"] = list(self.keys)
        return out


@dataclass
class Plan:
    """The changes of one export, the conflicts found, and the manifest to write."""

    root: Path
    manifest_path: str
    changes: list[Change] = field(default_factory=list)
    conflicts: list[Problem] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)
    #: every path the manifest, its journal or this export names (the writer cleans beside them)
    known: set[str] = field(default_factory=set)

    @property
    def drift(self) -> list[Change]:
        return [c for c in self.changes if c.action != "unchanged"]


def conflict(plan: Plan, path: str, message: str) -> None:
    plan.conflicts.append(Problem(message, Location(str(plan.root / path)),
                                  hint="move it away, or pass --force to let the export take it over",
                                  code="profile.export-conflict"))


def in_the_way(plan: Plan, path: str, force: bool) -> bool:
    """Whether a symbolic link (or a file where a folder belongs) is on ``path``; a conflict
    unless ``force``, which replaces the link itself when the export writes."""
    found = link_in_the_way(plan.root, path)
    if found is None:
        return False
    part, what = found
    if not force or not what.startswith("a symbolic link"):
        conflict(plan, path, f"{part} is {what}")
    return True
