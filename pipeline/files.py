"""The one bounded reader: every file the tool reads goes through here.

A file is opened without blocking (``O_NONBLOCK``, so a FIFO cannot hang the open),
checked to be a regular file (a FIFO, a device such as ``/dev/zero``, a socket or a
directory is refused), read up to its kind's limit (:data:`pipeline.limits.FILE_LIMITS`;
a sparse 1 GB file is refused from its size, before a byte is read) and decoded as
UTF-8. Every way this can fail is one located :class:`~pipeline.errors.Problem`: a path
the system cannot take (too long, a lone surrogate), a missing or unreadable file, a
file too large, undecodable bytes (with line, column and byte offset). The error raised
says what went wrong in ``reason`` (:data:`REASONS`) and, for a file too large, its
``size``, so a caller that words the refusal itself (the runtime's tools) can tell them
apart. Directory walks use :class:`VisitedDirs` to step over symbolic-link loops.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from typing import BinaryIO

from pipeline.errors import Location, PipelineError, Problem, ProfileError, SessionError, TemplateError
from pipeline.limits import FILE_LIMITS

#: The domain of each kind of file (its codes and error class); other kinds are render
#: inputs (context files, prompt files, skills, ignore files).
_DOMAIN = {"profile": "profile", "scenario": "profile", "settings file": "profile", "pre-commit config": "profile",
           "template": "template", "stdin": "template", "session file": "session",
           "session file in an archive": "session"}
#: The registered code of each (domain, what went wrong).
_CODES = {
    ("profile", "unreadable"): "profile.unreadable",
    ("profile", "file-too-large"): "profile.file-too-large",
    ("profile", "not-utf8"): "profile.not-utf8",
    ("template", "unreadable"): "template.unreadable",
    ("template", "file-too-large"): "template.file-too-large",
    ("template", "not-utf8"): "template.not-utf8",
    ("session", "unreadable"): "session.unreadable",
    ("session", "file-too-large"): "session.file-too-large",
}


def code(kind: str, what: str) -> str:
    """The problem code for ``what`` (``unreadable``, ``file-too-large``, ``not-utf8``) of a kind."""
    domain = _DOMAIN.get(kind)
    if domain is None:
        return "profile.unreadable-input"  # render inputs: context files, prompts, skills
    return _CODES.get((domain, what), f"{domain}.unreadable" if domain != "session" else "session.unreadable")


def limit(kind: str) -> int:
    """The largest file of ``kind`` accepted, in bytes."""
    return FILE_LIMITS[kind]


#: The error class of each domain (exit codes are the same; callers may tell them apart).
_CLASSES = {"profile": ProfileError, "template": TemplateError, "session": SessionError}


#: What went wrong, as the ``reason`` of an error raised here.
REASONS = ("unreadable", "not-regular", "file-too-large", "not-utf8")


def _error(message: str, where: Location, kind: str, what: str, hint: str | None = None,
           size: int | None = None) -> PipelineError:
    error = _CLASSES.get(_DOMAIN.get(kind, "profile"), PipelineError)
    # a refused non-regular file has the domain's `unreadable` code
    raised = error(Problem(message, where, hint=hint, code=code(kind, "unreadable" if what == "not-regular" else what)))
    raised.reason, raised.size = what, size
    return raised


def reason(err: PipelineError) -> str | None:
    """What went wrong (one of :data:`REASONS`) when ``err`` was raised here, else None."""
    return getattr(err, "reason", None)


def describe_os_error(err: OSError) -> str:
    """A short reason for an :class:`OSError` (``File name too long``...)."""
    if err.errno == errno.ENAMETOOLONG:
        return "the path is longer than the system allows"
    if err.errno == errno.ELOOP:
        return "too many levels of symbolic links"
    return err.strerror or str(err)


def open_regular(path: str | os.PathLike, kind: str, label: str | None = None, *, follow: bool = True) -> BinaryIO:
    """``path`` opened for reading in binary, once it is known to be a regular file within
    its kind's limit; a located :class:`PipelineError` otherwise. ``follow=False`` refuses
    a symbolic link (``O_NOFOLLOW``) instead of reading what it points to."""
    label = label if label is not None else os.fspath(path)
    nofollow = 0 if follow else getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | nofollow | getattr(os, "O_CLOEXEC", 0))
    except (UnicodeEncodeError, ValueError):
        raise _error(f"cannot read {kind}: the path cannot be used (a lone surrogate or a NUL byte)",
                     Location(label), kind, "unreadable") from None
    except OSError as err:
        raise _error(f"cannot read {kind}: {describe_os_error(err)}", Location(label), kind, "unreadable") from None
    try:
        info = os.fstat(fd)
        _check_regular(info, kind, label)
        if info.st_size > limit(kind):
            raise _too_large(info.st_size, kind, label)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def _check_regular(info: os.stat_result, kind: str, label: str) -> None:
    mode = info.st_mode
    if stat.S_ISREG(mode):
        return
    what = (
        "a directory" if stat.S_ISDIR(mode)
        else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
        else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "a socket" if stat.S_ISSOCK(mode)
        else "not a regular file"
    )
    raise _error(f"cannot read {kind}: it is {what}, not a regular file", Location(label), kind, "not-regular",
                 hint="name a regular file")


def _too_large(size: int, kind: str, label: str) -> PipelineError:
    return _error(f"file too large: {size} bytes (the limit for a {kind} is {limit(kind)} bytes)", Location(label),
                  kind, "file-too-large", hint="see docs/limits.md", size=size)


def read_bytes(path: str | os.PathLike, kind: str, label: str | None = None, *, follow: bool = True) -> bytes:
    """The bytes of a regular file of ``kind``, at most its limit (a file that grew while
    being read is refused too); ``follow`` as :func:`open_regular` takes it."""
    label = label if label is not None else os.fspath(path)
    with open_regular(path, kind, label, follow=follow) as handle:
        try:
            data = handle.read(limit(kind) + 1)
        except OSError as err:
            raise _error(f"cannot read {kind}: {describe_os_error(err)}", Location(label), kind, "unreadable") from None
    if len(data) > limit(kind):
        raise _too_large(len(data), kind, label)
    return data


def read_text(path: str | os.PathLike, kind: str, label: str | None = None, *, lenient: bool = False) -> str:
    """The UTF-8 text of a regular file of ``kind`` (a BOM is kept: callers that drop it do).

    ``lenient`` decodes as pi does for the Markdown it discovers (templates, skills,
    context files): invalid bytes become U+FFFD. Otherwise invalid bytes are a located
    error with line, column and byte offset.
    """
    label = label if label is not None else os.fspath(path)
    data = read_bytes(path, kind, label)
    if lenient:
        return data.decode("utf-8", "replace")
    return decode(data, kind, label)


def decode(data: bytes, kind: str, label: str) -> str:
    """Strict UTF-8; an invalid byte is a located error naming its byte offset."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        where = byte_location(data, err.start, label)
        raise _error(f"not UTF-8 text: invalid byte 0x{data[err.start]:02x} at byte offset {err.start}", where,
                     kind, "not-utf8", hint="save the file as UTF-8") from None


def byte_location(data: bytes, offset: int, label: str) -> Location:
    """``label:line:col`` of byte ``offset`` (columns count characters)."""
    line = data.count(b"\n", 0, offset) + 1
    start = data.rfind(b"\n", 0, offset) + 1
    col = len(data[start:offset].decode("utf-8", errors="replace")) + 1
    return Location(label, line, col)


def read_stream(stream: BinaryIO, kind: str, label: str) -> str:
    """A binary stream (stdin) read up to its kind's limit, strictly decoded; a stream
    longer than the limit is refused after reading one byte past it (no hang on an endless
    producer, no unbounded buffer)."""
    try:
        data = stream.read(limit(kind) + 1)
    except OSError as err:
        raise _error(f"cannot read {kind}: {describe_os_error(err)}", Location(label), kind, "unreadable") from None
    if len(data) > limit(kind):
        raise _error(f"{kind} too large: more than {limit(kind)} bytes", Location(label), kind, "file-too-large",
                     hint="see docs/limits.md")
    return decode(data, kind, label)


def safe_stat(path: str | os.PathLike, *, follow: bool = True) -> os.stat_result | None:
    """``os.stat`` or None when the path does not exist or cannot be used (too long, a
    lone surrogate, a loop of links): discovery asks many paths that may not exist."""
    try:
        return os.stat(path, follow_symlinks=follow)
    except (OSError, ValueError, UnicodeEncodeError):
        return None


def missing(path: str | os.PathLike) -> bool:
    """Whether ``path`` plainly does not exist (a path that cannot be examined for another
    reason, too long for instance, is not "missing": reading it says why)."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except (OSError, ValueError, UnicodeEncodeError):
        return False
    return False


def stat_reason(path: str | os.PathLike) -> str | None:
    """Why ``path`` cannot be examined, when that is not simply its absence (too long, a
    loop of links, a lone surrogate); None otherwise."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as err:
        return f"cannot be read: {describe_os_error(err)}"
    except (ValueError, UnicodeEncodeError):
        return "cannot be read: the path cannot be used (a lone surrogate or a NUL byte)"
    return None


def is_regular(path: str | os.PathLike) -> bool:
    """Whether ``path`` is (a link to) a regular file; never raises."""
    info = safe_stat(path)
    return info is not None and stat.S_ISREG(info.st_mode)


def is_directory(path: str | os.PathLike) -> bool:
    """Whether ``path`` is (a link to) a directory; never raises."""
    info = safe_stat(path)
    return info is not None and stat.S_ISDIR(info.st_mode)


def exists(path: str | os.PathLike) -> bool:
    """Whether ``path`` exists (a broken link does not); never raises."""
    return safe_stat(path) is not None


@dataclass
class VisitedDirs:
    """Directories a walk has entered, by ``(st_dev, st_ino)``: a directory reached again
    (a symbolic link to itself or to an ancestor) is not entered twice."""

    seen: set[tuple[int, int]] = field(default_factory=set)

    def enter(self, path: str | os.PathLike) -> bool:
        """False when the directory ``path`` was reached before; True otherwise (also when
        it cannot be examined: listing it then finds nothing)."""
        info = safe_stat(path)
        if info is None:
            return True
        key = (info.st_dev, info.st_ino)
        if key in self.seen:
            return False
        self.seen.add(key)
        return True


def fsync_dir(folder: str | os.PathLike) -> None:
    """Make a folder's entries (a rename, a new file) durable; best effort where the system
    cannot open or sync a folder."""
    try:
        fd = os.open(os.fspath(folder) or ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
