"""What of a profile's system prompt a static file can hold, for targets without code in-process.

Claude Code, Codex, opencode and Gemini CLI read prompt text from files that are written
once and checked in. Such a file cannot follow the inputs pi hands its extension at every
turn, so the sections are rendered once, for fixed inputs: the profile's ``default_tools``,
no custom or appended prompt, no context files, no skills, no caller sections.

What the file is depends on ``system_prompt.base``:

* ``agent`` (the default): the agent keeps its own system prompt and tool guidance. The
  sections marked ``owner: agent`` (pi's own prompt in the built-in profiles) are reported
  ``own``: the agent's own prompt stands in their place, and nothing of them is written.
  The team's sections (``owner: team``) are rendered without the tool catalog (a rule
  ``from: tool_guidelines`` brings none: the agent's own tools bring their guidance) and go
  where the agent reads project instructions; a team ``tool_list`` section is lost (the
  agent lists its own tools).
* ``profile``: the file replaces the agent's whole prompt, and every section is rendered
  with the catalog. A section marked ``owner: agent``, or one whose text follows the
  profile's tools (a tool list, rules), is reported ``mismatch``: its text is in the file,
  but it was written for pi's tools, not the agent's.

Then, section by section, in both modes:

* a section whose text depends on the working directory (it renders differently for two
  working directories) is **lost**: the file is shared by every checkout;
* a section of a kind the target fills itself (``custom_prompt``, ``append_prompt``,
  ``context_files``, ``skills``) is **lost**, with the target's own reason (the target
  passes them: its context files reach the model in its own layout, for instance);
* a section whose condition does not hold for those inputs renders nothing and is
  reported lost (its condition needs inputs a static file does not have);
* every other section is **native**: its text is in the file, with its separator; its
  ``folder``, if it has one, is **lost** (the file is read in every folder; only the
  agents-md target writes a folder's own file, and says so in its report).

Template translation shared by these targets is here too: :func:`command_files`; and what
they give an agent's own summary request: :func:`summary_instructions` and
:func:`precompact_hook`.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from pipeline.export.base import Carried, OwnedFile, Place
from pipeline.export.paths import template_name_problem
from pipeline.manifests import ExportedCopies
from pipeline.prompt.catalog import with_catalog
from pipeline.prompt.context import RenderContext
from pipeline.prompt.render import RenderedSection, render_sections

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pipeline.facade import Pipeline
    from pipeline.templates.files import PromptTemplate

#: two working directories no profile text contains: a section that differs between them uses ``${cwd}``
_CWD_PROBES = ("/context-pipeline-probe-a", "/context-pipeline-probe-b")
#: the section kinds a target fills from its own inputs
HOST_KINDS = ("custom_prompt", "append_prompt", "context_files", "skills")


@dataclass(frozen=True)
class StaticPrompt:
    """The sections a static file holds, joined as the profile lays them out, and the report."""

    text: str
    sections: tuple[RenderedSection, ...]
    report: tuple[Carried, ...]


def replaces_prompt(pipeline: "Pipeline") -> bool:
    """Whether the profile replaces an agent's whole prompt (``system_prompt.base: profile``)."""
    return pipeline.profile.system_prompt.base == "profile"


def static_prompt(pipeline: "Pipeline", where: str, host: Mapping[str, str], cwd_why: str,
                  agent: str, replaces: Optional[bool] = None) -> StaticPrompt:
    """The profile's sections rendered for a static file ``where``.

    ``host``: for each of :data:`HOST_KINDS`, why the target does not take that section
    from the profile; ``cwd_why``: why a section using the working directory is lost;
    ``agent``: the target's name in the report (``Claude Code``); ``replaces``: whether the
    file replaces the agent's prompt (default: as the profile's ``system_prompt.base`` says;
    ``False`` for a target that can only add to it)."""
    plan = pipeline.render_plan
    replaces = replaces_prompt(pipeline) if replaces is None else replaces
    owners = {s.id: s.owner for s in pipeline.profile.system_prompt.sections}
    folders = {s.id for s in pipeline.profile.system_prompt.sections if s.folder is not None}
    tools = ", ".join(plan.default_tools) or "none"
    rendered = [rendered_for(pipeline, at, replaces) for at in _CWD_PROBES]
    kept: list[RenderedSection] = []
    report: list[Carried] = []
    for section in plan.sections:
        key = f"system_prompt.sections.{section.id}"
        mine = owners.get(section.id) == "agent"
        if section.kind in HOST_KINDS:
            report.append(Carried(key, "lost", why=host[section.kind]))
        elif mine and not replaces:
            report.append(Carried(key, "own", f"{agent}'s own system prompt and tool guidance stand in its place "
                                              "(system_prompt.base: agent)"))
        elif section.kind == "tool_list" and not replaces:
            report.append(Carried(key, "lost", why=f"{agent} lists its own tools in its own prompt "
                                                   "(system_prompt.base: agent)"))
        else:
            a, b = rendered[0].get(section.id), rendered[1].get(section.id)
            if a is None:
                report.append(Carried(key, "lost", why="it renders nothing for the inputs a static file is rendered "
                                                        f"for (the profile's default tools: {tools}; no custom "
                                                        "prompt, context files or skills)"))
            elif b is None or a.text != b.text:
                report.append(Carried(key, "lost", why=cwd_why))
            else:
                kept.append(a)
                report.append(_kept(key, where, section, mine, replaces, tools, agent))
                if section.id in folders:
                    report.append(folder_lost(section.id, agent))
    text = "".join(("" if i == 0 else s.separator) + s.text for i, s in enumerate(kept))
    return StaticPrompt(text, tuple(kept), tuple(report))


def folder_lost(section_id: str, agent: str) -> Carried:
    """A section's ``folder`` in the report of a target that writes one file for every folder
    (agents-md reports it native: :mod:`pipeline.export.agents_md`)."""
    return Carried(f"system_prompt.sections.{section_id}.folder", "lost",
                   why=f"{agent} reads the section in every folder of the project: only `pipeline export agents-md` "
                       "writes a folder's own file (its AGENTS.md)")


def rendered_for(pipeline: "Pipeline", cwd: str, replaces: Optional[bool] = None) -> dict[str, RenderedSection]:
    """The sections rendered for a static file in ``cwd``, by id: with the tool catalog when the
    profile replaces the agent's prompt, else without (the agent's own tools bring their guidance)."""
    plan = pipeline.render_plan
    bare = RenderContext(cwd=cwd)
    catalog = replaces_prompt(pipeline) if replaces is None else replaces
    return {s.id: s for s in render_sections(plan, with_catalog(plan, bare) if catalog else bare)}


def _kept(key: str, where: str, section, mine: bool, replaces: bool, tools: str, agent: str) -> Carried:
    if replaces and (mine or _tool_dependent(section)):
        return Carried(key, "mismatch", f"{where}, in place of {agent}'s own prompt; written for the profile's "
                                        f"tools ({tools}), not {agent}'s (system_prompt.base: profile)")
    return Carried(key, "native", where)


def _tool_dependent(section) -> bool:
    if section.kind in ("tool_list", "rules"):
        return True
    when = section.when
    return when is not None and bool(when.tools_include or when.tools_exclude or when.selected_any)


def summary_instructions(pipeline: "Pipeline") -> str:
    """The summary's first instructions, the schema rendered in: what an agent that writes its own
    summary request is given (Codex's ``compact_prompt``, Claude Code's and Qwen Code's PreCompact
    hook, opencode's and Kilo CLI's plugin)."""
    from pipeline.compaction.summary_schema import render_schema

    summary = pipeline.profile.summary
    return summary.instructions.initial.render(schema=render_schema(summary.schema_, summary.schema_format))


def precompact_hook(place: Place, pre: str, relpath: str, project_dir: str) -> list[dict[str, Any]]:
    """A ``hooks.PreCompact`` entry (Claude Code's settings, Qwen Code's) whose command prints the
    export's file ``relpath``: by the agent's ``project_dir`` variable in a project export, by its
    absolute path in a user-level one."""
    path = f"{place.root}/{relpath}" if place.user else f"${project_dir}/{pre}{relpath}"
    command = f"cat {shlex.quote(path)}" if place.user else f'cat "{path}"'
    return [{"matcher": "", "hooks": [{"type": "command", "command": command}]}]


Translate = Callable[["PromptTemplate"], tuple[Optional[str], Optional[str], tuple[str, ...], tuple[str, ...]]]
#: why a template of a user-level folder is not written into a project
USER_WHY = ("a template of the user's own folder ({path}), not of the project: a project export writes the "
            "project's templates (export to the user's folder with --user-dir)")
#: why an export's copy whose template the profile no longer has is not exported
ORPHAN_WHY = ("{path} is a copy an export wrote of a template the profile no longer has (the export that wrote it "
              "removes it; edit it to keep it as the project's own)")


def command_files(pipeline: "Pipeline", place: Place, directory: str, translate: Translate, dialect: str) -> tuple[
        list[OwnedFile], list[Carried]]:
    """Every template the profile sees (:meth:`Pipeline.load_templates` for the project: its
    ``project`` source too; an export's copies yield to the templates they were made from) as a line of the
    report, and as a command file under ``directory`` where it needs one:

    * a template in ``dialect`` from the target's own folder (``.pi/prompts`` for pi,
      ``.claude/commands`` for Claude Code...) is read by the agent where it is: native;
    * an export's copy the profile sees because it has no other template of that name any
      more (see :func:`pipeline.templates.discovery.load_sources`) is lost: the export that wrote it
      removes it;
    * one of a user-level folder (``~/.pi/agent/prompts``) is lost in a project export;
    * any other is written: ``translate(template)`` gives ``(relpath, text, reasons, notes)``;
      a template with reasons is not written and is reported lost with them; notes say what
      differs."""
    loaded = pipeline.load_templates(place.extra.get("cwd") or place.root)
    copies = ExportedCopies()
    files: list[OwnedFile] = []
    report: list[Carried] = []
    for template in loaded.templates:
        if template.path is None:
            continue
        key = f"templates.{template.name}"
        if copies.is_copy(template.path, "template"):
            report.append(Carried(key, "lost", why=ORPHAN_WHY.format(path=_shown(template.path, place))))
            continue
        if _read_in_place(template, dialect, pipeline):
            report.append(Carried(key, "native", f"{_shown(template.path, place)} (the agent reads its own folder)"))
            continue
        if template.source == "user" and not place.user:
            report.append(Carried(key, "lost", why=USER_WHY.format(path=template.path)))
            continue
        unsafe = template_name_problem(template.name)
        if unsafe is not None:
            report.append(Carried(key, "lost", why=unsafe))
            continue
        relpath, text, reasons, notes = translate(template)
        if reasons or relpath is None or text is None:
            report.append(Carried(key, "lost", why="; ".join(reasons) or "it cannot be written for this target"))
            continue
        path = f"{directory}/{relpath}"
        files.append(OwnedFile(path, text))
        report.append(Carried(key, "native", path + (f" (note: {'; '.join(notes)})" if notes else "")))
    return files, report


def templates_lost(pipeline: "Pipeline", place: Place, why: str) -> list[Carried]:
    """For a target without commands: each template file the profile sees for the project, reported lost with
    ``why`` (built-in templates, which have no file, are not the project's)."""
    loaded = pipeline.load_templates(place.extra.get("cwd") or place.root)
    return [Carried(f"templates.{t.name}", "lost", why=why) for t in loaded.templates if t.path is not None]


def _read_in_place(template: "PromptTemplate", dialect: str, pipeline: "Pipeline") -> bool:
    """Whether the agent of ``dialect`` reads ``template`` from where the profile found it:
    one of that agent's own folders (for pi: the default ``project_dir`` and ``global_dir``;
    the other dialects' ``project`` sources are their tools' folders)."""
    if template.dialect != dialect or template.source not in ("project", "user"):
        return False
    if dialect != "pi":
        return True
    from pipeline.model.templates import DEFAULT_GLOBAL_DIR, Templates

    settings = pipeline.profile.templates
    if template.source == "user":
        return settings.global_dir == DEFAULT_GLOBAL_DIR
    return settings.project_dir == Templates.model_fields["project_dir"].default


def _shown(path: "Path", place: Place) -> str:
    """``path`` relative to the export's root when it is inside it."""
    try:
        return Path(path).resolve().relative_to(Path(place.root).resolve()).as_posix()
    except ValueError:
        return str(path)
