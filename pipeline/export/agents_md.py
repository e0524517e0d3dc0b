"""The ``AGENTS.md`` target: the team's sections in a marked block of the project's ``AGENTS.md``.

``AGENTS.md`` is one file many agents read (Codex CLI, opencode, Qwen Code, Kilo CLI,
Copilot CLI; Claude Code when the project has no ``CLAUDE.md``), and it is the team's own,
hand-written file. The export owns one block of it
(:class:`~pipeline.export.base.SharedBlock`, from ``<!-- context-pipeline: begin -->`` to
``<!-- context-pipeline: end -->``): created with the file when there is none, appended
after the user's text when it has no block, and only the block rewritten on a re-export;
every byte outside it stays (:mod:`pipeline.export.blocks`). A block edited by hand is a
conflict unless ``--force``.

* **The prompt**: the team's sections (:mod:`pipeline.export.static_prompt`) rendered for a
  static file. Each reader keeps its own system prompt and sends the file in its own layout
  (Codex: a user message ``# AGENTS.md instructions for <cwd>``; opencode, Kilo, Qwen Code,
  Copilot: the system message), so ``system_prompt.base: profile`` cannot be honoured: it is
  reported lost, and the sections are rendered as for ``base: agent`` (the ``owner: agent``
  ones ``own``, the team's without the tool catalog).
* **Everything else is lost**: AGENTS.md has no form for commands, compaction, the summary
  request or retries; each reader keeps those in its own files (export to that agent's
  target for them).
* **Nested files for a monorepo**: a section with ``folder: packages/api``
  (``system_prompt.sections.*.folder``) goes to the marked block of ``packages/api/AGENTS.md``,
  the others to the root's; each file is a :class:`SharedBlock` of its own, so the user's
  text around each block stays, and a folder a re-export no longer names loses its block
  (the file too when nothing else is left in it). A folder must be an existing folder of
  the project, reached without a link (:func:`pipeline.export.paths.folder_problem`);
  otherwise the export stops with a located ``profile.export-folder`` problem. Readers that
  walk from the repository's root down to their working directory (Codex CLI) send both.

The manifest is ``.agents/context-pipeline-export.json``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pipeline.errors import PipelineError, Problem
from pipeline.export.base import Carried, Export, Place, SharedBlock
from pipeline.export.paths import folder_problem
from pipeline.export.static_prompt import StaticPrompt, replaces_prompt, static_prompt, templates_lost
from pipeline.prompt.render import RenderedSection

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pipeline.facade import Pipeline

FILE = "AGENTS.md"
WHERE = f"{FILE} (the export's marked block)"
READER = "each reader"
HOST = {
    "custom_prompt": "AGENTS.md has no place for a prompt file of the user's; each reader has its own",
    "append_prompt": "AGENTS.md has no appended prompt; each reader has its own",
    "context_files": "AGENTS.md is itself a context file: each reader sends it, and its other instruction files, "
                     "in its own layout",
    "skills": "each reader lists its own skills",
}
CWD_WHY = ("AGENTS.md is shared by every checkout, so it cannot hold the working directory; each reader states it "
           "itself")
#: what AGENTS.md cannot carry, by the profile's key
LOST = (
    ("compaction", "AGENTS.md is instructions text: it has no form for compaction settings (each reader keeps them "
                   "in its own settings; export to that agent's target)"),
    ("summary", "AGENTS.md has no form for the summary request (each reader writes its own)"),
    ("summarizer", "AGENTS.md has no form for the summary model"),
    ("retry", "AGENTS.md has no form for retries (each reader retries by its own settings)"),
)
NO_COMMANDS = ("AGENTS.md has no form for commands: each reader keeps them in its own folder (export to that "
               "agent's target for them)")
NOT_REPLACED = ("AGENTS.md is read beside each reader's own system prompt, never in its place: the sections are "
                "written to the block and the reader's own prompt stays")


class AgentsMdTarget:
    name = "agents-md"
    agent = "AGENTS.md"
    #: the project file the export keeps its marked block in (`pipeline init`'s hook watches it)
    block_file = FILE

    def manifest_path(self, place: Place) -> str:
        return ".agents/context-pipeline-export.json"

    def export(self, pipeline: "Pipeline", place: Place) -> Export:
        prompt = static_prompt(pipeline, WHERE, HOST, CWD_WHY, READER, replaces=False)
        head = Carried("system_prompt", "own", "each reader's own system prompt" + (
            f"; the team's sections in {WHERE} (each reader sends it in its own layout)" if prompt.text else ""))
        report = [head, *prompt.report]
        if replaces_prompt(pipeline):
            report.insert(1, Carried("system_prompt.base", "lost", why=NOT_REPLACED))
        report += templates_lost(pipeline, place, NO_COMMANDS)
        report += [Carried(key, "lost", why=why) for key, why in LOST]
        folders = section_folders(pipeline, Path(place.root))
        report = [_placed(c, folders) for c in report]
        if folders and prompt.text:
            report[0] = replace(head, where=head.where + "; a section with a `folder` in that folder's AGENTS.md "
                                "(a reader sends the files from the repository's root down to its working directory)")
        return Export(self.name, (), (), tuple(report), _blocks(prompt, folders))


TARGET = AgentsMdTarget()


def section_folders(pipeline: "Pipeline", root: Path) -> dict[str, str]:
    """Each section's ``folder`` by id, every one checked (a located ``profile.export-folder`` problem otherwise)."""
    folders: dict[str, str] = {}
    problems = []
    for i, section in enumerate(pipeline.profile.system_prompt.sections):
        if section.folder is None:
            continue
        folder = section.folder.rstrip("/") or section.folder
        problem = folder_problem(root, folder)
        if problem is None:
            folders[section.id] = folder
            continue
        problems.append(Problem(problem, pipeline.source_map.value_location(("system_prompt", "sections", i, "folder")),
                                key=f"system_prompt.sections.{section.id}.folder", code="profile.export-folder",
                                hint="name an existing sub-folder of the project, relative and with `/` "
                                     "(packages/api), or drop the key to keep the section in the root's AGENTS.md"))
    if problems:
        raise PipelineError(problems)
    return folders


def nested_file(folder: str) -> str:
    """The ``AGENTS.md`` of a sub-folder."""
    return f"{folder}/{FILE}"


def _placed(carried: Carried, folders: dict[str, str]) -> Carried:
    """A native section of a sub-folder's block said to be there, and its ``folder`` native."""
    if not carried.key.startswith("system_prompt.sections."):
        return carried
    section, _, field = carried.key.removeprefix("system_prompt.sections.").partition(".")
    folder = folders.get(section)
    if folder is None:
        return carried
    where = f"{nested_file(folder)} (the export's marked block; read by agents working in {folder} or below)"
    if field == "folder":
        return Carried(carried.key, "native", where)
    return replace(carried, where=where) if carried.how == "native" and not field else carried


def _blocks(prompt: StaticPrompt, folders: dict[str, str]) -> tuple[SharedBlock, ...]:
    """One block per file (the root's, each sub-folder's) holding its sections in the profile's order,
    the file's first section without its separator."""
    grouped: dict[str, list[RenderedSection]] = {}
    for section in prompt.sections:
        folder = folders.get(section.id)
        grouped.setdefault(FILE if folder is None else nested_file(folder), []).append(section)
    return tuple(SharedBlock(path, "".join(("" if i == 0 else s.separator) + s.text for i, s in enumerate(kept)))
                 for path, kept in grouped.items())
