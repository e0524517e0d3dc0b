"""Writing command output: exact UTF-8 bytes to standard output or to a file."""

from __future__ import annotations

import sys
from typing import Optional

from pipeline.errors import Location, PipelineError, Problem


def write_output(text: str, output: Optional[str] = None) -> None:
    """Write ``text`` as UTF-8 (whatever the locale) to stdout, or to the file ``output``."""
    data = text.encode("utf-8", "surrogatepass")
    if output is None:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    try:
        with open(output, "wb") as handle:
            handle.write(data)
    except OSError as err:
        raise PipelineError(Problem(f"cannot write output: {err.strerror or err}", Location(output))) from None
