"""Output helpers shared by the sub-commands (not a command itself: the name starts with ``_``)."""

from __future__ import annotations

import codecs
import sys


def tolerant_output() -> None:
    """Never fail on printing: characters the streams cannot encode (lone surrogates from
    JSON escapes, file names or cut descriptions) are written as backslash escapes, except
    the bytes the OS could not decode in arguments and file names (``surrogateescape``,
    U+DC80..U+DCFF), which are written back as the bytes they stand for."""
    codecs.register_error(_FAITHFUL, _faithful)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors=_FAITHFUL)
        except (AttributeError, ValueError, LookupError):
            pass


_FAITHFUL = "pipeline-faithful"


def _faithful(err: UnicodeError) -> tuple[str | bytes, int]:
    """Encoding error handler: ``surrogateescape`` where it applies, else ``backslashreplace``."""
    if not isinstance(err, UnicodeEncodeError):
        raise err
    chunk = err.object[err.start : err.end]
    if all("\udc80" <= ch <= "\udcff" for ch in chunk):
        return bytes(ord(ch) - 0xDC00 for ch in chunk), err.end
    return codecs.backslashreplace_errors(err)


def printable(text: str) -> str:
    """One-line views (tables, trees): control characters shown as ``\\xNN`` escapes, so
    odd file content cannot move the cursor or recolour the terminal."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch == " " else ascii(ch)[1:-1] for ch in text)


def print_notices(problems, *, skip_codes: frozenset[str] = frozenset()) -> None:
    """Problems found in a file a command still used, on stderr, each labelled at least
    ``warning:`` (the command went on; ``session check`` is where damage fails); printed
    by the one formatter (:mod:`pipeline.cli._report`)."""
    from pipeline.cli._report import report_notices

    report_notices(problems, skip_codes=skip_codes)
