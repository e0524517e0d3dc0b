"""The locked append log under a session: one JSONL file, read to its end and appended to.

* :class:`AppendLog` remembers where reading stopped (line count, byte offset, an
  unterminated last line, the problems of bad lines) and which file it is (device and
  inode), so a replaced or shrunk file is refused rather than written.
* :meth:`AppendLog.locked` opens the file for appending and holds an exclusive ``flock``
  while the caller works: :meth:`LockedLog.catch_up` reads what other writers appended
  since (as entries), :meth:`LockedLog.write_lines` appends lines with one ``write``
  (looping only on short writes), preceded by ``\\n`` when the last line is torn, then
  ``fsync``. Nothing already in the file is ever rewritten.
* :func:`write_new` writes a whole new file: created exclusively, or written beside the
  target and renamed over it; the file and its directory are fsynced.

What the lines mean (the tree, the leaf, typed entries) is :mod:`pipeline.session.store`'s.
"""

from __future__ import annotations

import fcntl
import os
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from pipeline import files
from pipeline.errors import Location, Problem, SessionError
from pipeline.session.entries import Entry, uuid7
from pipeline.session.reader import Scanner, build_entries


class AppendLog:
    """One session file as lines: what has been read of it, and appending under the lock."""

    def __init__(self, path: Path, scanner: Scanner | None = None) -> None:
        self.path = Path(path)
        self.scanner = scanner if scanner is not None else Scanner(str(self.path))
        self._identity = _identity(self.path) if scanner is not None else None

    @property
    def problems(self) -> list[Problem]:
        """The bad lines found so far (as read and caught up)."""
        return self.scanner.problems

    @property
    def line_count(self) -> int:
        """How many lines the file has (as read and appended here; a last line without newline counts)."""
        return self.scanner.line

    @property
    def torn_line(self) -> int | None:
        """The line number of a torn last line, if the file has one."""
        torn = self.scanner.torn
        return torn.location.line if torn is not None and torn in self.scanner.problems else None

    @contextmanager
    def locked(self) -> Iterator["LockedLog"]:
        """The file opened for appending under an exclusive lock, released on leaving."""
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND)
        except OSError as err:
            raise SessionError(Problem(f"cannot open for appending: {err.strerror}", Location(str(self.path)), code="session.unwritable")) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield LockedLog(self, fd)
        finally:
            os.close(fd)  # closing releases the lock


class LockedLog:
    """An :class:`AppendLog` while its lock is held (see :meth:`AppendLog.locked`)."""

    def __init__(self, log: AppendLog, fd: int) -> None:
        self._log, self._fd = log, fd

    def catch_up(self) -> list[Entry]:
        """The entries other writers appended since this log last looked at the file."""
        log, fd = self._log, self._fd
        stat = os.fstat(fd)
        if log._identity is not None and (stat.st_dev, stat.st_ino) != log._identity:
            raise SessionError(Problem("the file was replaced since it was opened", Location(str(log.path)), code="session.replaced"))
        if stat.st_size < log.scanner.offset:
            raise SessionError(Problem("the file shrank since it was opened (it is not append-only)",
                                        Location(str(log.path)), code="session.shrank"))
        return self._read_more(stat.st_size) if stat.st_size > log.scanner.offset else []

    def _read_more(self, size: int) -> list[Entry]:
        scanner = self._log.scanner
        start = scanner.tail_start if scanner.tail_start is not None else scanner.offset
        if scanner.tail_start is not None:  # the unterminated last line grew: read it again
            scanner.line -= 1
            if scanner.torn is not None and scanner.torn in scanner.problems:
                scanner.problems.remove(scanner.torn)
            scanner.torn = None
        scanner.offset = start
        chunk = os.pread(self._fd, size - start, start)
        objects = []
        for line, obj in scanner.scan(_split_lines(chunk)):
            if obj.get("type") == "session":
                scanner.report("a second session header (ignored, as pi ignores it)", "session.extra-header", "warning")
            else:
                objects.append((line, obj))
        return build_entries(objects, str(self._log.path), scanner.problems)

    def write_line(self, text: str) -> int:
        """Append ``text`` and a newline (after a ``\\n`` that ends a torn last line), fsync;
        return the new line's number."""
        return self.write_lines([text])

    def write_lines(self, texts: list[str]) -> int:
        """Append each of ``texts`` with its newline in one ``write`` and one ``fsync``, as
        :meth:`write_line` does one; return the number of the first new line."""
        scanner, fd = self._log.scanner, self._fd
        prefix = b"" if _ends_with_newline(fd) else b"\n"
        found = scanner.tail_problems(self._tail()) if prefix else []  # before the file changes
        data = prefix + "".join(text + "\n" for text in texts).encode("utf-8")
        _write_all(fd, data)
        os.fsync(fd)
        if prefix:
            scanner.end_tail(found)  # the last line got its newline: no longer torn
        first = scanner.line + 1
        scanner.line += len(texts)
        scanner.offset += len(data)
        return first

    def _tail(self) -> bytes | None:
        """The bytes of the unterminated last line (read before the append ends it)."""
        scanner = self._log.scanner
        start = scanner.tail_start
        return None if start is None else os.pread(self._fd, scanner.offset - start, start)


def write_new(path: Path, lines: list[str], *, overwrite: bool = False, source: Path | None = None) -> None:
    """Write ``lines`` (each ended by ``\\n``) as a new file at ``path``, which must not exist
    unless ``overwrite``: then the file is written beside it and renamed over it, so
    ``path`` holds either the old file or the complete new one. ``source``, when given, is
    a file the new one must not replace."""
    if source is not None and _same_file(path, source):
        raise SessionError(Problem("the copy cannot replace the file it is copied from", Location(str(path)),
                                    code="session.same-file", hint="choose another destination"))
    data = ("\n".join(lines) + "\n").encode("utf-8")
    if overwrite:
        _refuse_special(path)
        _replace_atomically(path, data)
    else:
        _create_exclusive(path, data)


def _refuse_special(path: Path) -> None:
    """``--force`` replaces a regular file only (or a link to one): a FIFO, a device node,
    a socket or a directory at ``path`` is refused, as is a link to one."""
    try:
        mode = os.lstat(path).st_mode
        if stat.S_ISLNK(mode):
            mode = os.stat(path).st_mode
    except FileNotFoundError:
        return  # nothing there, or a broken link: nothing is lost
    except OSError as err:
        raise SessionError(Problem(f"cannot replace: {err.strerror}", Location(str(path)),
                                    code="session.unwritable")) from None
    if stat.S_ISREG(mode):
        return
    what = ("a directory" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
            else "a device node" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket")
    raise SessionError(Problem(f"will not replace it: it is {what}, not a regular file", Location(str(path)),
                                code="session.unwritable", hint="only a regular file is replaced; choose another destination"))


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
        raise SessionError(Problem("file already exists", Location(str(path)), code="session.exists")) from None
    except OSError as err:
        raise SessionError(Problem(f"cannot create: {err.strerror}", Location(str(path)), code="session.unwritable")) from None
    try:
        _write_all(fd, data)
        os.fsync(fd)
    except OSError as err:  # a disk full or an I/O error: leave no half-written file behind
        os.close(fd)
        path.unlink(missing_ok=True)
        raise SessionError(Problem(f"cannot write: {err.strerror}", Location(str(path)), code="session.unwritable")) from None
    os.close(fd)
    files.fsync_dir(path.parent)


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
        raise SessionError(Problem(f"cannot replace: {err.strerror}", Location(str(path)), code="session.unwritable")) from None
    files.fsync_dir(path.parent)
