"""Template dialects: other tools' command files as template sources.

``templates.sources`` may name a dialect (``claude-code``, ``opencode``, ``gemini``,
``codex``; ``pi`` is the default language): as a bare keyword for that tool's own
directories, or as ``{dialect: NAME, path: DIR}``. Files are read in their tool's format
(:mod:`.readers`), expanded by their tool's rules (:mod:`.languages`), and what the tool
has that is not run here is reported per file (:mod:`.features`). pi's own argument
language stays defined by ``grammar/template_args.lark``; :mod:`.export` writes pi
templates in the other dialects.
"""

from __future__ import annotations

import os
from pathlib import Path

from pipeline import files
from pipeline.errors import Location, Problem

from .readers import DialectTemplate, command_name, read_dialect_file

DIALECTS = ("pi", "claude-code", "opencode", "gemini", "codex")
#: The file suffix each dialect's commands have.
SUFFIX = {"pi": ".md", "claude-code": ".md", "opencode": ".md", "codex": ".md", "gemini": ".toml"}
#: Whether sub-folders are read (and become namespaces).
RECURSIVE = {"pi": False, "claude-code": True, "opencode": True, "codex": False, "gemini": True}
#: Each tool's project directories, relative to the working directory.
PROJECT_DIRS = {
    "claude-code": (".claude/commands",),
    "opencode": (".opencode/command", ".opencode/commands"),
    "gemini": (".gemini/commands",),
}

__all__ = ["DIALECTS", "DialectTemplate", "command_name", "default_dirs", "dialect_files", "read_dialect_file"]


def default_dirs(dialect: str, cwd: Path, home: Path | str | None = None) -> list[Path]:
    """The directories a bare dialect keyword stands for: the project's for Claude Code,
    opencode and Gemini CLI; ``$CODEX_HOME/prompts`` (else ``~/.codex/prompts``) for Codex."""
    if dialect == "codex":
        env = os.environ.get("CODEX_HOME")
        base = Path(os.path.expanduser(env)) if env else Path(home or os.path.expanduser("~")) / ".codex"
        return [base / "prompts"]
    return [cwd / d for d in PROJECT_DIRS[dialect]]


def dialect_files(path: Path, dialect: str) -> tuple[list[Path], list[Problem]]:
    """The command files under ``path`` (a directory, or one file), in byte order of their
    relative paths; hidden names are skipped."""
    suffix = SUFFIX[dialect]
    if path.is_file():
        return ([path], []) if path.name.endswith(suffix) else ([], [_warn(path, f"not a {suffix} file")])
    if not path.is_dir():
        return [], [_warn(path, "template path does not exist")]
    found: list[Path] = []
    problems: list[Problem] = []
    _walk(path, suffix, RECURSIVE[dialect], found, problems, files.VisitedDirs())
    return sorted(found, key=lambda p: os.fsencode(str(p.relative_to(path)))), problems


def _walk(directory: Path, suffix: str, recursive: bool, found: list, problems: list,
          visited: "files.VisitedDirs") -> None:
    if not visited.enter(directory):  # a link back to a folder already walked: not walked again
        return
    try:
        entries = list(os.scandir(directory))
    except OSError as err:
        problems.append(_warn(directory, f"cannot read directory: {err.strerror or err}", "template.unreadable-dir"))
        return
    for entry in entries:
        if entry.name.startswith(".") or entry.name == "node_modules":
            continue
        if entry.is_dir() and recursive:
            _walk(Path(entry.path), suffix, recursive, found, problems, visited)
        elif entry.name.endswith(suffix) and entry.is_file():
            found.append(Path(entry.path))


def _warn(path: Path, message: str, code: str = "template.bad-path") -> Problem:
    return Problem(message, Location(str(path)), severity="warning", code=code)
