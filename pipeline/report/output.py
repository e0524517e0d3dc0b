"""Writing command output: exact UTF-8 bytes to standard output or to a file."""

from __future__ import annotations

import sys
from typing import Optional

from pipeline.errors import Location, PipelineError, Problem


def _write_all(stream, data: bytes) -> None:
    """Write every byte: a buffered write that stops short (the reader of a pipe went away
    after taking part of it) is repeated, so the failure is raised instead of lost."""
    view = memoryview(data)
    while view:
        written = stream.write(view)
        if written is None or written <= 0:
            raise BrokenPipeError(32, "output stopped accepting data")
        view = view[written:]


def write_output(text: str, output: Optional[str] = None) -> None:
    """Write ``text`` as UTF-8 (whatever the locale) to stdout, or to the file ``output``."""
    data = text.encode("utf-8", "surrogatepass")
    if output is None:
        sys.stdout.flush()
        _write_all(sys.stdout.buffer, data)
        sys.stdout.buffer.flush()
        return
    try:
        with open(output, "wb") as handle:
            handle.write(data)
    except OSError as err:
        raise PipelineError(Problem(f"cannot write output: {err.strerror or err}", Location(output))) from None
