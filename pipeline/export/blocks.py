"""The marked block of a text file the export shares with the user (Gemini CLI's ``GEMINI.md``).

The export owns the lines from :data:`~pipeline.export.base.BLOCK_BEGIN` to
:data:`~pipeline.export.base.BLOCK_END`; every other line stays the user's, byte for
byte. The manifest keeps a digest of the block's lines: a block edited since it was
written, or one this export did not write, is a conflict unless ``--force``. The file is
read as a shared settings file is (a regular file, not through a link, bounded, strict
UTF-8), and messages never quote its lines.
"""

from __future__ import annotations

from typing import Optional

from pipeline import files
from pipeline.errors import Location, Problem
from pipeline.export.base import BLOCK_BEGIN, BLOCK_END
from pipeline.export.manifest import digest
from pipeline.export.plan import Action, Change, Plan, conflict, in_the_way
from pipeline.prompt.context import block_marks

_LABEL = ("context-pipeline block",)


def block_body(text: str) -> str:
    """A block's lines as the file holds them (ending with a line break)."""
    return text if text.endswith("\n") else text + "\n"


def block_change(plan: Plan, path: str, text: Optional[str], recorded: set[str], force: bool) -> None:
    """The marked block of ``path`` set to ``text`` (``None``: removed), the user's lines kept."""
    body = None if text is None else block_body(text)
    linked = in_the_way(plan, path, force)
    current = "" if linked else _read(plan, path)
    if current is None:
        return
    lines = current.splitlines(keepends=True)
    marks = _marks(plan, path, lines)
    if marks is None:
        return
    old = "".join(lines[marks[0] + 1:marks[1]]) if marks else None
    if old is not None and not force and digest(old) not in recorded:
        conflict(plan, path, "the export's marked block was edited since it was written" if recorded else
                 "the file holds a context-pipeline block this export did not write")
    if old == body:
        plan.changes.append(Change(path, "unchanged", shared=True))
        return
    new = _spliced(current, lines, marks, body)
    exists = bool(current) or not files.missing(plan.root / path)
    action: Action = "create" if not exists else ("delete" if not new.strip() else "update")
    plan.changes.append(Change(path, action, None if action == "delete" else new, _LABEL, shared=True))


def _read(plan: Plan, path: str) -> Optional[str]:
    """The file's text ("" when it does not exist); ``None`` after a problem was recorded."""
    target = plan.root / path
    if files.missing(target):
        return ""
    label = str(target)
    data = files.read_bytes(target, "context file", label, follow=False)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        plan.conflicts.append(Problem("the file is not UTF-8 text", files.byte_location(data, err.start, label),
                                      hint="the export adds a marked block to it; save it as UTF-8",
                                      code="profile.export-file"))
        return None


def _marks(plan: Plan, path: str, lines: list[str]) -> Optional[list[int]]:
    """The indexes of the two marker lines ([] when there are none); ``None`` when broken."""
    marks = block_marks(lines)
    if marks is None:
        first = next(i for i, line in enumerate(lines) if line.rstrip("\r\n") in (BLOCK_BEGIN, BLOCK_END))
        plan.conflicts.append(Problem(f"the export's block markers are broken (want one `{BLOCK_BEGIN}` line, "
                                      f"then one `{BLOCK_END}` line)", Location(str(plan.root / path), first + 1),
                                      hint="mend or remove the markers", code="profile.export-file"))
        return None
    return list(marks)


def _spliced(current: str, lines: list[str], marks: list[int], body: Optional[str]) -> str:
    """``current`` with the block (between ``marks``, or none) replaced by ``body``."""
    block = [] if body is None else [f"{BLOCK_BEGIN}\n", body, f"{BLOCK_END}\n"]
    if marks:
        return "".join(lines[:marks[0]] + block + lines[marks[1] + 1:])
    if not block:
        return current
    gap = ("\n" if not current.endswith("\n") else "") + "\n" if current else ""
    return current + gap + "".join(block)
