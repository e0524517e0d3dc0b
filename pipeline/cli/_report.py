"""The one formatter every command prints problems with (text output).

Each problem is its located line, ``file:line:col: [warning: ]key: message (hint)``
(``str(problem)``), then, when the line and column are known and the file can be read,
the source line with a caret under the column (as jinja and lark show them)::

    team.yaml:6:7: compaction.reserve: unknown key (did you mean `reserve_tokens`?)
        6 |   reserve: 100
          |   ^

and after a list of two or more a closing count: ``2 errors, 1 warning in team.yaml``
(a single problem is its own summary: provider and file errors stay one clear line). JSON and GitHub
output (``validate --format``) use the same problem list with their own shapes.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import unicodedata
from dataclasses import replace
from pathlib import Path
from typing import Iterable, TextIO

from pipeline.errors import PipelineError, Problem

#: Files larger than this are not read again just to show a line.
MAX_SOURCE_BYTES = 1 << 20
#: Characters of a long source line shown around the column.
WINDOW = 100
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
#: A source line that may hold a secret is never shown (a key pasted where its
#: variable's name belongs, a password in a URL): the located line still says where.
_SECRET_LINE = re.compile(r"(?i)api[_-]?key|secret|passw|authorization|bearer|\bsk-|://[^/\s]*@")


class _Sources:
    """Source lines of the files problems point at, each file read once (or never)."""

    def __init__(self) -> None:
        self._lines: dict[str, list[str] | None] = {}
        self._shown: dict[tuple[str, int], str | None] = {}

    def line(self, file: str, number: int) -> str | None:
        if file not in self._lines:
            self._lines[file] = _read_lines(file)
        lines = self._lines[file]
        if lines is None or not 1 <= number <= len(lines):
            return None
        return lines[number - 1]

    def shown_line(self, file: str, number: int) -> str | None:
        """The line, unless it is unknown or may hold a secret (each line checked once)."""
        key = (file, number)
        if key not in self._shown:
            text = self.line(file, number)
            self._shown[key] = None if text is None or _SECRET_LINE.search(text) else text
        return self._shown[key]


def _read_lines(file: str) -> list[str] | None:
    try:
        info = os.stat(file)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SOURCE_BYTES:
            return None
        with open(file, "rb") as handle:
            data = handle.read(MAX_SOURCE_BYTES + 1)
    except (OSError, ValueError):
        return None
    if b"\0" in data:  # a binary file (an executable named as a profile): no line of it is shown
        return None
    return _LINE_BREAK.split(data.decode("utf-8", "replace"))


def _cell(ch: str) -> str:
    """What a source character is shown as: control characters as `?`."""
    if ch == "\t" or ch.isprintable():
        return ch
    return "?"


def _pad(ch: str) -> str:
    """The blank under a shown character, as wide as it is."""
    if ch == "\t":
        return "\t"
    return "  " if unicodedata.east_asian_width(ch) in "WF" else " "


def excerpt(problem: Problem, sources: _Sources) -> list[str]:
    """The source line and a caret under the column, or nothing when either is unknown."""
    loc = problem.location
    if loc is None or not loc.file or loc.line is None or loc.col is None:
        return []
    text = sources.shown_line(loc.file, loc.line)
    if text is None:
        return []
    col = min(max(loc.col - 1, 0), len(text))
    start = max(0, col - WINDOW // 2) if len(text) > WINDOW else 0
    shown = "".join(_cell(ch) for ch in text[start : start + WINDOW])
    lead = "…" if start else ""
    gutter = f"{loc.line:>5} | "
    caret = " " * (len(gutter) - 2) + "| " + " " * len(lead) + "".join(_pad(_cell(ch)) for ch in text[start:col]) + "^"
    return [gutter + lead + shown.rstrip(), caret]


def count_line(problems: Iterable[Problem]) -> str:
    """``2 errors, 1 warning in team.yaml``: where they are only when every problem is there
    (``in 3 files``, ``in 2 places`` when one is a directory); when some are not in a file (a
    flag, the input itself), how many are: ``2 warnings (1 in prompts/)``."""
    problems = list(problems)
    counts = [(sum(p.severity == s for p in problems), name) for s, name in
              (("error", "error"), ("warning", "warning"), ("info", "notice"))]
    parts = [f"{n} {name}{'s' if n != 1 else ''}" for n, name in counts if n]
    located = [p.location.file for p in problems  # a flag (`--reserve`) is not a file
               if p.location and p.location.file and not p.location.file.startswith("-")]
    if not located:
        return ", ".join(parts)
    where = _places(list(dict.fromkeys(located)))
    if len(located) == len(problems):
        return ", ".join(parts) + f" in {where}"
    return ", ".join(parts) + f" ({len(located)} in {where})"


def _places(paths: list[str]) -> str:
    """One path as it is (a directory with a trailing ``/``), else how many files or places."""
    dirs = [path for path in paths if os.path.isdir(path)]
    if len(paths) == 1:
        return paths[0] if not dirs or paths[0].endswith("/") else paths[0] + "/"
    return f"{len(paths)} {'places' if dirs else 'files'}"


def format_problems(problems: Iterable[Problem], *, count: bool = True) -> str:
    """Every problem (located line, source line, caret), then the closing count. Files are
    named relative to the working directory when inside it, by every command alike."""
    problems = [shown_relative(p) for p in problems]
    sources = _Sources()
    lines: list[str] = []
    for problem in problems:
        lines.append(str(problem))
        lines.extend(excerpt(problem, sources))
    if count and len(problems) > 1:
        lines.append(count_line(problems))
    return "\n".join(lines)


def shown_path(file: str) -> str:
    """A file as every command names it: an absolute path inside the working directory
    relative to it (as ``pipeline validate`` names files), anything else as given."""
    from pipeline.resources import display_path

    return display_path(Path(file)) if os.path.isabs(file) else file


def shown_relative(problem: Problem) -> Problem:
    """``problem`` with its file named by :func:`shown_path`."""
    from pipeline.errors import Location

    loc = problem.location
    if loc is None or not loc.file:
        return problem
    shown = shown_path(loc.file)
    return problem if shown == loc.file else problem.at(Location(shown, loc.line, loc.col))


def report(problems: Iterable[Problem], stream: TextIO | None = None, *, count: bool = True) -> None:
    """Print problems with :func:`format_problems` (on stderr unless told otherwise)."""
    text = format_problems(problems, count=count)
    if text:
        print(text, file=stream or sys.stderr)


def report_notices(problems: Iterable[Problem], *, skip_codes: frozenset[str] = frozenset()) -> None:
    """Problems in input a command still used: on stderr, each labelled at least
    ``warning:`` (the command went on)."""
    shown = [replace(p, severity="warning") if p.severity == "error" else p
             for p in problems if p.code not in skip_codes]
    report(shown)


def report_error(command: str | None, err: PipelineError) -> None:
    """The error that ended a command; usage errors name the command, as argparse does."""
    from pipeline.errors import UsageError

    if isinstance(err, UsageError):
        print(f"pipeline {command}: {err}", file=sys.stderr)
        return
    report(err.problems)
