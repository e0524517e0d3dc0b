"""Where templates come from and in which order, as pi's agent loads them.

Sources, in order (the first template of a name wins, as in pi):

1. the project directory ``<cwd>/.pi/prompts/``,
2. the user directory ``<agentDir>/prompts/`` (``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``),
3. explicit paths (pi's ``--prompt-template``): a ``.md`` file, or a directory read
   without any filtering.

Directories are read non-recursively, names in byte order; only names ending in ``.md``
that are files or symlinks to files count. Like pi's agent, a file reached twice by its
real path (a symlink to another template of the default directories) is taken once. The two default directories also skip names
starting with ``.``, ``node_modules`` and names matched by their ``.gitignore``,
``.ignore`` or ``.fdignore``. pi skips unreadable files, broken links and bad
frontmatter silently; here each becomes a warning :class:`~pipeline.errors.Problem` and
the other templates still load.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from pipeline.errors import Location, PipelineError, Problem
from pipeline.jsutil import js_trim

from .files import PromptTemplate, SourceKind, read_template
from .ignorefile import IgnoreRules

CONFIG_DIR = ".pi"
AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"


@dataclass(frozen=True)
class TemplateSource:
    """One place to load from; ``filtered`` applies the default directories' rules."""

    path: Path
    kind: SourceKind
    filtered: bool = False


@dataclass(frozen=True)
class LoadedTemplates:
    """Templates in pi's order (duplicates removed) and what went wrong on the way."""

    templates: tuple[PromptTemplate, ...]
    problems: tuple[Problem, ...] = ()

    def get(self, name: str) -> PromptTemplate | None:
        """The template called ``name``, or None."""
        return next((t for t in self.templates if t.name == name), None)

    def __iter__(self) -> Iterator[PromptTemplate]:
        return iter(self.templates)

    def __len__(self) -> int:
        return len(self.templates)


def agent_dir() -> Path:
    """pi's agent directory: ``$PI_CODING_AGENT_DIR`` (``~`` expanded) or ``~/.pi/agent``."""
    env = os.environ.get(AGENT_DIR_ENV)
    if env:
        return Path(os.path.expanduser(env))
    return Path.home() / CONFIG_DIR / "agent"


def default_sources(cwd: Path | None = None, agent: Path | None = None) -> list[TemplateSource]:
    """The project directory, then the user directory."""
    cwd = Path(cwd or os.getcwd()).absolute()
    agent = Path(agent) if agent is not None else agent_dir()
    return [
        TemplateSource(cwd / CONFIG_DIR / "prompts", "project", filtered=True),
        TemplateSource(agent / "prompts", "user", filtered=True),
    ]


def explicit_sources(paths: Iterable[str | Path], cwd: Path | None = None) -> list[TemplateSource]:
    """Explicit paths, trimmed, ``~`` expanded and resolved against ``cwd``."""
    base = Path(cwd or os.getcwd()).absolute()
    out = []
    for raw in paths:
        text = os.path.expanduser(js_trim(str(raw)))
        out.append(TemplateSource(Path(os.path.normpath(base / text)), "path"))
    return out


def load_templates(
    paths: Sequence[str | Path] = (),
    *,
    cwd: Path | None = None,
    agent: Path | None = None,
    include_defaults: bool = True,
) -> LoadedTemplates:
    """Load templates from the default directories (optional) and ``paths``."""
    sources = default_sources(cwd, agent) if include_defaults else []
    return load_sources(sources + explicit_sources(paths, cwd))


def load_sources(sources: Iterable[TemplateSource]) -> LoadedTemplates:
    """Load every source in order; first template of a name wins."""
    found: list[PromptTemplate] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    for source in sources:
        files, trouble = _source_files(source)
        problems += trouble
        for path in _first_sight(source, files, seen):
            _load_one(path, source.kind, found, problems)
    return _dedupe(found, problems)


def _first_sight(source: TemplateSource, files: list[Path], seen: set[str]) -> list[Path]:
    """The files not reached before by their real path, as pi's agent takes them.

    Each file of a default directory counts on its own (a symlink to a file already
    taken is left out silently, whatever its name); an explicit path counts as one, so
    a directory given twice is read once but its files are not compared.
    """
    keys = [(path, [path]) for path in files] if source.filtered else [(source.path, files)]
    kept: list[Path] = []
    for key, paths in keys:
        real = os.path.realpath(key)
        if real not in seen:
            seen.add(real)
            kept += paths
    return kept


def _load_one(path: Path, kind: SourceKind, found: list, problems: list) -> None:
    try:
        found.append(read_template(path, kind))
    except PipelineError as err:
        problems.extend(err.problems)


def _source_files(source: TemplateSource) -> tuple[list[Path], list[Problem]]:
    path = source.path
    if source.filtered and not path.exists():
        return [], []  # a default directory that does not exist is normal
    if path.is_dir():
        return scan_directory(path, filtered=source.filtered)
    if path.is_file() and path.name.endswith(".md"):
        return [path], []
    what = "does not exist" if not path.exists() else "is not a directory or a .md file"
    return [], [_warn(path, f"template path {what}", "templates-path")]


def scan_directory(directory: Path, *, filtered: bool = False) -> tuple[list[Path], list[Problem]]:
    """The ``.md`` files of ``directory`` (not recursive), in byte order, and problems."""
    try:
        entries = sorted(os.scandir(directory), key=lambda e: os.fsencode(e.name))
    except OSError as err:
        return [], [_warn(directory, f"cannot read directory: {err.strerror or err}", "templates-dir")]
    rules = IgnoreRules.from_directory(directory) if filtered else None
    files, problems = [], []
    for entry in entries:
        if filtered and (entry.name.startswith(".") or entry.name == "node_modules"):
            continue
        if rules is not None and rules.ignores(entry.name):
            continue
        kept = _template_entry(entry, problems)
        if kept is not None:
            files.append(kept)
    return files, problems


def _template_entry(entry: os.DirEntry, problems: list[Problem]) -> Path | None:
    path = Path(entry.path)
    try:
        is_file = entry.is_file(follow_symlinks=False)
        if entry.is_symlink():
            is_file = path.stat().st_mode & 0o170000 == 0o100000
    except OSError as err:
        if entry.name.endswith(".md"):
            problems.append(_warn(path, f"broken symbolic link to {_link_target(path)}: "
                                  f"{err.strerror or err}", "template-broken-link"))
        return None
    return path if is_file and entry.name.endswith(".md") else None


def _link_target(path: Path) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"


def _dedupe(found: list[PromptTemplate], problems: list[Problem]) -> LoadedTemplates:
    seen: dict[str, PromptTemplate] = {}
    for t in found:
        first = seen.get(t.name)
        if first is None:
            seen[t.name] = t
        elif _real(first.path) != _real(t.path):
            problems.append(_warn(t.path, f'name "/{t.name}" collision: {first.path} wins',
                                  "template-collision", hint="this file is ignored"))
    return LoadedTemplates(tuple(seen.values()), tuple(problems))


def _real(path: Path | None) -> str | None:
    return os.path.realpath(path) if path is not None else None


def _warn(path: Path, message: str, code: str, hint: str | None = None) -> Problem:
    return Problem(message, Location(str(path)), hint=hint, severity="warning", code=code)
