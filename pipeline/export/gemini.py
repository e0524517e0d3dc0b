"""The Gemini CLI target (checked on Gemini CLI 0.61.0, the pinned CLI of tests/agents).

* **The system prompt** (``system_prompt.base: agent``, the default): Gemini CLI keeps its
  own system instruction and tool guidance; the team's sections
  (:mod:`pipeline.export.static_prompt`) are a marked block of the project's ``GEMINI.md``
  (:class:`~pipeline.export.base.SharedBlock`: the user's lines around it stay), which
  Gemini CLI puts in the first user message (``<loaded_context>``). Gemini CLI 0.61.0 reads
  neither a file under ``.gemini/`` nor one named in the project's ``context.fileName``
  there (tried), so the block is the one place it reads.
* With ``system_prompt.base: profile``: ``.gemini/system.md`` holds every section rendered
  for a static file, and ``.gemini/.env`` sets
  ``GEMINI_SYSTEM_MD=true``, which Gemini CLI reads from that file (it loads
  ``.gemini/.env`` itself): the file's text is then the whole ``systemInstruction``, in
  place of Gemini CLI's own prompt.
  ``GEMINI_SYSTEM_MD=true`` names ``.gemini/system.md`` relative to the folder Gemini CLI
  starts in, so a project export works when it is started in the project's root; with
  ``--user-dir`` the variable holds the file's absolute path.
* **Templates**: ``.gemini/commands/NAME.toml``; Gemini CLI's only placeholder is
  ``{{args}}``, the arguments as typed: pi's ``$@``/``$ARGUMENTS`` become it (the same text
  unless an argument is quoted), a template with a positional ``$N``, a slice or a default
  is not written and is reported lost.
* **Compaction**: ``settings.json`` ``model.compressionThreshold`` (a fraction of the
  model's window) for a share-of-window trigger. Nothing else of the policy has a key:
  Gemini CLI's summary prompt is fixed and its PreCompress hook is advisory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from pipeline.export.base import Carried, Export, FolderTarget, Key, OwnedFile, Place, SharedBlock, SharedJson
from pipeline.export.losses import Row, summary_lost
from pipeline.export.losses import carried as losses
from pipeline.export.static_prompt import command_files, replaces_prompt, static_prompt
from pipeline.templates.dialects.export import _file, _literal
from pipeline.templates.nodes import AllArgs, Default, Literal, Positional, Slice

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pipeline.facade import Pipeline

HOST = {
    "custom_prompt": "Gemini CLI has no prompt file of the user's beside system.md (the export writes that one)",
    "append_prompt": "Gemini CLI has no appended prompt",
    "context_files": "Gemini CLI puts the GEMINI.md files in the first user message in its own layout "
                     "(context.fileName says which names it reads)",
    "skills": "Gemini CLI lists skills only where a system.md holds its ${AgentSkills} placeholder, "
              "which the export does not write",
}
CWD_WHY = ("the exported file is shared by every checkout, so it cannot hold the working directory; Gemini CLI "
           "states it in its own session context (the first user message)")


@dataclass(frozen=True)
class MemoryFiles:
    """How Gemini CLI (or a fork of it) takes the prompt: a marked block of its memory file, or a
    system.md its variable names; the phrases of the report."""

    agent: str  # Gemini CLI
    memory: str  # GEMINI.md
    variable: str  # GEMINI_SYSTEM_MD
    own: str  # what stands in the prompt's place: "Gemini CLI's own system instruction"
    block_sent: str  # how the memory file is sent: "Gemini CLI sends it in the first user message"
    whole_sent: str  # how system.md is sent: "Gemini CLI sends it as the whole systemInstruction"
    host: Mapping[str, str]
    cwd_why: str


GEMINI = MemoryFiles("Gemini CLI", "GEMINI.md", "GEMINI_SYSTEM_MD", "Gemini CLI's own system instruction",
                     "Gemini CLI sends it in the first user message",
                     "Gemini CLI sends it as the whole systemInstruction", HOST, CWD_WHY)


def memory_prompt(pipeline: "Pipeline", place: Place, pre: str, how: MemoryFiles) -> tuple[
        list[OwnedFile], list[SharedBlock], list[Carried]]:
    """system.md in place of the agent's prompt (``base: profile``), else the block of its memory file."""
    if replaces_prompt(pipeline):
        system_md = f"{pre}system.md"
        prompt = static_prompt(pipeline, system_md, how.host, how.cwd_why, how.agent)
        value = f"{place.root}/system.md" if place.user else "true"
        files = [OwnedFile(system_md, prompt.text + "\n"), OwnedFile(f"{pre}.env", f"{how.variable}={value}\n")]
        head = Carried("system_prompt", "native", f"{system_md}, named by {pre}.env {how.variable} ({how.whole_sent})")
        return files, [], [head, *prompt.report]
    where = how.memory
    prompt = static_prompt(pipeline, f"{where} (the export's marked block)", how.host, how.cwd_why, how.agent)
    head = Carried("system_prompt", "own", how.own + (
        f"; the team's sections in the export's marked block of {where} ({how.block_sent})" if prompt.text else ""))
    return [], ([SharedBlock(where, prompt.text)] if prompt.text else []), [head, *prompt.report]


def translate_toml(template, agent: str) -> tuple:
    """pi's template language in Gemini CLI's TOML commands (``agent``: Gemini CLI or a fork of
    it that reads the same files): ``$@``/``$ARGUMENTS`` → ``{{args}}``, nothing else."""
    if template.dialect == "gemini":
        return f"{template.name.replace(':', '/')}.toml", open(template.path, encoding="utf-8").read(), (), ()
    if template.dialect != "pi":
        return None, None, (f"it is a {template.dialect} template; only pi templates are converted",), ()
    out: list[str] = []
    reasons: list[str] = []
    notes: list[str] = []
    for node in template.template.nodes:
        src = template.template.source(node)
        if isinstance(node, Literal):
            said: list[str] = []
            out.append(_literal(node.text, "gemini", said))
            reasons += [r.replace("Gemini CLI", agent) for r in said]
        elif isinstance(node, AllArgs):
            out.append("{{args}}")
            notes.append(f"{agent}'s {{{{args}}}} is the text as typed: quoted arguments keep their quotes")
        elif isinstance(node, Positional):
            reasons.append(f"`{src}`: {agent} has no positional arguments (only {{{{args}}}}, all of them)")
        elif isinstance(node, (Slice, Default)):
            reasons.append(f"`{src}` is {'a slice' if isinstance(node, Slice) else 'a default'}, which {agent} "
                           "has no form for")
    if not template.template.placeholders:
        notes.append(f"{agent} appends the typed command to a body without {{{{args}}}}; pi ignores the arguments")
    if reasons:
        return None, None, tuple(dict.fromkeys(reasons)), ()
    relpath = "/".join(template.name.split(":")) + ".toml"
    return relpath, _file(template, "".join(out), "gemini"), (), tuple(dict.fromkeys(notes))


#: what becomes of each compaction, summary and retry setting ({settings}: the settings file)
LOSSES = (
    Row("compaction.trigger", "native", "{settings} model.compressionThreshold", when=("percent",)),
    Row("compaction.trigger", why="Gemini CLI compresses at a share of the window only", when=("other_trigger",)),
    Row("compaction.reserve_tokens", why="Gemini CLI compresses at a share of the window; a reserve in tokens needs "
                                         "each model's window", when=("reserve",)),
    Row("compaction.enabled", "native", "Gemini CLI compresses by default", when=("enabled",)),
    Row("compaction.enabled", why="Gemini CLI has no setting that turns compression off", when=("disabled",)),
    Row("compaction.keep_recent_tokens", why="Gemini CLI keeps the newest 30% of the history (hard-coded)"),
    Row("compaction.branch.reserve_tokens", why="Gemini CLI has no branch summaries"),
    Row("retry", why="Gemini CLI retries provider errors by its own policy"),
    Row("compaction.model_overrides", why="Gemini CLI's compression settings are not per model", when=("per_model",)),
    Row("compaction.strategy", why="Gemini CLI always summarizes (its own tool-output masking works by other rules)",
        when=("not_summarize",)),
    Row("compaction.pins", why="Gemini CLI has no pinned messages", when=("pins",)),
    *summary_lost("Gemini CLI's summary prompt is fixed (its PreCompress hook cannot change it)"),
    Row("summarizer", why="not exported (Gemini CLI chooses the compression model by its aliases)",
        when=("summarizer",)),
)


class GeminiTarget(FolderTarget):
    """Gemini CLI; a fork that reads the same kinds of files (Qwen Code) sets its own data."""

    #: how the agent takes the prompt
    memory: MemoryFiles = GEMINI
    #: the settings key of a share-of-window trigger (a fraction of the window)
    threshold: Key = ("model", "compressionThreshold")
    #: the compaction, summary and retry table of the report
    table: tuple[Row, ...] = LOSSES
    #: settings keys holding a list the user shares (the export's items added to it)
    extend: tuple[Key, ...] = ()

    @property
    def block_file(self) -> str:
        """The project file the export keeps its marked block in (GEMINI.md), written only once the
        profile has sections of the team's: `pipeline init`'s hook watches it from the start."""
        return self.memory.memory

    def build(self, pipeline: "Pipeline", place: Place, pre: str) -> Export:
        files, blocks, report = memory_prompt(pipeline, place, pre, self.memory)
        commands, carried = command_files(pipeline, place, f"{pre}commands", self._translate, self.name)
        settings = f"{pre}settings.json"
        trigger = pipeline.profile.compaction.trigger
        keys: list[tuple[Key, Any]] = []
        if trigger is not None and hasattr(trigger, "percent_of_window"):
            keys.append((self.threshold, trigger.percent_of_window / 100))
        compaction = losses(pipeline.profile, self.table, settings=settings)
        hook_files, hook_keys, hook_report = self.summary_hook(pipeline, place, pre)
        return Export(self.name, tuple(files + commands + hook_files),
                      (SharedJson(settings, tuple(keys + hook_keys), self.extend),), blocks=tuple(blocks),
                      report=tuple(report + carried + compaction + hook_report))

    def summary_hook(self, pipeline: "Pipeline", place: Place, pre: str) -> tuple[
            list[OwnedFile], list[tuple[Key, Any]], list[Carried]]:
        """What adds to the agent's own summary request: files, settings keys and their report
        (Gemini CLI has no such hook; Qwen Code's PreCompact hook)."""
        return [], [], []

    def _translate(self, template) -> tuple:
        return translate_toml(template, self.memory.agent)


TARGET = GeminiTarget("gemini", "Gemini CLI 0.61.0", ".gemini/")
