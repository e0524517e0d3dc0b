"""``pipeline replay``: what a profile would do across an archive of sessions, without a model.

Each session's current branch is replayed message by message under a profile's
compaction settings (the model's own, ``compaction.model_overrides``, when the session
names its model): the context grows by each message's estimate; after each assistant
reply the trigger is tested for the window; when it fires the strategy is simulated:

* ``summarize``: the messages older than ``keep_recent_tokens`` become one summary of
  ``min(summarized tokens, history budget)`` tokens (the budget is the upper bound the
  request asks for);
* ``mask_tool_results``: the tool results older than the kept window become their
  placeholder's estimate;
* ``hybrid``: masking first, the summary when still over the trigger.

Counted per session: compactions, tokens before and after each, the summary budgets asked
for, and whether the context ever exceeded the window (**overflow**: a message that
does not fit even after compacting). Sessions are read one at a time (a directory, a
``.tar``/``.tar.gz`` or a ``.zip``; members are streamed, never all in memory) and
replayed in worker processes.
"""

from __future__ import annotations

import math
import os
import tarfile
import tempfile
import zipfile
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, as_completed, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from pipeline import files
from pipeline.compaction.tokens import estimate_tokens
from pipeline.errors import PipelineError
from pipeline.model.compaction import Compaction
from pipeline.model.profile import Profile
from pipeline.session.masks import masked_message
from pipeline.session.messages import AssistantMessage, ToolResultMessage


@dataclass
class SessionReplay:
    """What one profile did to one session."""

    name: str
    messages: int = 0
    compactions: int = 0
    before: list[float] = field(default_factory=list)
    after: list[float] = field(default_factory=list)
    budgets: list[int] = field(default_factory=list)
    overflow: bool = False
    peak: float = 0
    error: str | None = None


def _history_budget(settings: Compaction, max_tokens: int | None) -> int:
    budget = math.floor(settings.summary_budget.history * settings.reserve_tokens)
    return min(budget, max_tokens) if max_tokens else budget


def _kept_from(sizes: list[float], keep: int) -> int:
    """Index of the first kept message: walking back until ``keep`` tokens are reached."""
    total = 0.0
    for i in range(len(sizes) - 1, -1, -1):
        total += sizes[i]
        if total >= keep:
            return i
    return 0


class _Context:
    """The simulated context: each message's estimate, and whether it is a tool result."""

    def __init__(self) -> None:
        self.sizes: list[float] = []
        self.masked_size: list[float | None] = []

    @property
    def tokens(self) -> float:
        return sum(self.sizes)

    def add(self, size: float, masked: float | None) -> None:
        self.sizes.append(size)
        self.masked_size.append(masked)

    def mask(self, keep: int) -> bool:
        """Mask the tool results before the kept part; whether there was any."""
        cut, any_masked = _kept_from(self.sizes, keep), False
        for i in range(cut):
            if self.masked_size[i] is not None:
                self.sizes[i], self.masked_size[i], any_masked = self.masked_size[i], None, True
        return any_masked

    def summarize(self, keep: int, budget: int) -> bool:
        """Replace what lies before the kept part by a summary; whether there was anything to summarize."""
        cut = _kept_from(self.sizes, keep)
        if cut == 0:
            return False
        summary = min(sum(self.sizes[:cut]), budget)
        self.sizes = [summary] + self.sizes[cut:]
        self.masked_size = [None] + self.masked_size[cut:]
        return True


def replay_messages(name: str, messages, profile: Profile, window: int, model: tuple[str, str] | None) -> SessionReplay:
    """Replay ``messages`` (agent messages, oldest first) under ``profile``; see the module doc."""
    settings = profile.compaction.for_model(*(model or (None, None)))
    placeholder = settings.masking.placeholder
    budget = _history_budget(settings, profile.summarizer.max_tokens)
    out, ctx = SessionReplay(name, len(messages)), _Context()
    for message in messages:
        masked = None
        if isinstance(message, ToolResultMessage) and placeholder is not None:
            masked = estimate_tokens(masked_message(message, placeholder.render(tool=message.tool_name or "", chars="0")),
                                     settings)
        ctx.add(estimate_tokens(message, settings), masked)
        out.peak = max(out.peak, ctx.tokens)
        if window and ctx.tokens > window:
            out.overflow = True
        if isinstance(message, AssistantMessage) and settings.enabled and ctx.tokens > settings.threshold(window):
            _compact(ctx, settings, budget, window, out)
    return out


def _compact(ctx: _Context, settings: Compaction, budget: int, window: int, out: SessionReplay) -> None:
    before, did = ctx.tokens, False
    if settings.strategy in ("mask_tool_results", "hybrid"):
        did = ctx.mask(settings.keep_recent_tokens)
    if settings.strategy == "summarize" or (settings.strategy == "hybrid" and ctx.tokens > settings.threshold(window)):
        if ctx.summarize(settings.keep_recent_tokens, budget):
            out.budgets.append(budget)
            did = True
    if did:
        out.compactions += 1
        out.before.append(before)
        out.after.append(ctx.tokens)


# --------------------------------------------------------------------------- reading archives


@dataclass(frozen=True)
class Refused:
    """A member that is not replayed: why (beyond the session-file limit, not a regular file...)."""

    message: str


def archive_members(archive: Path) -> Iterator[tuple[str, bytes | Refused]]:
    """``(name, bytes)`` of every ``.jsonl`` in a directory, tar or zip, one at a time; a member
    beyond the session-file limit (docs/limits.md), or one that cannot be read, comes as
    :class:`Refused` and is never read whole."""
    if archive.is_dir():
        yield from _directory_members(archive)
    elif zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                if info.filename.endswith(".jsonl") and not info.is_dir():
                    with zf.open(info) as handle:  # the header's size may lie: read at most one byte past the limit
                        yield info.filename, _bounded(handle.read(files.limit(KIND) + 1))
    else:
        with tarfile.open(archive, "r|*") as tf:  # a stream: members are read in order, once
            for member in tf:
                if member.isfile() and member.name.endswith(".jsonl"):
                    handle = tf.extractfile(member)
                    if handle is not None:
                        yield member.name, _bounded(handle.read(files.limit(KIND) + 1))


#: The kind of file an archive member is, for its size limit.
KIND = "session file in an archive"


def _directory_members(archive: Path) -> Iterator[tuple[str, bytes | Refused]]:
    for path in sorted(archive.rglob("*.jsonl")):
        name = str(path.relative_to(archive))
        try:
            yield name, files.read_bytes(path, KIND, name)  # a FIFO or a device is refused, never opened for reading
        except PipelineError as err:
            yield name, Refused(err.problems[0].message)


def _bounded(data: bytes) -> bytes | Refused:
    if len(data) > files.limit(KIND):
        return Refused(f"file too large: more than {files.limit(KIND)} bytes (the limit for a {KIND})")
    return data


# --------------------------------------------------------------------------- workers

_PROFILES: dict[str, Profile] = {}
_WINDOW = 0


def _init(profiles: dict[str, Profile], window: int) -> None:
    global _PROFILES, _WINDOW
    _PROFILES, _WINDOW = profiles, window


def _session_model(context) -> tuple[str, str] | None:
    model = context.model
    return (model.provider, model.model_id) if model is not None and model.provider and model.model_id else None


def replay_one(name: str, data: bytes) -> dict[str, SessionReplay]:
    """Replay one session's bytes under every loaded profile (a worker's job)."""
    from pipeline.session import SessionFile
    from pipeline.session.projection import build_session_context

    with tempfile.NamedTemporaryFile(suffix=".jsonl") as tmp:
        tmp.write(data)
        tmp.flush()
        try:
            context = build_session_context(SessionFile.open(tmp.name))
        except PipelineError as err:
            return {label: SessionReplay(name, error=err.problems[0].message) for label in _PROFILES}
    messages, model = list(context.messages), _session_model(context)
    return {label: replay_messages(name, messages, profile, _WINDOW, model) for label, profile in _PROFILES.items()}


def replay_archive(
    archive: Path, profiles: dict[str, Profile], window: int, *, workers: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> Iterator[dict[str, SessionReplay]]:
    """Replay every session of ``archive`` under each profile, in parallel; results as they finish."""
    workers = workers or os.cpu_count() or 1
    with ProcessPoolExecutor(workers, initializer=_init, initargs=(profiles, window)) as pool:
        pending, done = set(), 0
        for name, data in archive_members(archive):
            if isinstance(data, Refused):
                done += 1
                if progress:
                    progress(done)
                yield {label: SessionReplay(name, error=data.message) for label in profiles}
                continue
            pending.add(pool.submit(replay_one, name, data))
            if len(pending) >= workers * 4:  # bounded: the archive is never all in memory
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    done += 1
                    if progress:
                        progress(done)
                    yield future.result()
        for future in as_completed(pending):
            done += 1
            if progress:
                progress(done)
            yield future.result()


# --------------------------------------------------------------------------- totals


@dataclass
class Totals:
    """One profile's figures over the archive (accumulated as results stream in)."""

    sessions: int = 0
    unreadable: int = 0
    compacting: int = 0
    compactions: int = 0
    before: float = 0
    after: float = 0
    budgets: float = 0
    budget_count: int = 0
    overflowing: int = 0
    overflow_names: list[str] = field(default_factory=list)
    unreadable_names: list[dict[str, str]] = field(default_factory=list)  # the first 20, with why

    def add(self, r: SessionReplay) -> None:
        self.sessions += 1
        if r.error is not None:
            self.unreadable += 1
            if len(self.unreadable_names) < 20:
                self.unreadable_names.append({"name": r.name, "error": r.error})
            return
        self.compacting += r.compactions > 0
        self.compactions += r.compactions
        self.before += sum(r.before)
        self.after += sum(r.after)
        self.budgets += sum(r.budgets)
        self.budget_count += len(r.budgets)
        if r.overflow:
            self.overflowing += 1
            if len(self.overflow_names) < 20:
                self.overflow_names.append(r.name)

    def figures(self) -> dict[str, float | int | None]:
        per = (lambda total: total / self.compactions) if self.compactions else (lambda total: None)
        return {
            "sessions": self.sessions, "unreadable": self.unreadable, "sessionsCompacting": self.compacting,
            "compactions": self.compactions,
            "compactionsPerSession": self.compactions / self.sessions if self.sessions else 0,
            "meanTokensBefore": per(self.before), "meanTokensAfter": per(self.after),
            "meanSummaryBudget": self.budgets / self.budget_count if self.budget_count else None,
            "sessionsOverflowing": self.overflowing,
        }


ROWS = (
    ("sessions", "sessions"), ("sessionsCompacting", "sessions that compact"), ("compactions", "compactions"),
    ("compactionsPerSession", "compactions per session"), ("meanTokensBefore", "tokens before (mean)"),
    ("meanTokensAfter", "tokens after (mean)"), ("meanSummaryBudget", "summary budget (mean)"),
    ("sessionsOverflowing", "sessions that overflow"), ("unreadable", "unreadable files"),
)


def _cell(value) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if isinstance(value, float) and not value.is_integer() else f"{value:.0f}"


def comparison_table(totals: dict[str, Totals]) -> str:
    """Rows of figures, one column per profile, and the difference when there are two."""
    labels = list(totals)
    figures = {label: t.figures() for label, t in totals.items()}
    head = ["", *labels] + (["change"] if len(labels) == 2 else [])
    body = []
    for key, title in ROWS:
        cells = [_cell(figures[label][key]) for label in labels]
        if len(labels) == 2:
            a, b = figures[labels[0]][key], figures[labels[1]][key]
            cells.append("-" if a is None or b is None else (("+" if b - a >= 0 else "") + _cell(float(b - a))))
        body.append([title, *cells])
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
                     for row in [head, *body])
