"""Pinned context: texts that survive every compaction verbatim (``compaction.pins``).

What is pinned is collected from the **whole current branch** at each compaction (so a
text pinned once is pinned again by every later compaction, even after its message was
summarized away):

* ``first_request``: the branch's first user message;
* ``messages``: each message whose role is in a rule's ``roles`` and whose text matches
  its ``pattern`` (Python regular expression, ``re.search``), once per message;
* ``files``: each listed file (relative to the session's ``cwd``), its text as it is at
  compaction time; a file that cannot be read is left out and reported.

The pinned block (``open`` + each ``item`` joined by ``separator`` + ``close``) goes before
or after the summary (``placement``); the summary requests get ``note`` (after a blank
line, ``${pinned}`` = the block) so the model knows what it need not repeat.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

from pipeline import files
from pipeline.compaction.serialize import content_text
from pipeline.errors import PipelineError, Problem
from pipeline.model.compaction import Pins
from pipeline.session.entries import Entry, MessageEntry


@dataclass(frozen=True)
class Pinned:
    """One pinned text and where it came from (``first_request``, ``messages[i]`` or a path)."""

    source: str
    text: str


def _text(entry: MessageEntry) -> str:
    content = getattr(entry.message, "content", ())
    return content_text(content, "\n") if content is not None else ""


def collect_pins(path: Sequence[Entry], pins: Pins, cwd: str | None) -> tuple[list[Pinned], list[Problem]]:
    """The pinned texts of a branch (root → leaf), in order: first request, rules, files."""
    messages = [e for e in path if isinstance(e, MessageEntry)]
    found: list[Pinned] = []
    if pins.first_request:
        first = next((e for e in messages if e.role == "user" and _text(e)), None)
        if first is not None:
            found.append(Pinned("first_request", _text(first)))
    seen = {p.text for p in found}
    for i, rule in enumerate(pins.messages):
        pattern = re.compile(rule.pattern)
        for entry in messages:
            text = _text(entry)
            if entry.role in rule.roles and text not in seen and pattern.search(text):
                found.append(Pinned(f"messages[{i}]", text))
                seen.add(text)
    problems = []
    for name in pins.files:
        try:
            found.append(Pinned(name, files.read_text(Path(cwd or ".") / name, PINNED, name)))
        except PipelineError as err:  # missing, not a regular file, beyond the limit, not UTF-8
            why = err.problems[0].message.removeprefix(f"cannot read {PINNED}: ")
            problems.append(Problem(f"pinned file {name} cannot be read: {why}",
                                    key="compaction.pins.files", severity="warning", code="session.pin-unreadable"))
    return found, problems


#: The kind of file a pinned file is, for its size limit (docs/limits.md).
PINNED = "pinned file"


def render_block(pinned: Sequence[Pinned], pins: Pins) -> str:
    """The pinned block as it stands in the summary ('' when nothing is pinned)."""
    if not pinned or pins.item is None:
        return ""
    items = pins.separator.join(pins.item.render(text=p.text, source=p.source) for p in pinned)
    opening = pins.open.render() if pins.open is not None else ""
    closing = pins.close.render() if pins.close is not None else ""
    return opening + items + closing


def request_note(block: str, pins: Pins) -> str | None:
    """What the summary requests get appended (``pins.note``), or ``None``."""
    if not block or pins.note is None:
        return None
    return pins.note.render(pinned=block)


def place(summary: str, block: str, pins: Pins) -> str:
    """The summary with the pinned block before or after it."""
    if not block:
        return summary
    return block + summary if pins.placement == "before_summary" else summary + block


@dataclass(frozen=True)
class PinnedBlock:
    """The pinned block of one compaction and the warnings collecting it raised."""

    block: str = ""
    warnings: tuple[Problem, ...] = ()

    def apply(self, result, pins: Pins):
        """``result`` (a ``CompactionResult``) with the block placed and the warnings added."""
        if not self.block and not self.warnings:
            return result
        return replace(result, summary=place(result.summary, self.block, pins),
                       warnings=result.warnings + self.warnings)


def pinned_block(session, settings) -> PinnedBlock:
    """The pinned block for ``session``'s current branch under ``settings.pins`` (a ``Compaction``)."""
    pins = settings.pins
    if not (pins.first_request or pins.messages or pins.files):
        return PinnedBlock()
    found, problems = collect_pins(session.path_to(), pins, session.header.cwd)
    return PinnedBlock(render_block(found, pins), tuple(problems))
