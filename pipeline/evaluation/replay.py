"""``pipeline replay``: what a profile would do across an archive of sessions, without a model.

Each session's current branch is replayed message by message into a scratch session under
a profile's compaction settings (the model's own, ``compaction.model_overrides``, when the
session names its model). The context grows by each message's estimate; after each
assistant reply the trigger is tested for the window (:func:`~pipeline.compaction.triggers.fires`);
when it fires, the scratch session is compacted by the one compaction driver
(:func:`pipeline.compaction.driver.compact`), as ``pipeline run`` would compact it: the
same cut point, strategy (``summarize``, ``mask_tool_results``, ``hybrid``), split turns,
pins and summary requests. Only the model is missing: :class:`BudgetSummarizer` answers
each summary request with a summary as large as the request allows (the summarized
conversation's size, at most the request's output cap) that holds every heading of the
profile's schema, so the figures are an upper bound on what a model's summary would take.

The replayed messages carry no ``usage`` (what a reply recorded counts the original,
uncompacted context), so every size is pi's per-message estimate.

Counted per session: compactions, tokens before and after each, the summary budgets asked
for, and whether the context ever exceeded the window (**overflow**: a message that
does not fit even after compacting). Sessions are read one at a time (a directory, a
``.tar``/``.tar.gz`` or a ``.zip``; members are streamed, never all in memory) and
replayed in worker processes.
"""

from __future__ import annotations

import os
import tarfile
import tempfile
import zipfile
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, as_completed, wait
from dataclasses import dataclass, field
from multiprocessing.context import BaseContext
from pathlib import Path
from typing import Callable, Iterator, Sequence

from pipeline import files
from pipeline.compaction.driver import compact
from pipeline.compaction.offline import split_request
from pipeline.compaction.summary_schema import heading_line
from pipeline.compaction.tokens import tokens_after_compaction
from pipeline.compaction.triggers import fires
from pipeline.errors import PipelineError
from pipeline.llm.types import Completion, SummaryRequest
from pipeline.model.profile import Profile
from pipeline.model.summary import Summary
from pipeline.session.messages import AgentMessage, AssistantMessage, Usage
from pipeline.session.store import SessionFile


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


class BudgetSummarizer:
    """The replay's summary client: answers with the largest summary the request allows.

    Its text is the heading line of every section of the profile's schema, then the
    start of the summarized conversation (and previous summary) itself, up to the smaller
    of their size and the request's ``max_tokens``: it passes the schema check, and its
    estimate is the most a model's answer could add. ``budgets`` collects the output cap
    of every history request (what ``summary budget`` reports)."""

    provider = "replay"

    def __init__(self, summary: Summary, chars_per_token: int) -> None:
        self.summary, self.chars_per_token = summary, chars_per_token
        self.budgets: list[int] = []

    def build_body(self, request: SummaryRequest) -> dict[str, object]:
        """What the request asks for (nothing is sent anywhere)."""
        return {"provider": self.provider, "kind": request.kind, "max_tokens": request.max_tokens}

    def complete(self, request: SummaryRequest) -> Completion:
        if request.kind == "history":
            self.budgets.append(request.max_tokens)
        conversation, previous = split_request(request.user_text, self.summary)
        heads = "\n".join(heading_line(s, self.summary.schema_format) for s in self._schema(request.kind))
        room = min(len(conversation) + len(previous or ""), request.max_tokens * self.chars_per_token) - len(heads) - 1
        text = heads + ("\n" + (conversation + (previous or ""))[:room] if room > 0 else "")
        return Completion(text=text, usage=Usage(), stop_reason="stop", model=request.model or self.provider,
                          provider=self.provider)

    def _schema(self, kind: str):
        if kind.startswith("turn_prefix"):
            return ()
        if kind.startswith("branch"):
            return self.summary.branch_schema or self.summary.schema_
        return self.summary.schema_


def _without_usage(message: AgentMessage) -> AgentMessage | dict:
    if isinstance(message, AssistantMessage) and "usage" in message.raw:
        return {key: value for key, value in message.raw.items() if key != "usage"}
    return message


def replay_messages(
    name: str, messages: Sequence[AgentMessage], profile: Profile, window: int, model: tuple[str, str] | None,
    *, cwd: str = "/",
) -> SessionReplay:
    """Replay ``messages`` (agent messages, oldest first) under ``profile`` into a scratch
    session compacted by the driver; see the module doc."""
    with tempfile.TemporaryDirectory(prefix="pipeline-replay-", dir=_SCRATCH) as scratch:
        session = SessionFile.create(Path(scratch) / "replay.jsonl", cwd=cwd)
        return _replay(session, name, messages, profile, window, model)


#: Scratch sessions go to memory when the machine has a tmpfs there (each append is fsynced).
_SCRATCH = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def _replay(session: SessionFile, name: str, messages: Sequence[AgentMessage], profile: Profile, window: int,
            model: tuple[str, str] | None) -> SessionReplay:
    provider, model_id = model or (None, None)
    settings = profile.compaction.for_model(provider, model_id)
    client = BudgetSummarizer(profile.summary, settings.chars_per_token)
    out, tokens, pending = SessionReplay(name, len(messages)), 0.0, []
    for message in messages:
        pending.append(message)
        tokens += tokens_after_compaction([message], settings)
        out.peak = max(out.peak, tokens)
        out.overflow = out.overflow or bool(window and tokens > window)
        if isinstance(message, AssistantMessage) and fires(tokens, window, settings):
            session.append_messages([_without_usage(m) for m in pending])  # only when a compaction needs them
            pending = []
            done = compact(session, profile, client, provider=provider, model=model_id, window=window)
            if done.did_anything and done.tokens_after is not None:
                out.compactions += 1
                out.before.append(done.tokens_before if done.tokens_before is not None else tokens)
                out.after.append(done.tokens_after)
                tokens = done.tokens_after
    out.budgets = client.budgets
    return out


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
    return (model.provider, model.id) if model is not None and model.key is not None else None


def replay_one(name: str, data: bytes) -> dict[str, SessionReplay]:
    """Replay one session's bytes under every loaded profile (a worker's job)."""
    from pipeline.session.projection import build_session_context

    with tempfile.NamedTemporaryFile(suffix=".jsonl", dir=_SCRATCH) as tmp:
        tmp.write(data)
        tmp.flush()
        try:
            original = SessionFile.open(tmp.name)
            context = build_session_context(original)
        except PipelineError as err:
            return {label: SessionReplay(name, error=err.problems[0].message) for label in _PROFILES}
    messages, model, cwd = list(context.messages), _session_model(context), original.header.cwd or "/"
    return {label: replay_messages(name, messages, profile, _WINDOW, model, cwd=cwd)
            for label, profile in _PROFILES.items()}


def _context() -> BaseContext:
    """How the workers start: forked (no re-import, the fastest start) from a process that runs
    one thread, as ``pipeline replay`` does; a host that runs other threads (a server, a test
    runner) gets workers from a fork server, since a fork copies another thread's locks held."""
    import multiprocessing
    import threading

    methods = multiprocessing.get_all_start_methods()
    if threading.active_count() == 1 and "fork" in methods:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def replay_archive(
    archive: Path, profiles: dict[str, Profile], window: int, *, workers: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> Iterator[dict[str, SessionReplay]]:
    """Replay every session of ``archive`` under each profile, in parallel; results as they finish."""
    workers = workers or os.cpu_count() or 1
    with ProcessPoolExecutor(workers, mp_context=_context(), initializer=_init, initargs=(profiles, window)) as pool:
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
