"""Discovery: gather render inputs from the file system, as pi 0.84.0's agent does.

Kept apart from rendering (which reads no file system). Used by ``pipeline render
--discover`` and by runtimes. What is found where (docs/pi-rules.md#system-prompt-inputs, docs/pi-rules.md#project-context-and-skills, docs/pi-rules.md#project-context-and-skills):

* context files: the agent dir's file first, then one per directory from the file-system
  root down to the cwd: the first existing regular, readable file among
  ``AGENTS.override.md``, ``AGENTS.md``, ``AGENTS.MD``, ``CLAUDE.md``, ``CLAUDE.MD``;
  duplicate paths dropped.
* skills: ``SKILL.md`` frontmatter (``name``, ``description``, ``disable-model-invocation``);
  a directory holding ``SKILL.md`` is one skill; other directories are searched recursively,
  skipping dot-names and ``node_modules``; loose ``.md`` files directly in a ``.pi``-style
  root are skills too; the name falls back to the parent directory's name; a missing or
  blank description drops the skill; the first skill of a name wins; one real file loads once.
  Roots in order: ``<cwd>/.pi/skills``, ``.agents/skills`` in the cwd and each parent up to
  the git root (trusted projects only), ``<agent dir>/skills``, ``~/.agents/skills``, then
  explicit paths.
* prompts: ``<cwd>/.pi/SYSTEM.md`` (trusted only) else ``<agent dir>/SYSTEM.md`` as the custom
  prompt; ``APPEND_SYSTEM.md`` likewise as the append prompt.

Not reproduced: ``.gitignore``/``.ignore``/``.fdignore`` inside skill roots, the linked
git-worktree shadowing of context files, settings- and package-provided skill paths.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import Iterable, Optional

from pipeline import files
from pipeline.agentdir import CONFIG_DIR
from pipeline.agentdir import agent_dir as default_agent_dir
from pipeline.errors import PipelineError
from pipeline.js import js_trim, js_truthy
from pipeline.limits import WALK_MAX_DEPTH
from pipeline.model.render_plan import DEFAULT_CONTEXT_FILES
from pipeline.prompt.context import ContextFile, Skill

CONTEXT_FILE_NAMES = DEFAULT_CONTEXT_FILES


@dataclass(frozen=True)
class Diagnostic:
    """Something discovery skipped or doubts; ``path`` is the file concerned."""

    message: str
    path: str


@dataclass(frozen=True)
class SkillScan:
    skills: tuple[Skill, ...]
    diagnostics: tuple[Diagnostic, ...] = ()


@dataclass(frozen=True)
class Discovery:
    """Every input an agent would find on disk for one working directory."""

    context_files: tuple[ContextFile, ...]
    skills: tuple[Skill, ...]
    custom_prompt: Optional[str]
    append_prompts: tuple[str, ...]
    diagnostics: tuple[Diagnostic, ...] = ()


def resolve_path(path: str, home: Optional[str] = None) -> str:
    """Absolute, normalised path with ``~`` expanded (no symlinks resolved)."""
    if path == "~" or path.startswith("~/"):
        path = (home or os.path.expanduser("~")) + path[1:]
    return os.path.abspath(path)


def read_text(path: str, kind: str = "context file") -> str:
    """File text as pi reads it: UTF-8, invalid bytes replaced, newlines untouched; through
    the bounded reader, so a FIFO, a device or a file beyond ``kind``'s limit is a located
    :class:`~pipeline.errors.PipelineError` instead of a hang."""
    return files.read_text(path, kind, lenient=True)


# --------------------------------------------------------------------------- context files


def context_file_in(directory: str, names: Iterable[str] = CONTEXT_FILE_NAMES) -> Optional[ContextFile]:
    """The first existing, regular, readable candidate file in ``directory``."""
    for name in names:
        path = os.path.join(directory, name)
        if not files.is_regular(path):
            continue
        if not os.access(path, os.R_OK):
            continue  # pi takes the first *readable* one
        return ContextFile(path, read_text(path))
    return None


def _ancestors_root_first(directory: str) -> list[str]:
    chain = [directory]
    while os.path.dirname(chain[-1]) != chain[-1]:
        chain.append(os.path.dirname(chain[-1]))
    return chain[::-1]


def discover_context_files(
    cwd: str, agent_dir: Optional[str] = None, names: Iterable[str] = CONTEXT_FILE_NAMES
) -> tuple[ContextFile, ...]:
    """Context files in pi's order: agent dir first, then the file-system root down to ``cwd``
    (``names``: ``system_prompt.context_file_names``)."""
    names = tuple(names)
    found: list[ContextFile] = []
    seen: set[str] = set()
    candidates = [resolve_path(_agent(agent_dir))] + _ancestors_root_first(resolve_path(cwd))
    for directory in candidates:
        file = context_file_in(directory, names)
        if file is not None and file.path not in seen:
            seen.add(file.path)
            found.append(file)
    return tuple(found)


# --------------------------------------------------------------------------- skills


def load_skill_file(path: str) -> tuple[Optional[Skill], tuple[Diagnostic, ...]]:
    """One skill file; ``None`` (with a diagnostic) when pi would not load it."""
    from pipeline.templates.frontmatter import FrontmatterError, parse_frontmatter  # only when skills are read

    try:
        fields = parse_frontmatter(read_text(path, "skill")).data
    except FrontmatterError as err:  # pi skips the skill with a warning
        return None, (Diagnostic(f"cannot load skill: {err}", path),)
    except PipelineError as err:
        return None, (Diagnostic(f"cannot load skill: {_reason(err)}", path),)
    description, name = fields.get("description"), fields.get("name")
    base_dir = os.path.dirname(path)
    if not js_truthy(name):
        name = os.path.basename(base_dir)
    if not isinstance(description, str) or not js_trim(description):
        return None, (Diagnostic("description is required", path),)
    if not isinstance(name, str):
        return None, (Diagnostic("name must be a string", path),)
    hidden = fields.get("disable-model-invocation") is True
    return Skill(name, description, path, base_dir, hidden), ()


def _reason(err: PipelineError) -> str:
    """A problem's message without its location (a diagnostic names the path itself)."""
    return "; ".join(p.message for p in err.problems)


def _kind(entry: os.DirEntry) -> Optional[str]:
    """``"dir"``, ``"file"``, ``"other"``, or None for a broken symlink."""
    try:
        if entry.is_symlink():
            target = os.stat(entry.path)
            return "dir" if _isdir(target) else "file" if _isfile(target) else "other"
        if entry.is_dir(follow_symlinks=False):
            return "dir"
        return "file" if entry.is_file(follow_symlinks=False) else "other"
    except OSError:
        return None


def _isdir(st: os.stat_result) -> bool:
    return stat.S_ISDIR(st.st_mode)


def _isfile(st: os.stat_result) -> bool:
    return stat.S_ISREG(st.st_mode)


def _entries(directory: str) -> list[os.DirEntry]:
    try:
        with os.scandir(directory) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:
        return []


def skill_files(directory: str, root_files: bool = True, *, walk: "_Walk | None" = None) -> list[str]:
    """Skill files under ``directory`` in pi's traversal order (``root_files``: loose ``.md`` too).

    A directory reached a second time (a symbolic link to itself or to an ancestor) is not
    entered again, and the walk stops :data:`~pipeline.limits.WALK_MAX_DEPTH` levels down;
    both are noted in ``walk.diagnostics``.
    """
    walk = walk if walk is not None else _Walk()
    if not walk.visited.enter(directory):
        walk.note("directory already searched (a symbolic link loop?); not entered again", directory)
        return []
    entries = _entries(directory)
    for entry in entries:
        if entry.name == "SKILL.md" and _kind(entry) == "file":
            return [entry.path]
    found: list[str] = []
    for entry in entries:
        if entry.name.startswith(".") or entry.name == "node_modules":
            continue
        kind = _kind(entry)
        if kind == "dir":
            found.extend(walk.descend(entry.path))
        elif kind == "file" and root_files and entry.name.endswith(".md"):
            found.append(entry.path)
    return found


@dataclass
class _Walk:
    """State of one skills walk: directories entered, depth, what was skipped."""

    visited: files.VisitedDirs = field(default_factory=files.VisitedDirs)
    depth: int = 0
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def note(self, message: str, path: str) -> None:
        self.diagnostics.append(Diagnostic(message, path))

    def descend(self, directory: str) -> list[str]:
        if self.depth >= WALK_MAX_DEPTH:
            self.note(f"directory nested more than {WALK_MAX_DEPTH} levels deep; not searched", directory)
            return []
        self.depth += 1
        try:
            return skill_files(directory, root_files=False, walk=self)
        finally:
            self.depth -= 1


def load_skills_from_dir(directory: str, root_files: bool = True) -> SkillScan:
    """Every skill file under one root, loaded (duplicates are kept; see :func:`merge_skills`)."""
    skills: list[Skill] = []
    walk = _Walk()
    paths = skill_files(directory, root_files, walk=walk)
    diagnostics: list[Diagnostic] = list(walk.diagnostics)
    for path in paths:
        skill, problems = load_skill_file(path)
        diagnostics.extend(problems)
        if skill is not None:
            skills.append(skill)
    return SkillScan(tuple(skills), tuple(diagnostics))


def merge_skills(scans: Iterable[SkillScan]) -> SkillScan:
    """The first skill of a name wins; a real file already loaded is skipped."""
    by_name: dict[str, Skill] = {}
    real_paths: set[str] = set()
    diagnostics: list[Diagnostic] = []
    for scan in scans:
        diagnostics.extend(scan.diagnostics)
        for skill in scan.skills:
            real = os.path.realpath(skill.file_path)
            if real in real_paths:
                continue
            if skill.name in by_name:
                diagnostics.append(Diagnostic(f'name "{skill.name}" collision', skill.file_path))
                continue
            by_name[skill.name] = skill
            real_paths.add(real)
    return SkillScan(tuple(by_name.values()), tuple(diagnostics))


def _git_root(directory: str) -> Optional[str]:
    for candidate in reversed(_ancestors_root_first(directory)):
        if os.path.exists(os.path.join(candidate, ".git")):
            return candidate
    return None


def _agents_skill_dirs(cwd: str) -> list[str]:
    """``.agents/skills`` in ``cwd`` and each parent, up to the git root (or the file-system root)."""
    stop = _git_root(cwd)
    dirs = []
    for directory in reversed(_ancestors_root_first(cwd)):
        dirs.append(os.path.join(directory, ".agents", "skills"))
        if directory == stop:
            break
    return dirs


def _scan_path(path: str) -> SkillScan:
    if files.is_directory(path):
        return load_skills_from_dir(path)
    if files.is_regular(path) and path.endswith(".md"):
        skill, problems = load_skill_file(path)
        return SkillScan((skill,) if skill else (), problems)
    return SkillScan((), (Diagnostic("skill path does not exist or is not a markdown file", path),))


def discover_skills(
    cwd: str,
    agent_dir: Optional[str] = None,
    *,
    home: Optional[str] = None,
    paths: Iterable[str] = (),
    trusted: bool = True,
    defaults: bool = True,
) -> SkillScan:
    """Skills from pi's default roots (unless ``defaults`` is false), then from ``paths``."""
    home = resolve_path(home or os.path.expanduser("~"))
    cwd, agent_dir = resolve_path(cwd, home), resolve_path(_agent(agent_dir), home)
    user_agents = os.path.join(home, ".agents", "skills")
    scans: list[SkillScan] = []
    if defaults:
        if trusted:
            scans.append(load_skills_from_dir(os.path.join(cwd, CONFIG_DIR, "skills")))
            for directory in _agents_skill_dirs(cwd):
                if directory != user_agents:
                    scans.append(load_skills_from_dir(directory, root_files=False))
        scans.append(load_skills_from_dir(os.path.join(agent_dir, "skills")))
        scans.append(load_skills_from_dir(user_agents, root_files=False))
    scans.extend(_scan_path(resolve_path(p, home)) for p in paths)
    return merge_skills(scans)


# --------------------------------------------------------------------------- SYSTEM.md, APPEND_SYSTEM.md


def _prompt_file(cwd: str, agent_dir: str, name: str, trusted: bool) -> Optional[str]:
    project = os.path.join(cwd, CONFIG_DIR, name)
    if trusted and files.exists(project):
        return project
    user = os.path.join(agent_dir, name)
    return user if files.exists(user) else None


def read_prompt_file(path: str) -> str:
    """A prompt file's text; like pi, a path it cannot read as a file (a directory, a file
    it may not read) stands for itself. A FIFO or a device (pi would wait forever or fill
    memory) or a file beyond the limit is a located error."""
    if files.is_directory(path) or (files.is_regular(path) and not os.access(path, os.R_OK)):
        return path
    return read_text(path, "prompt file")


def discover_prompts(cwd: str, agent_dir: Optional[str] = None, *, trusted: bool = True) -> tuple[Optional[str], tuple[str, ...]]:
    """``(custom_prompt, append_prompts)`` from ``SYSTEM.md`` / ``APPEND_SYSTEM.md``."""
    cwd, agent_dir = resolve_path(cwd), resolve_path(_agent(agent_dir))
    custom = _prompt_file(cwd, agent_dir, "SYSTEM.md", trusted)
    append = _prompt_file(cwd, agent_dir, "APPEND_SYSTEM.md", trusted)
    return (
        None if custom is None else read_prompt_file(custom),
        () if append is None else (read_prompt_file(append),),
    )


def _agent(agent_dir: Optional[str]) -> str:
    """The agent directory asked for, else pi's (``$PI_CODING_AGENT_DIR``, else ``~/.pi/agent``)."""
    return agent_dir if agent_dir is not None else str(default_agent_dir())


def discover(
    cwd: str,
    agent_dir: Optional[str] = None,
    *,
    home: Optional[str] = None,
    skill_paths: Iterable[str] = (),
    trusted: bool = True,
    context_names: Iterable[str] = CONTEXT_FILE_NAMES,
) -> Discovery:
    """Everything an agent started in ``cwd`` would load: context files, skills, prompt files."""
    custom, appends = discover_prompts(cwd, agent_dir, trusted=trusted)
    skills = discover_skills(cwd, agent_dir, home=home, paths=skill_paths, trusted=trusted)
    return Discovery(
        context_files=discover_context_files(cwd, agent_dir, context_names),
        skills=skills.skills,
        custom_prompt=custom,
        append_prompts=appends,
        diagnostics=skills.diagnostics,
    )
