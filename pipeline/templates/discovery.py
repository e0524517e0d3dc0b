"""Where templates come from and in which order, as pi's agent loads them.

Sources, in order (the first template of a name wins, as in pi):

1. the project directory ``<cwd>/.pi/prompts/``,
2. the user directory ``<agentDir>/prompts/`` (``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``),
3. explicit paths (pi's ``--prompt-template``): a ``.md`` file, or a directory read
   without any filtering.

:func:`load_profile_templates` reads the sources a compiled profile names instead
(``templates.sources``: ``project``, ``global`` and paths, in the profile's order).

Directories are read non-recursively, names in byte order; only names ending in ``.md``
that are files or symlinks to files count. Like pi's agent, a file reached twice by its
real path (a symlink to another template of the default directories) is taken once.
The two default directories also skip names starting with ``.``, ``node_modules`` and
names matched by their ``.gitignore``, ``.ignore`` or ``.fdignore``. pi skips unreadable
files, broken links and bad frontmatter silently; here each becomes a warning
:class:`~pipeline.errors.Problem` and the other templates still load.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator, Sequence, Union

from pipeline import files
from pipeline.agentdir import CONFIG_DIR, DEFAULT_GLOBAL_DIR, agent_dir, expand_home
from pipeline.errors import Location, PipelineError, Problem
from pipeline.js import js_trim
from pipeline.manifests import ExportedCopies
from pipeline.resources import display_path

from .dialects import DIALECTS, default_dirs, dialect_files, read_dialect_file
from .files import PromptTemplate, SourceKind, read_template
from .ignorefile import IgnoreRules

if TYPE_CHECKING:  # pragma: no cover
    from pipeline.model.run_plan import TemplateSettings
    from pipeline.model.run_plan import TemplateSource as PlannedSource
    from pipeline.model.templates import Templates



@dataclass(frozen=True)
class TemplateSource:
    """One place to load from; ``filtered`` applies the default directories' rules."""

    path: Path
    kind: SourceKind
    filtered: bool = False
    #: the file format and argument language (``pi``, or one of :data:`~.dialects.DIALECTS`)
    dialect: str = "pi"


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


def profile_sources(
    sources: Sequence[Union[str, Path, PlannedSource]],
    settings: Templates | TemplateSettings,
    cwd: Path | str | None = None,
    *,
    agent: Path | str | None = None,
    home: Path | str | None = None,
    trusted: bool = True,
) -> list[TemplateSource]:
    """The places a profile's ``templates.sources`` name, in its order (= precedence).

    ``"project"`` → ``<cwd>/<project_dir>`` (left out when not ``trusted``, as pi does for
    an untrusted project); ``"global"`` → :func:`global_template_dir`; any other entry is an
    explicit path (relative ones against ``cwd``), read without filtering.
    """
    base = Path(cwd or os.getcwd()).absolute()
    out: list[TemplateSource] = []
    for source in sources:
        dialect = getattr(source, "dialect", None)
        if dialect is not None or source in DIALECTS:
            out.extend(_dialect_sources(source, dialect or str(source), base, settings, agent, home, trusted))
        elif source == "project":
            if trusted:
                out.append(TemplateSource(base / expand_home(settings.project_dir, home), "project", filtered=True))
        elif source == "global":
            out.append(TemplateSource(global_template_dir(settings.global_dir, agent, home), "user", filtered=True))
        elif isinstance(source, (str, Path)):
            out.extend(explicit_sources([source], base))
    return out


def _dialect_sources(source, dialect: str, base: Path, settings, agent, home, trusted) -> list[TemplateSource]:
    """A dialect keyword (its tool's directories) or ``{dialect, path}``."""
    path = getattr(source, "path", None)
    if path is not None:
        resolved = Path(os.path.normpath(base / os.path.expanduser(str(path))))
        return [TemplateSource(resolved, "path", dialect=dialect)]
    if dialect == "pi":
        return profile_sources(["project", "global"], settings, base, agent=agent, home=home, trusted=trusted)
    if dialect != "codex" and not trusted:
        return []
    kind: SourceKind = "user" if dialect == "codex" else "project"
    return [TemplateSource(d, kind, filtered=True, dialect=dialect) for d in default_dirs(dialect, base, home)]


def global_template_dir(
    global_dir: str, agent: Path | str | None = None, home: Path | str | None = None
) -> Path:
    """``templates.global_dir`` as a directory. The default (``~/.pi/agent/prompts``) means
    pi's user directory, ``<agent>/prompts``: ``agent``, else ``$PI_CODING_AGENT_DIR``, else
    ``~/.pi/agent``; any other value is used as written, ``~`` expanded."""
    if global_dir != DEFAULT_GLOBAL_DIR:
        return expand_home(global_dir, home)
    return (Path(agent) if agent is not None else agent_dir(home)) / "prompts"


def load_profile_templates(
    settings: Templates | TemplateSettings,
    sources: Sequence[Union[str, Path, PlannedSource]],
    cwd: Path | str | None = None,
    *,
    agent: Path | str | None = None,
    home: Path | str | None = None,
    trusted: bool = True,
) -> LoadedTemplates:
    """The templates of a profile's ``templates`` block for ``cwd``: :func:`profile_sources`
    of ``sources`` (its ``templates.sources``, paths resolved; ``Pipeline.template_sources``),
    loaded in order; the first template of a name wins. A file an export wrote and left as
    written (the pi export's copy in ``.pi/prompts/``) yields to the profile's own template of
    its name (``skip_exported`` of :func:`load_sources`)."""
    return load_sources(profile_sources(sources, settings, cwd, agent=agent, home=home, trusted=trusted),
                        skip_exported=True)


def load_sources(sources: Iterable[TemplateSource], *, skip_exported: bool = False) -> LoadedTemplates:
    """Load every source in order; first template of a name wins.

    ``skip_exported``: a file an export's manifest lists with its bytes unchanged
    (:class:`pipeline.manifests.ExportedCopies`) is a copy of a template, not a source: it
    is read only when no other file gives its name (an edited copy is the user's, read in
    its place), so an export's copies never shadow or collide with what they were made from."""
    found: list[PromptTemplate] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    copies = ExportedCopies() if skip_exported else None
    deferred: list[tuple[Path, TemplateSource]] = []
    for source in sources:
        files, trouble = _source_files(source)
        problems += trouble
        for path in _first_sight(source, files, seen):
            if copies is not None and copies.is_copy(path, "template"):
                deferred.append((path, source))
            else:
                _load_one(path, source, found, problems)
    taken = {t.name for t in found}
    for path, source in deferred:
        spare: list[PromptTemplate] = []
        _load_one(path, source, spare, problems)
        found += [t for t in spare if t.name not in taken]
        taken.update(t.name for t in spare)
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


def _load_one(path: Path, source: TemplateSource, found: list, problems: list) -> None:
    try:
        if source.dialect == "pi":
            found.append(read_template(path, source.kind))
        else:
            root = source.path if source.path.is_dir() else path.parent
            found.append(read_dialect_file(path, source.dialect, root, source.kind))
    except PipelineError as err:
        problems.extend(err.problems)


def _source_files(source: TemplateSource) -> tuple[list[Path], list[Problem]]:
    path = source.path
    if source.filtered and files.missing(path):
        return [], []  # a default directory that does not exist is normal
    if source.dialect != "pi":
        return dialect_files(path, source.dialect)
    if files.is_directory(path):
        return scan_directory(path, filtered=source.filtered)
    if files.is_regular(path) and path.name.endswith(".md"):
        return [path], []
    reason = files.stat_reason(path)
    what = reason or ("does not exist" if files.missing(path) else "is not a directory or a .md file")
    return [], [_warn(path, f"template path {what}", "template.bad-path")]


def scan_directory(directory: Path, *, filtered: bool = False) -> tuple[list[Path], list[Problem]]:
    """The ``.md`` files of ``directory`` (not recursive), in byte order, and problems."""
    try:
        entries = sorted(os.scandir(directory), key=lambda e: os.fsencode(e.name))
    except OSError as err:
        return [], [_warn(directory, f"cannot read directory: {err.strerror or err}", "template.unreadable-dir")]
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
            is_file = stat.S_ISREG(os.stat(path).st_mode)
    except OSError as err:
        if entry.name.endswith(".md"):
            problems.append(_warn(path, f"broken symbolic link to {_link_target(path)}: "
                                  f"{err.strerror or err}", "template.broken-link"))
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
            winner = display_path(first.path) if first.path is not None else f"/{first.name}"
            problems.append(_warn(t.path, f'name "/{t.name}" collision: {winner} wins',
                                  "template.name-collision", hint="this file is ignored"))
    return LoadedTemplates(tuple(seen.values()), tuple(problems))


def _real(path: Path | None) -> str | None:
    return os.path.realpath(path) if path is not None else None


def _warn(path: Path, message: str, code: str, hint: str | None = None) -> Problem:
    return Problem(message, Location(str(path)), hint=hint, severity="warning", code=code)
