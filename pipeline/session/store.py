"""The session: one pi-format JSONL file as a tree with a leaf, and typed appends.

* **Reading** is streaming (:mod:`pipeline.session.reader`); damage is reported as
  located problems, never silently dropped; old format versions are migrated in memory
  (the file is not rewritten) and :attr:`SessionFile.migrated_from` says so.
* **Writing** goes through the locked append log (:mod:`pipeline.session.log`): under
  its lock the session first takes in what other writers appended since it last looked
  (so id collision checks and the tree stay current), checks the new entry's links, and
  the log appends its line and fsyncs. Nothing already in the file is ever rewritten.
* The **leaf** is the current position: after opening, the last entry in file order
  (pi's rule); it moves to each appended entry and with :meth:`SessionFile.branch`.

Files in an older format version are read-only here: pi gives their entries fresh
random ids when it migrates, so entries appended to them could not point at their
parents. :meth:`SessionFile.save_as` (``pipeline session migrate``) writes a migrated
copy that can be appended to.
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from pipeline.errors import Location, Problem, SessionError
from pipeline.js import iso_timestamp, js_json, js_object, js_trim
from pipeline.session import entries as E
from pipeline.session.entries import new_entry_id, uuid7
from pipeline.session.log import AppendLog, write_new
from pipeline.session.messages import AgentMessage
from pipeline.session.reader import load
from pipeline.session.tree import SessionTree

_LEAF: Any = object()  # "the current leaf" default for append helpers


class _Taken:
    """The ids of a tree and of the entries about to join it (where a fresh id must not be)."""

    def __init__(self, tree: SessionTree, fresh: set[str]) -> None:
        self.tree, self.fresh = tree, fresh

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self.fresh or entry_id in self.tree


class SessionFile:
    """A session file opened for reading and appending. Use :meth:`open` or :meth:`create`."""

    def __init__(self, path: Path, header: E.SessionHeader, entries: Sequence[E.Entry], *,
                 clock: Callable[[], str] = iso_timestamp) -> None:
        self.path = Path(path)
        self.header = header
        self.tree = SessionTree(entries)
        self.leaf_id: str | None = self.tree.last_id
        self.migrated_from: Any = None
        self._log = AppendLog(self.path)
        self._clock: Callable[[], str] = clock  # appended entries' ``timestamp`` (pi's ``new Date().toISOString()``)
        self._held: Any = None  # the LockedLog while `exclusive()` holds the lock

    # ----------------------------------------------------------------- opening

    @classmethod
    def open(cls, path: str | os.PathLike, *, clock: Callable[[], str] = iso_timestamp) -> "SessionFile":
        """Load a session file; raises :class:`PipelineError` when it is unreadable or not a session.
        ``clock`` stamps the entries appended (an ISO time; default: now)."""
        loaded = load(Path(path))
        session = cls(Path(path), loaded.header, loaded.entries, clock=clock)
        session.migrated_from = loaded.migrated_from
        session._log = AppendLog(Path(path), loaded.scanner)
        return session

    @classmethod
    def create(
        cls, path: str | os.PathLike, *, cwd: str, session_id: str | None = None,
        parent_session: str | None = None, timestamp: str | None = None, clock: Callable[[], str] = iso_timestamp,
    ) -> "SessionFile":
        """Create a new session file (it must not exist) holding just its header; ``clock`` as for :meth:`open`."""
        header = E.SessionHeader.create(
            id=session_id or uuid7(), timestamp=timestamp or iso_timestamp(), cwd=cwd,
            parent_session=parent_session,
        )
        write_new(Path(path), [js_json(header.raw)])
        return cls.open(path, clock=clock)

    # ----------------------------------------------------------------- reading

    @property
    def entries(self) -> Sequence[E.Entry]:
        """All entries in file order (read-only view)."""
        return self.tree.entries

    @property
    def problems(self) -> list[Problem]:
        """Everything wrong with the file: bad lines (as read) and tree damage (computed now)."""
        return sorted(
            [*self._log.problems, *self.tree.problems(str(self.path))],
            key=lambda p: (p.location.line or 0) if p.location else 0,
        )

    @property
    def line_count(self) -> int:
        """How many lines the file has (as read and appended by this object; a last line without newline counts)."""
        return self._log.line_count

    @property
    def torn_line(self) -> int | None:
        """The line number of a torn last line, if the file has one."""
        return self._log.torn_line

    @property
    def name(self) -> str | None:
        return self.tree.name

    def get(self, entry_id: str) -> E.Entry | None:
        """The entry with this id, or None."""
        return self.tree.get(entry_id)

    def resolve_id(self, text: str) -> str:
        """An entry id from user input: the exact id or a unique prefix of one."""
        if text in self.tree:
            return text
        matches = [e.id for e in self.entries if e.id.startswith(text)] if text else []
        unique = sorted(set(matches))
        if len(unique) == 1:
            return unique[0]
        hint = f"matches {', '.join(unique[:5])}" if unique else "see `pipeline session tree` for the ids"
        problem = "ambiguous entry id" if unique else "no such entry"
        raise SessionError(Problem(f"{problem}: {text!r}", Location(str(self.path)), hint=hint, code="session.no-entry"))

    def path_to(self, entry_id: str | None = _LEAF) -> list[E.Entry]:
        """Entries from the root to ``entry_id`` (default: the current leaf)."""
        return self.tree.path_to(self.leaf_id if entry_id is _LEAF else entry_id)

    def children(self, entry_id: str | None) -> list[E.Entry]:
        """Direct children of an entry in file order (``None``: the roots)."""
        return self.tree.children(entry_id)

    def labels(self) -> dict[str, str]:
        """Current labels by target id."""
        return self.tree.labels()

    # ----------------------------------------------------------------- leaf

    def branch(self, entry_id: str) -> None:
        """Move the leaf to an existing entry; the next append becomes its child."""
        if entry_id not in self.tree:
            raise SessionError(Problem(f"no entry {entry_id!r}", Location(str(self.path)), code="session.no-entry"))
        self.leaf_id = entry_id

    def reset_leaf(self) -> None:
        """Move the leaf before the first entry; the next append becomes a new root."""
        self.leaf_id = None

    # ----------------------------------------------------------------- appending

    def new_id(self) -> str:
        """A fresh entry id (8 hex chars, redrawn while taken)."""
        return new_entry_id(self.tree)

    def append(self, entry: E.Entry) -> E.Entry:
        """Append one complete entry (its id, parent and timestamp already set) and make it the leaf.

        Returns the stored entry (with its line number). Raises :class:`PipelineError` if
        the id is taken, the parent does not exist or the file cannot take appends.
        """
        self.ensure_appendable()
        if self._held is not None:
            return self._append_locked(self._held, entry)
        with self._log.locked() as log:
            return self._append_locked(log, entry)

    def _append_locked(self, log: Any, entry: E.Entry) -> E.Entry:
        for appended in log.catch_up():
            self.tree.add(appended)
        self._check_links(entry)
        stored = replace(entry, line=log.write_line(js_json(entry.raw)))
        self.tree.add(stored)
        self.leaf_id = stored.id
        return stored

    @contextmanager
    def exclusive(self) -> Iterator[list[E.Entry]]:
        """Hold the file's lock across a decision and the append that follows from it.

        Yields the entries other writers appended since this session last looked (they
        are added to the tree; when there are any, the leaf moves to the newest, as
        opening the file again would put it). Appends inside the block use the held lock,
        so no other writer of this library can slip an entry in between: a compaction
        re-plans here and appends only what it planned on the current file.
        """
        if self._held is not None:
            raise RuntimeError("the session's lock is already held")
        self.ensure_appendable()
        with self._log.locked() as log:
            appended = log.catch_up()
            for entry in appended:
                self.tree.add(entry)
            if appended:
                self.leaf_id = appended[-1].id
            self._held = log
            try:
                yield appended
            finally:
                self._held = None

    def ensure_appendable(self, doing: str = "append to", then: str = "append to that") -> None:
        """Refuse to write to a file migrated in memory from an old format version; ``doing``
        and ``then`` word the message for the caller (``"add entries to"``, ``"compact that"``)."""
        if self.migrated_from is not None:
            raise SessionError(Problem(
                f"cannot {doing} a version-{self.migrated_from} session file",
                Location(str(self.path)), code="session.read-only",
                hint=f"write a version-3 copy with `pipeline session migrate FILE COPY` and {then}",
            ))

    def _check_links(self, entry: E.Entry) -> None:
        where = Location(str(self.path))
        if entry.id in self.tree:
            raise SessionError(Problem(f"entry id {entry.id!r} is already taken", where, code="session.duplicate-id"))
        if entry.parent_id is not None and entry.parent_id not in self.tree:
            raise SessionError(Problem(f"parent {entry.parent_id!r} does not exist", where, code="session.no-entry"))

    @contextmanager
    def stamping(self, clock: Callable[[], str]) -> Iterator[None]:
        """Entries appended inside the block are stamped by ``clock`` (a host's own clock, which
        :class:`~pipeline.runtime.driver.SessionDriver` passes for its writes); the session's
        clock again after it."""
        kept, self._clock = self._clock, clock
        try:
            yield
        finally:
            self._clock = kept

    def now(self) -> str:
        """The timestamp of the next appended entry."""
        return self._clock()

    # ----------------------------------------------------------------- typed helpers

    def _fields(self, parent_id: Any) -> dict[str, Any]:
        return {
            "id": self.new_id(),
            "parent_id": self.leaf_id if parent_id is _LEAF else parent_id,
            "timestamp": self.now(),
        }

    def append_message(self, message: AgentMessage | dict, *, parent_id: Any = _LEAF) -> E.MessageEntry:
        """Append a ``message`` entry under the leaf (or ``parent_id``)."""
        return self.append(E.MessageEntry.create(message=message, **self._fields(parent_id)))

    def append_messages(self, messages: Iterable[AgentMessage | dict]) -> list[E.MessageEntry]:
        """Append ``messages`` as a chain of ``message`` entries under the leaf, written with
        one ``write`` and one ``fsync`` (what many :meth:`append_message` calls give, faster)."""
        self.ensure_appendable()
        if self._held is not None:
            return self._append_chain(self._held, messages)
        with self._log.locked() as log:
            return self._append_chain(log, messages)

    def _append_chain(self, log: Any, messages: Iterable[AgentMessage | dict]) -> list[E.MessageEntry]:
        for appended in log.catch_up():
            self.tree.add(appended)
        chain: list[E.MessageEntry] = []
        fresh: set[str] = set()
        taken = _Taken(self.tree, fresh)
        for message in messages:
            parent = chain[-1].id if chain else self.leaf_id
            entry = E.MessageEntry.create(message=message, id=new_entry_id(taken), parent_id=parent,
                                          timestamp=self.now())
            if not chain:
                self._check_links(entry)
            fresh.add(entry.id)
            chain.append(entry)
        if not chain:
            return []
        first = log.write_lines([js_json(entry.raw) for entry in chain])
        stored = [replace(entry, line=first + i) for i, entry in enumerate(chain)]
        for entry in stored:
            self.tree.add(entry)
        self.leaf_id = stored[-1].id
        return stored

    def append_thinking_level_change(self, level: str) -> E.ThinkingLevelChangeEntry:
        """Append a ``thinking_level_change`` entry under the leaf."""
        return self.append(E.ThinkingLevelChangeEntry.create(thinking_level=level, **self._fields(_LEAF)))

    def append_model_change(self, provider: str, model_id: str) -> E.ModelChangeEntry:
        """Append a ``model_change`` entry under the leaf."""
        return self.append(E.ModelChangeEntry.create(provider=provider, model_id=model_id, **self._fields(_LEAF)))

    def append_compaction(self, summary: str, first_kept_entry_id: str, tokens_before: int | float,
                          details: Any = None, usage: Any = None, from_hook: bool | None = None,
                          system_snapshot: bool = False) -> E.CompactionEntry:
        """Append a ``compaction`` entry (keys in pi's order; ``None`` optionals left out).

        ``system_snapshot`` (pi 1.x): the entry carries ``systemMessage``, the system prompt and
        tools the branch's projection replays to, stamped with the entry's time, when there is one."""
        fields = self._fields(_LEAF)
        snapshot = None
        if system_snapshot:
            from pipeline.session.snapshot import system_snapshot as snapshot_of

            snapshot = snapshot_of(self.path_to(), fields["timestamp"])
        return self.append(E.CompactionEntry.create(
            summary=summary, first_kept_entry_id=first_kept_entry_id, tokens_before=tokens_before,
            details=details, usage=usage, from_hook=from_hook, system_message=snapshot, **fields,
        ))

    def append_context_edit(self, target_id: str, replacement: Any = None) -> E.ContextEditEntry:
        """Append pi 1.x's ``context_edit`` entry (``appendContextEdit``): from now on
        ``target_id`` shows the model ``replacement`` (``None``: nothing). As pi, the target
        must be on the current branch and a user, assistant, tool-result or custom message;
        the replacement ``None`` or an object whose ``content`` is a string or a list, and a
        string becomes one text block (``{"content": [...]}`` alone) for an assistant or
        tool-result target."""
        target = next((e for e in self.path_to() if e.id == target_id), None)
        if target is None:
            raise SessionError(Problem(f"no entry {target_id!r} on the current branch to edit",
                                       Location(str(self.path)), code="session.no-entry"))
        role = _editable_role(target)
        content = replacement.get("content", _NO_CONTENT) if isinstance(replacement, dict) else _NO_CONTENT
        problem = (f"entry {target_id!r} shows the model no message content to edit" if role is None else
                   "a context edit's replacement is null or an object whose content is a string or a list"
                   if replacement is not None and not isinstance(content, (str, list)) else None)
        if problem:
            raise SessionError(Problem(problem, Location(str(self.path)), code="session.bad-context-edit",
                                       hint="edit a user, assistant, tool-result or custom message"))
        if replacement is not None and role in ("assistant", "toolResult") and isinstance(content, str):
            replacement = {"content": [{"type": "text", "text": content}]}
        fields = self._fields(_LEAF)
        return self.append(E.ContextEditEntry.create(target_id=target_id, replacement=replacement, **fields))

    def append_branch_summary(self, from_id: str | None, summary: str, details: Any = None,
                              usage: Any = None, from_hook: bool | None = None) -> E.BranchSummaryEntry:
        """pi's ``branchWithSummary``: move the leaf to ``from_id`` (None = before the root) and
        append a ``branch_summary`` under it (``fromId`` is ``"root"`` for None)."""
        if from_id is not None:
            self.branch(from_id)
        fields = self._fields(from_id)
        return self.append(E.BranchSummaryEntry.create(
            from_id=from_id or "root", summary=summary, details=details, usage=usage, from_hook=from_hook, **fields,
        ))

    def append_custom(self, custom_type: str, data: Any = None) -> E.CustomEntry:
        """Append a ``custom`` entry (extension state, never in the context) under the leaf."""
        return self.append(E.CustomEntry.create(custom_type=custom_type, data=data, **self._fields(_LEAF)))

    def append_custom_message(self, custom_type: str, content: Any, display: bool | None = True,
                              details: Any = None) -> E.CustomMessageEntry:
        """Append a ``custom_message`` entry (an extension message the model sees) under the leaf."""
        return self.append(E.CustomMessageEntry.create(
            custom_type=custom_type, content=content, display=display, details=details, **self._fields(_LEAF),
        ))

    def append_label(self, target_id: str, label: str | None) -> E.LabelEntry:
        """Set (or with ``None``/``""`` clear) the label of an existing entry."""
        if target_id not in self.tree:
            raise SessionError(Problem(f"no entry {target_id!r} to label", Location(str(self.path)), code="session.no-entry"))
        return self.append(E.LabelEntry.create(target_id=target_id, label=label, **self._fields(_LEAF)))

    def append_session_info(self, name: str) -> E.SessionInfoEntry:
        """Name the session (CR/LF runs become one space, then trimmed, as pi does)."""
        clean = js_trim(re.sub(r"[\r\n]+", " ", name))
        return self.append(E.SessionInfoEntry.create(name=clean, **self._fields(_LEAF)))

    # ----------------------------------------------------------------- copies

    def save_as(self, path: str | os.PathLike, *, overwrite: bool = False) -> "SessionFile":
        """Write header and entries (as held in memory, so migrated) to a new file; open it.

        The file must not exist, unless ``overwrite``: then the copy is written to a
        temporary file beside it and renamed over it, so ``path`` holds either the old
        file or the complete copy. This session's own file is never written.
        """
        target = Path(path)
        lines = [js_json(dict(self.header.raw))] + [js_json(e.raw) for e in self.entries]
        write_new(target, lines, overwrite=overwrite, source=self.path)
        return SessionFile.open(target)


_NO_CONTENT = object()


def _editable_role(entry: E.Entry) -> str | None:
    """The role pi's ``appendContextEdit`` edits in ``entry`` (``custom`` for a custom
    message entry), ``None`` when it refuses the entry."""
    if isinstance(entry, E.CustomMessageEntry):
        return "custom"
    if isinstance(entry, E.MessageEntry) and entry.role in ("user", "assistant", "toolResult"):
        return entry.role
    return None
