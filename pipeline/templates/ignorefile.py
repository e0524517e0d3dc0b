"""The ignore files pi honours in its template directories, for direct children only.

pi reads ``.gitignore``, ``.ignore`` and ``.fdignore`` (in that order) of a prompts
directory into one gitignore matcher (the ``ignore`` package: last matching rule wins,
``!`` re-includes, case-insensitive) and asks it about each entry's name. Only the
part of gitignore syntax that can match a name in that directory matters here: globs
(``*``, ``?``, ``[...]``, ``**``), escapes, negation, an optional leading ``/`` or
``**/``. Patterns naming a deeper path or only directories (``x/``) never match a file
name and are dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pipeline import files
from pipeline.errors import PipelineError

IGNORE_FILES = (".gitignore", ".ignore", ".fdignore")


@dataclass(frozen=True)
class _Rule:
    regex: re.Pattern
    negated: bool


@dataclass(frozen=True)
class IgnoreRules:
    """Ordered gitignore rules; :meth:`ignores` applies them to one file name."""

    rules: tuple[_Rule, ...] = ()

    @classmethod
    def from_directory(cls, directory: Path) -> "IgnoreRules":
        """The rules of ``directory``'s ignore files (unreadable ones count as empty)."""
        lines: list[str] = []
        for name in IGNORE_FILES:
            if files.missing(directory / name):
                continue
            try:
                text = files.read_text(directory / name, "ignore file", lenient=True)
            except PipelineError:
                continue  # unreadable ones count as empty
            lines += re.split(r"\r?\n", text)
        return cls.from_lines(lines)

    @classmethod
    def from_lines(cls, lines: list[str]) -> "IgnoreRules":
        """Rules from gitignore lines, in order (comments, blanks and deeper paths dropped)."""
        rules = (_rule(line) for line in lines)
        return cls(tuple(r for r in rules if r is not None))

    def ignores(self, name: str) -> bool:
        """Whether a direct child called ``name`` is ignored (the last matching rule decides)."""
        ignored = False
        for rule in self.rules:
            if rule.negated == ignored and rule.regex.fullmatch(name):
                ignored = not rule.negated
        return ignored


def _rule(line: str) -> _Rule | None:
    if not line.strip() or line.strip().startswith("#"):
        return None
    negated = line.startswith("!")
    pattern = line[1:] if negated or line.startswith("\\!") else line
    pattern = _strip_trailing_spaces(pattern)
    pattern = pattern[1:] if pattern.startswith("/") else pattern
    while pattern.startswith("**/"):
        pattern = pattern[3:]
    if not pattern or "/" in pattern.replace("\\/", ""):
        return None  # only directories, or a deeper path
    return _Rule(re.compile(_glob_to_regex(pattern), re.IGNORECASE | re.DOTALL), negated)


def _strip_trailing_spaces(pattern: str) -> str:
    stripped = pattern.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(pattern):
        return stripped + " "  # an escaped space stays
    return stripped


def _glob_to_regex(glob: str) -> str:
    out, i = [], 0
    while i < len(glob):
        ch = glob[i]
        if ch == "*":
            out.append(".*" if glob.startswith("**", i) else "[^/]*")
            i += 2 if glob.startswith("**", i) else 1
            continue
        if ch == "?":
            out.append("[^/]")
        elif ch == "\\" and i + 1 < len(glob):
            i += 1
            out.append(re.escape(glob[i]))
        elif ch == "[" and _class_end(glob, i) > 0:
            end = _class_end(glob, i)
            out.append(_char_class(glob[i + 1 : end]))
            i = end
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def _class_end(glob: str, start: int) -> int:
    """Index of the ``]`` closing the class opened at ``start``, or -1."""
    j = start + 1
    if glob[j : j + 1] in ("!", "^"):
        j += 1
    if glob[j : j + 1] == "]":
        j += 1
    return glob.find("]", j)


def _char_class(body: str) -> str:
    negate = body[:1] in ("!", "^")
    inner = body[1:] if negate else body
    inner = inner.replace("\\", "\\\\").replace("[", "\\[")
    return f"[{'^' if negate else ''}{inner}]"
