"""What ``pipeline export --verify`` found: one item per checked setting, the shadows, an exit code."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Literal

from pipeline.export.base import line_json
from pipeline.export.verify.shadows import Shadow

#: ``ok``: the agent sent what the profile says; ``mismatch``: it did not (``diff`` shows how);
#: ``not_observable``: one prompt's request does not show it (``detail`` names the file/key that
#: carries it); ``failed``: the agent's run ended without a request to compare
Status = Literal["ok", "mismatch", "not_observable", "failed"]

EXIT_OK, EXIT_MISMATCH, EXIT_RUN_FAILED = 0, 1, 3


@dataclass(frozen=True)
class Item:
    """One checked setting: its key in the export's report, what was found and where."""

    key: str
    status: Status
    detail: str
    diff: str = ""

    def to_json(self) -> dict[str, str]:
        return line_json(self, optional=("diff",))


@dataclass(frozen=True)
class Verification:
    """The verification of one export against the installed agent CLI."""

    target: str
    agent: str  # the version the export is written for
    binary: str
    version: str  # what the installed CLI says (``--version``)
    runs: int
    items: tuple[Item, ...] = ()
    shadows: tuple[Shadow, ...] = field(default_factory=tuple)

    @property
    def exit_code(self) -> int:
        """3 when a run of the agent failed, else 1 on a mismatch, else 0."""
        if any(i.status == "failed" for i in self.items):
            return EXIT_RUN_FAILED
        return EXIT_MISMATCH if any(i.status == "mismatch" for i in self.items) else EXIT_OK

    def to_json(self) -> dict:
        return {"binary": self.binary, "version": self.version, "written_for": self.agent, "runs": self.runs,
                "ok": self.exit_code == EXIT_OK, "items": [i.to_json() for i in self.items],
                "shadows": [s.to_json() for s in self.shadows]}

    def text(self) -> str:
        out = [f"verified with {self.binary} ({self.version}; the export is written for {self.agent}), "
               f"{self.runs} run(s):"]
        width = max((len(i.key) for i in self.items), default=0)
        for item in self.items:
            out.append(f"  {item.key:<{width}}  {item.status:<14}  {item.detail}")
            out += [f"      {line}" for line in item.diff.splitlines()]
        if self.shadows:
            out.append("what shadows the export in this environment (the verification ran without it):")
            out += [f"  {s.path}: {s.what}" for s in self.shadows]
        else:
            out.append("nothing in this environment shadows the export")
        bad = [i.key for i in self.items if i.status in ("mismatch", "failed")]
        out.append(f"verify: {len(bad)} item(s) differ or failed: {', '.join(bad)}" if bad else
                   "verify: the agent sends what the profile says")
        return "\n".join(out)


def text_diff(expected: str, sent: str, *, limit: int = 60) -> str:
    """A unified diff, expected (the profile) against sent (the agent), at most ``limit`` lines."""
    lines = list(difflib.unified_diff(expected.splitlines(), sent.splitlines(), "profile", "agent sent",
                                      lineterm="", n=1))
    if len(lines) > limit:
        lines = lines[:limit] + [f"... ({len(lines) - limit} more diff lines)"]
    return "\n".join(lines)


def nearest_diff(expected: str, leaves: list[tuple[str, str]]) -> tuple[str, str]:
    """Where the request holds the text closest to ``expected`` (most lines in common) and the
    diff against the lines of it that line up with ``expected``."""
    want = expected.splitlines()
    best: tuple[int, str, list[str]] = (0, "", [])
    for path, text in leaves:
        lines = text.splitlines()
        blocks = [b for b in difflib.SequenceMatcher(None, want, lines, autojunk=False).get_matching_blocks() if b.size]
        common = sum(b.size for b in blocks)
        if common > best[0]:
            first, last = blocks[0], blocks[-1]
            begin = max(0, first.b - first.a)
            end = min(len(lines), last.b + last.size + (len(want) - last.a - last.size))
            best = (common, path, lines[begin:end])
    if not best[1]:
        return "", text_diff(expected, "")
    return best[1], text_diff(expected, "\n".join(best[2]))
