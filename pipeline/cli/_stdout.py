"""Standard output that says when it could not be written (not a command: the name starts with ``_``).

A closed pipe (``pipeline render | head -c1``) or a full disk (``> /dev/full``) makes a
write or the final flush fail. :func:`guarded_stdout` turns such a failure into
:class:`OutputError` (only failures of standard output: a session write that fails is
the session's own error), so the CLI prints one line and exits with
:data:`pipeline.errors.EXIT_OUTPUT` (4), and a command that already changed a file can say so
(``compact`` appended its entry before printing the summary).
"""

from __future__ import annotations

import errno
import os
import sys
from contextlib import contextmanager
from typing import Any, Iterator

from pipeline.errors import EXIT_OUTPUT  # noqa: F401 - the status this module's failures end in


class OutputError(Exception):
    """Writing standard output failed; ``reason`` says why in a few words."""

    def __init__(self, err: OSError) -> None:
        super().__init__(str(err))
        self.errno = err.errno

    @property
    def reason(self) -> str:
        if self.errno == errno.EPIPE:
            return "the reading end of the pipe was closed"
        if self.errno == errno.ENOSPC:
            return "no space left on the device"
        return os.strerror(self.errno) if self.errno else "write failed"


class _Guarded:
    """A stream whose ``write`` and ``flush`` raise :class:`OutputError` instead of ``OSError``."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, data):
        try:
            return self._stream.write(data)
        except OSError as err:
            raise OutputError(err) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as err:
            raise OutputError(err) from None

    @property
    def buffer(self) -> "_Guarded":
        return _Guarded(self._stream.buffer)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextmanager
def guarded_stdout() -> Iterator[None]:
    """Standard output guarded for the block, flushed at its end (so a full disk is found
    before the exit code is chosen); after a failure, what is still buffered is dropped so
    the interpreter's own flush at exit cannot print a second error."""
    original = sys.stdout
    sys.stdout = _Guarded(original)
    try:
        yield
        sys.stdout.flush()
    except OutputError:
        _drop_buffered(original)
        raise
    finally:
        sys.stdout = original


def drop_pending_output() -> None:
    """After an :class:`OutputError` a command handled itself: what is still buffered for
    standard output goes nowhere, so no later flush fails again."""
    stream = sys.stdout
    _drop_buffered(stream._stream if isinstance(stream, _Guarded) else stream)


def _drop_buffered(stream: Any) -> None:
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (a test's capture): nothing is flushed at exit
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    except OSError:
        pass
