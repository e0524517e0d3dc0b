"""Gathering a :class:`RenderContext` the way ``pipeline render`` does: flags, files, discovery.

This is the impure side (it reads files, the working directory and, with ``discover``,
the agent's directories); :mod:`pipeline.prompt.render` stays pure. Precedence, as in
pi: an explicit custom prompt or append file replaces what discovery found
(``SYSTEM.md``/``APPEND_SYSTEM.md``); explicit context files and skill paths come after the
discovered ones (the first skill of a name wins). Snippets and guidelines start from the
profile's tool catalog (``system_prompt.tools``); a tool named in ``tool_snippets`` /
``tool_guidelines`` gets exactly what is given there instead.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Optional

from pipeline import files
from pipeline.errors import Location, PipelineError, Problem
from pipeline.model.render_plan import RenderPlan
from pipeline.prompt.context import ContextFile, RenderContext
from pipeline.prompt.catalog import catalog_inputs
from pipeline.prompt.render import plan_of

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pipeline.model.profile import Profile
    from pipeline.prompt.discover import Diagnostic


@dataclass(frozen=True)
class RenderRequest:
    """What a caller asks for; files are named, not read yet."""

    cwd: Optional[str] = None  # None: the process's working directory
    tools: Optional[tuple[str, ...]] = None
    tool_snippets: tuple[tuple[str, str], ...] = ()
    tool_guidelines: tuple[tuple[str, str], ...] = ()
    guidelines: tuple[str, ...] = ()
    custom_prompt_file: Optional[str] = None
    append_files: tuple[str, ...] = ()
    context_file_paths: tuple[str, ...] = ()
    skill_paths: tuple[str, ...] = ()
    discover: bool = False
    agent_dir: Optional[str] = None  # None: $PI_CODING_AGENT_DIR, else ~/.pi/agent
    trusted: bool = True
    catalog: bool = True


@dataclass(frozen=True)
class Gathered:
    context: RenderContext
    diagnostics: tuple[Diagnostic, ...] = ()


#: The bounded reader's kind (its size limit) for each named input.
_KINDS = {"custom prompt": "prompt file", "append prompt": "prompt file", "context file": "context file"}


def read_input_file(path: str, what: str) -> str:
    """A named file's text (UTF-8, newlines untouched); a located error when it is not a
    regular file, beyond its limit, not UTF-8 (with the byte offset) or binary."""
    kind = _KINDS.get(what, "context file")
    try:
        data = files.read_bytes(path, kind)
        if b"\x00" in data:
            raise PipelineError(Problem(f"cannot use {what}: binary file (contains a NUL byte)", Location(path),
                                        code="profile.unreadable-input"))
        return files.decode(data, kind, path)
    except PipelineError as err:
        raise PipelineError([replace(p, message=_as_input(p.message, what)) for p in err.problems]) from None


def _as_input(message: str, what: str) -> str:
    """The reader's message naming the input (``cannot read custom prompt: ...``)."""
    for kind in ("prompt file", "context file"):
        if message.startswith(f"cannot read {kind}:"):
            return f"cannot read {what}:" + message[len(f"cannot read {kind}:"):]
    return message if message.startswith(f"cannot use {what}") else f"cannot use {what}: {message}"


def tool_texts(profile: "Profile | RenderPlan", request: RenderRequest) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """Snippets and guidelines: the catalog's, then the request's per tool."""
    snippets, guidelines = catalog_inputs(profile) if request.catalog else ({}, {})
    snippets.update(dict(request.tool_snippets))
    given: dict[str, list[str]] = {}
    for name, text in request.tool_guidelines:
        given.setdefault(name, []).append(text)
    guidelines.update({name: tuple(texts) for name, texts in given.items()})
    return snippets, guidelines


def gather(profile: "Profile | RenderPlan", request: RenderRequest) -> Gathered:
    """The render context for ``request`` (reads the files it names; discovers when asked)."""
    cwd = request.cwd if request.cwd is not None else os.getcwd()
    if request.discover:
        cwd = _existing_dir(cwd)
    _check_skill_paths(request.skill_paths)
    custom, appends, files, skills, notes = _discovered(cwd, profile, request)
    if request.custom_prompt_file is not None:
        custom = read_input_file(request.custom_prompt_file, "custom prompt")
    if request.append_files:
        appends = tuple(read_input_file(p, "append prompt") for p in request.append_files)
    files = files + tuple(_context_file(p) for p in request.context_file_paths)
    snippets, guidelines = tool_texts(profile, request)
    context = RenderContext(
        cwd=cwd,
        tools=request.tools,
        tool_snippets=snippets,
        tool_guidelines=guidelines,
        guidelines=request.guidelines,
        custom_prompt=custom,
        append_prompts=appends,
        context_files=files,
        skills=skills,
    )
    return Gathered(context, tuple(notes))


def _discovered(cwd: str, profile: "Profile | RenderPlan", request: RenderRequest) -> tuple:
    """(custom prompt, append prompts, context files, skills, diagnostics) that discovery
    finds, or the named skill paths alone; the file system is searched only when asked."""
    if not (request.discover or request.skill_paths):
        return None, (), (), (), ()
    from pipeline.prompt.discover import discover, discover_skills

    if request.discover:
        found = discover(cwd, request.agent_dir, skill_paths=request.skill_paths, trusted=request.trusted,
                         context_names=plan_of(profile).context_file_names)
        return found.custom_prompt, found.append_prompts, found.context_files, found.skills, found.diagnostics
    scan = discover_skills(cwd, paths=request.skill_paths, defaults=False)
    return None, (), (), scan.skills, scan.diagnostics


def _context_file(path: str) -> ContextFile:
    absolute = os.path.abspath(os.path.expanduser(path))
    return ContextFile(absolute, read_input_file(absolute, "context file"))


def _existing_dir(cwd: str) -> str:
    """Discovery searches a real directory: ``cwd`` made absolute, or a located error."""
    absolute = os.path.abspath(os.path.expanduser(cwd))
    if not os.path.isdir(absolute):
        raise PipelineError(Problem("cannot discover inputs: the working directory does not exist or is not a directory", Location(cwd), code="profile.unreadable-input"))
    return absolute


def _check_skill_paths(paths: tuple[str, ...]) -> None:
    missing = [p for p in paths if not os.path.exists(os.path.expanduser(p))]
    if missing:
        raise PipelineError([Problem("skills path does not exist", Location(p), code="profile.unreadable-input") for p in missing])
