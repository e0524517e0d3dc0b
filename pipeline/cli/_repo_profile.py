"""The repository's profile: where `pipeline init` records it and how commands find it.

A repository names its profile in one of two places (paths relative to the file that
holds the setting; a ``builtin:NAME`` works too):

* ``pyproject.toml``'s table, when the repository has a pyproject.toml::

      [tool.context-pipeline]
      profile = "agent-profiles/team.yaml"

* else ``.context-pipeline.toml`` at its root::

      profile = "agent-profiles/team.yaml"

Commands look from the current directory (or ``--project``) upward, directory by
directory, up to the git root (the first directory holding ``.git``; the file system's
root when there is none). In each directory ``.context-pipeline.toml`` comes first, then
a pyproject.toml that has the table (one without it is passed over). A setting that is
not valid TOML, a key the table does not have, a value that is not a non-empty text or a
file that does not exist is a located error (``profile.repo-setting``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from pipeline.errors import Location, PipelineError, Problem, did_you_mean
from pipeline.limits import toml_loads

#: the file that holds only the setting
SETTING_FILE = ".context-pipeline.toml"
PYPROJECT = "pyproject.toml"
TABLE = "tool.context-pipeline"
KEYS = ("profile",)
CODE = "profile.repo-setting"


@dataclass(frozen=True)
class RepoProfile:
    """The profile a repository names, and where it names it."""

    #: the value as written (relative to :attr:`setting`'s directory, or ``builtin:NAME``)
    value: str
    #: the file that holds the setting
    setting: Path
    line: int
    col: int

    @property
    def path(self) -> str:
        """The profile as a command takes it: a built-in name as written, else the file's
        path (relative to the current directory when it lies below it)."""
        if self.value.startswith("builtin:"):
            return self.value
        full = os.path.normpath(self.setting.parent.absolute() / self.value)
        rel = os.path.relpath(full)
        return full if rel.startswith("..") else rel

    @property
    def where(self) -> str:
        """``pyproject.toml [tool.context-pipeline]`` or ``.context-pipeline.toml``, as found."""
        rel = os.path.relpath(self.setting)
        shown = str(self.setting) if rel.startswith("..") else rel
        return f"{shown} [{TABLE}]" if self.setting.name == PYPROJECT else shown

    def same(self, profile: str) -> bool:
        """Whether ``profile`` (a command's argument) names this profile."""
        if self.value.startswith("builtin:") or profile.startswith("builtin:"):
            return profile in (self.value, self.value.removeprefix("builtin:"))
        return os.path.normpath(os.path.abspath(profile)) == os.path.normpath(os.path.abspath(self.path))


def find(start: str | os.PathLike | None = None) -> Optional[RepoProfile]:
    """The setting seen from ``start`` (default: the current directory), or None."""
    here = Path(start or ".").absolute()
    for directory in (here, *here.parents):
        for name in (SETTING_FILE, PYPROJECT):
            found = _read(directory / name)
            if found is not None:
                return found
        if (directory / ".git").exists():
            return None
    return None


def choose(given: Optional[str], start: str | os.PathLike | None = None) -> tuple[str, Optional[RepoProfile]]:
    """The profile a command uses: ``given``, else the repository's, else ``default``; and
    the repository's setting (None outside a set-up repository)."""
    repo = find(start)
    if given is not None:
        return given, repo
    return (repo.path if repo is not None else "default"), repo


def _read(path: Path) -> Optional[RepoProfile]:
    from pipeline import files

    if not files.is_regular(path):
        return None
    text = files.read_text(path, "settings file")
    if path.name == PYPROJECT and "context-pipeline" not in text:  # another tool's file: not parsed
        return None
    data = _parse(text, path)
    if path.name == PYPROJECT:
        table = data.get("tool", {}).get("context-pipeline") if isinstance(data.get("tool"), dict) else None
        if table is None:
            return None
        header = _header_line(text)
        if not isinstance(table, dict):
            raise _error(path, header, 1, TABLE, "must be a table", f"write `[{TABLE}]` and `profile = \"...\"` under it")
    else:
        table, header = data, 0
    for key in table:
        if key not in KEYS:
            line, col = _key_place(text, key, header)
            raise _error(path, line, col, key, "unknown key", did_you_mean(key, KEYS) or "the only key is `profile`")
    if "profile" not in table:
        raise _error(path, header or 1, 1, "profile", "the setting names no profile",
                     'add `profile = "agent-profiles/team.yaml"` (the path of your profile)')
    line, col = _key_place(text, "profile", header)
    value = table["profile"]
    if not isinstance(value, str) or not value.strip():
        raise _error(path, line, col, "profile", "must be a non-empty text: the profile's path or builtin:NAME",
                     'e.g. profile = "agent-profiles/team.yaml"')
    found = RepoProfile(value, path, line, col)
    if not value.startswith("builtin:") and not files.is_regular(found.path):
        raise _error(path, line, col, "profile", f"no profile file `{value}` (relative to {path.parent.absolute()})",
                     "correct the path, or run `pipeline init` to write a starter profile")
    return found


def _parse(text: str, path: Path) -> dict[str, Any]:
    try:
        return toml_loads(text)  # bounded nesting: a located error, never tomllib's RecursionError
    except ValueError as err:
        message = str(err)
        m = re.search(r" \(at line (\d+), column (\d+)\)", message)
        line, col = (int(m.group(1)), int(m.group(2))) if m else (None, None)
        raise _error(path, line, col, None, f"not valid TOML: {message[:m.start()] if m else message}",
                     "fix the TOML syntax (https://toml.io)") from None


def _header_line(text: str) -> int:
    for i, line in enumerate(text.splitlines(), 1):
        if re.match(r"\s*\[\s*tool\s*\.\s*(\"context-pipeline\"|context-pipeline)\s*\]", line):
            return i
    return 1


def _key_place(text: str, key: str, after: int) -> tuple[int, int]:
    """The line and column of ``key``'s value at or after line ``after`` (1, 1 when not found)."""
    lines = text.splitlines()
    for i in range(after, len(lines)):
        m = re.match(rf"\s*[\"']?{re.escape(key)}[\"']?\s*=\s*", lines[i])
        if m:
            return i + 1, m.end() + 1
    return 1, 1


def _error(path: Path, line: Optional[int], col: Optional[int], key: Optional[str], message: str,
           hint: Optional[str]) -> PipelineError:
    shown = f"{TABLE}.{key}" if key and path.name == PYPROJECT else key
    return PipelineError(Problem(message, Location(str(path), line, col), key=shown, hint=hint, code=CODE))
