"""The append-only session store: one pi-format JSONL file.

* **Reading** is streaming (:mod:`pipeline.session.reader`); damage is reported as
  located problems, never silently dropped; old format versions are migrated in memory
  (the file is not rewritten) and :attr:`SessionFile.migrated_from` says so.
* **Writing** appends one line per entry with one ``write`` (looping only on short
  writes), then ``fsync``; an exclusive ``flock`` on the file is held for the append.
  Under the lock the store first reads what other writers appended since it last
  looked (so id collision checks and the tree stay current), and when the file does
  not end with ``\\n`` (a torn last line) the line is preceded by ``\\n``. Nothing
  already in the file is ever rewritten.
* The **leaf** is the current position: after opening, the last entry in file order
  (pi's rule); it moves to each appended entry and with :meth:`SessionFile.branch`.

Files in an older format version are read-only here: pi gives their entries fresh
random ids when it migrates, so entries appended to them could not point at their
parents. :meth:`SessionFile.save_as` (``pipeline session migrate``) writes a migrated
copy that can be appended to.
"""

from __future__ import annotations

import fcntl
import os
import re
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator, Sequence

from pipeline.errors import Location, PipelineError, Problem
from pipeline.js import js_json, js_trim
from pipeline.session import entries as E
from pipeline.session.ids import iso_timestamp, new_entry_id, uuid7
from pipeline.session.messages import AgentMessage
from pipeline.session.reader import Scanner, build_entries, load
from pipeline.session.tree import SessionTree

_LEAF: Any = object()  # "the current leaf" default for append helpers


class SessionFile:
    """A session file opened for reading and appending. Use :meth:`open` or :meth:`create`."""

    def __init__(self, path: Path, header: E.SessionHeader, entries: Sequence[E.Entry]) -> None:
        self.path = Path(path)
        self.header = header
        self.tree = SessionTree(entries)
        self.leaf_id: str | None = self.tree.last_id
        self.migrated_from: Any = None
        self._scanner = Scanner(str(self.path))
        self._identity: tuple[int, int] | None = None

    # ----------------------------------------------------------------- opening

    @classmethod
    def open(cls, path: str | os.PathLike) -> "SessionFile":
        """Load a session file; raises :class:`PipelineError` when it is unreadable or not a session."""
        loaded = load(Path(path))
        session = cls(Path(path), loaded.header, loaded.entries)
        session.migrated_from = loaded.migrated_from
        session._scanner = loaded.scanner
        session._identity = _identity(Path(path))
        return session

    @classmethod
    def create(
        cls, path: str | os.PathLike, *, cwd: str, session_id: str | None = None,
        parent_session: str | None = None, timestamp: str | None = None,
    ) -> "SessionFile":
        """Create a new session file (it must not exist) holding just its header."""
        header = E.SessionHeader.create(
            id=session_id or uuid7(), timestamp=timestamp or iso_timestamp(), cwd=cwd,
            parent_session=parent_session,
        )
        data = (js_json(header.raw) + "\n").encode("utf-8")
        _create_exclusive(Path(path), data)
        return cls.open(path)

    # ----------------------------------------------------------------- reading

    @property
    def entries(self) -> Sequence[E.Entry]:
        """All entries in file order (read-only view)."""
        return self.tree.entries

    @property
    def problems(self) -> list[Problem]:
        """Everything wrong with the file: bad lines (as read) and tree damage (computed now)."""
        return sorted(
            [*self._scanner.problems, *self.tree.problems(str(self.path))],
            key=lambda p: (p.location.line or 0) if p.location else 0,
        )

    @property
    def line_count(self) -> int:
        """How many lines the file has (as read and appended by this object; a last line without newline counts)."""
        return self._scanner.line

    @property
    def torn_line(self) -> int | None:
        """The line number of a torn last line, if the file has one."""
        torn = self._scanner.torn
        return torn.location.line if torn is not None and torn in self._scanner.problems else None

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
        raise PipelineError(Problem(f"{problem}: {text!r}", Location(str(self.path)), hint=hint, code="session.no-entry"))

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
            raise PipelineError(Problem(f"no entry {entry_id!r}", Location(str(self.path)), code="session.no-entry"))
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
        with self._locked() as fd:
            self._catch_up(fd)
            self._check_links(entry)
            prefix = b"" if _ends_with_newline(fd) else b"\n"
            tail = self._tail(fd) if prefix else None
            data = prefix + (js_json(entry.raw) + "\n").encode("utf-8")
            _write_all(fd, data)
            os.fsync(fd)
            if prefix:
                self._scanner.end_tail(tail)  # the last line got its newline: no longer torn
            stored = replace(entry, line=self._scanner.line + 1)
            self._scanner.line += 1
            self._scanner.offset += len(data)
        self.tree.add(stored)
        self.leaf_id = stored.id
        return stored

    def _tail(self, fd: int) -> bytes | None:
        """The bytes of the unterminated last line (read before the append ends it)."""
        start = self._scanner.tail_start
        return None if start is None else os.pread(fd, self._scanner.offset - start, start)

    def ensure_appendable(self, doing: str = "append to", then: str = "append to that") -> None:
        """Refuse to write to a file migrated in memory from an old format version; ``doing``
        and ``then`` word the message for the caller (``"add entries to"``, ``"compact that"``)."""
        if self.migrated_from is not None:
            raise PipelineError(Problem(
                f"cannot {doing} a version-{self.migrated_from} session file",
                Location(str(self.path)), code="session.read-only",
                hint=f"write a version-3 copy with `pipeline session migrate FILE COPY` and {then}",
            ))

    def _check_links(self, entry: E.Entry) -> None:
        where = Location(str(self.path))
        if entry.id in self.tree:
            raise PipelineError(Problem(f"entry id {entry.id!r} is already taken", where, code="session.duplicate-id"))
        if entry.parent_id is not None and entry.parent_id not in self.tree:
            raise PipelineError(Problem(f"parent {entry.parent_id!r} does not exist", where, code="session.no-entry"))

    @contextmanager
    def _locked(self) -> Iterator[int]:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND)
        except OSError as err:
            raise PipelineError(Problem(f"cannot open for appending: {err.strerror}", Location(str(self.path)))) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield fd
        finally:
            os.close(fd)  # closing releases the lock

    def _catch_up(self, fd: int) -> None:
        """Read what other writers appended since this object last looked at the file."""
        stat = os.fstat(fd)
        if self._identity is not None and (stat.st_dev, stat.st_ino) != self._identity:
            raise PipelineError(Problem("the file was replaced since it was opened", Location(str(self.path))))
        if stat.st_size < self._scanner.offset:
            raise PipelineError(Problem("the file shrank since it was opened (it is not append-only)",
                                        Location(str(self.path)), code="session.shrank"))
        if stat.st_size > self._scanner.offset:
            self._read_more(fd, stat.st_size)

    def _read_more(self, fd: int, size: int) -> None:
        scanner = self._scanner
        start = scanner.tail_start if scanner.tail_start is not None else scanner.offset
        if scanner.tail_start is not None:  # the unterminated last line grew: read it again
            scanner.line -= 1
            if scanner.torn is not None and scanner.torn in scanner.problems:
                scanner.problems.remove(scanner.torn)
            scanner.torn = None
        scanner.offset = start
        chunk = os.pread(fd, size - start, start)
        objects = []
        for line, obj in scanner.scan(_split_lines(chunk)):
            if obj.get("type") == "session":
                scanner.report("a second session header (ignored, as pi ignores it)", "session.extra-header", "warning")
            else:
                objects.append((line, obj))
        for entry in build_entries(objects, str(self.path), scanner.problems):
            self.tree.add(entry)

    # ----------------------------------------------------------------- typed helpers

    def _fields(self, parent_id: Any) -> dict[str, Any]:
        return {
            "id": self.new_id(),
            "parent_id": self.leaf_id if parent_id is _LEAF else parent_id,
            "timestamp": iso_timestamp(),
        }

    def append_message(self, message: AgentMessage | dict, *, parent_id: Any = _LEAF) -> E.MessageEntry:
        """Append a ``message`` entry under the leaf (or ``parent_id``)."""
        return self.append(E.MessageEntry.create(message=message, **self._fields(parent_id)))

    def append_thinking_level_change(self, level: str) -> E.ThinkingLevelChangeEntry:
        """Append a ``thinking_level_change`` entry under the leaf."""
        return self.append(E.ThinkingLevelChangeEntry.create(thinking_level=level, **self._fields(_LEAF)))

    def append_model_change(self, provider: str, model_id: str) -> E.ModelChangeEntry:
        """Append a ``model_change`` entry under the leaf."""
        return self.append(E.ModelChangeEntry.create(provider=provider, model_id=model_id, **self._fields(_LEAF)))

    def append_compaction(self, summary: str, first_kept_entry_id: str, tokens_before: int | float,
                          details: Any = None, usage: Any = None, from_hook: bool | None = None) -> E.CompactionEntry:
        """Append a ``compaction`` entry (keys in pi's order; ``None`` optionals left out)."""
        return self.append(E.CompactionEntry.create(
            summary=summary, first_kept_entry_id=first_kept_entry_id, tokens_before=tokens_before,
            details=details, usage=usage, from_hook=from_hook, **self._fields(_LEAF),
        ))

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

    def append_custom_message(self, custom_type: str, content: Any, display: bool = True,
                              details: Any = None) -> E.CustomMessageEntry:
        """Append a ``custom_message`` entry (an extension message the model sees) under the leaf."""
        return self.append(E.CustomMessageEntry.create(
            custom_type=custom_type, content=content, display=display, details=details, **self._fields(_LEAF),
        ))

    def append_label(self, target_id: str, label: str | None) -> E.LabelEntry:
        """Set (or with ``None``/``""`` clear) the label of an existing entry."""
        if target_id not in self.tree:
            raise PipelineError(Problem(f"no entry {target_id!r} to label", Location(str(self.path))))
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
        if _same_file(target, self.path):
            raise PipelineError(Problem("the copy cannot replace the file it is copied from", Location(str(target)),
                                        code="session.same-file", hint="choose another destination"))
        lines = [js_json(dict(self.header.raw))] + [js_json(e.raw) for e in self.entries]
        data = ("\n".join(lines) + "\n").encode("utf-8")
        if overwrite:
            _replace_atomically(target, data)
        else:
            _create_exclusive(target, data)
        return SessionFile.open(target)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def _split_lines(chunk: bytes) -> Iterator[bytes]:
    """Lines split on ``\\n`` only (each keeps its newline; the last may lack one)."""
    start = 0
    while start < len(chunk):
        end = chunk.find(b"\n", start)
        end = len(chunk) if end < 0 else end + 1
        yield chunk[start:end]
        start = end


def _ends_with_newline(fd: int) -> bool:
    size = os.fstat(fd).st_size
    return size == 0 or os.pread(fd, 1, size - 1) == b"\n"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _create_exclusive(path: Path, data: bytes) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise PipelineError(Problem("file already exists", Location(str(path)), code="session.exists")) from None
    except OSError as err:
        raise PipelineError(Problem(f"cannot create: {err.strerror}", Location(str(path)))) from None
    try:
        _write_all(fd, data)
        os.fsync(fd)
    except OSError as err:  # a disk full or an I/O error: leave no half-written file behind
        os.close(fd)
        path.unlink(missing_ok=True)
        raise PipelineError(Problem(f"cannot write: {err.strerror}", Location(str(path)))) from None
    os.close(fd)
    _fsync_dir(path.parent)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _replace_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to a new file beside ``path`` and rename it over ``path``."""
    temp = path.with_name(f".{path.name}.{uuid7()}.tmp")
    _create_exclusive(temp, data)
    try:
        os.replace(temp, path)
    except OSError as err:
        temp.unlink(missing_ok=True)
        raise PipelineError(Problem(f"cannot replace: {err.strerror}", Location(str(path)))) from None
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
