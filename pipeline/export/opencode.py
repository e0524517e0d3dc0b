"""The opencode target (checked on opencode 1.18.33, the pinned CLI of tests/agents).

* **The system prompt** (``system_prompt.base: agent``, the default): opencode keeps its own
  prompt and tool guidance; the team's sections (:mod:`pipeline.export.static_prompt`) are
  ``.opencode/context-pipeline/instructions.md``, named in ``opencode.json`` ``instructions``:
  opencode appends that file to its system prompt (``Instructions from: <path>``), beside the
  user's ``AGENTS.md``, which is not touched.
* With ``system_prompt.base: profile``: ``.opencode/context-pipeline/prompt.md``, every
  section rendered for a static file, and ``opencode.json`` ``agent.build.prompt`` naming it
  (``{file:...}``): opencode then sends it in place of its own prompt for its default agent,
  and appends its environment block, ``AGENTS.md`` and its skills after it.
* In both, a section holding the working directory is written with a marker that the
  generated plugin (``.opencode/plugin/context-pipeline.js``,
  ``experimental.chat.system.transform``) replaces with the session's directory.
* **Templates**: ``.opencode/command/NAME.md``, translated by
  :func:`pipeline.templates.dialects.export.export_template` (``$N`` as in pi, ``$@`` as
  ``$ARGUMENTS``; slices and defaults lost per template).
* **Compaction**: ``opencode.json`` ``compaction.auto``, ``compaction.reserved``,
  ``compaction.preserve_recent_tokens``, ``compaction.prune`` (``mask_tool_results``),
  ``agent.compaction.prompt`` (the summary system prompt); the plugin's
  ``experimental.session.compacting`` sets the profile's summary instructions as the
  compaction prompt.

``opencode.json`` is shared with the user and merged key by key. With ``--user-dir`` the
root is laid out as opencode's config folder (``~/.config/opencode``): ``opencode.json``,
``command/``, ``plugin/``, ``context-pipeline/``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pipeline.export.base import Carried, Export, FolderTarget, Key, OwnedFile, Place, SharedJson
from pipeline.export.losses import Row, carried, lost, own_summary
from pipeline.export.static_prompt import (command_files, rendered_for, replaces_prompt, static_prompt,
                                           summary_instructions)

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pipeline.facade import Pipeline

DATA = "context-pipeline"
PLUGIN = "plugin/context-pipeline.js"
#: what a section holding the working directory says in prompt.md; the plugin writes the directory there
CWD_MARKER = "${cwd}"

HOST = {
    "custom_prompt": "opencode has no prompt file of the user's to put in its place (agent.build.prompt is the "
                     "export's)",
    "append_prompt": "opencode appends the `instructions` files of opencode.json itself, after the prompt",
    "context_files": "opencode reads AGENTS.md itself and appends it after the prompt (`Instructions from: <path>`)",
    "skills": "opencode lists its skills itself, after the prompt",
}
CWD_WHY = "cwd"  # static_prompt's reason for a section holding the working directory (the plugin writes it here)


class OpencodeTarget(FolderTarget):
    def build(self, pipeline: "Pipeline", place: Place, pre: str) -> Export:
        config = "opencode.json"
        plugin = f"{pre}{PLUGIN}"
        files, keys, report, marked = _prompt_files(pipeline, place, pre, plugin)
        commands, carried = command_files(pipeline, place, f"{pre}command", translate_md, "opencode")
        files += commands
        report += carried
        compaction_keys, compaction_report, compaction_prompt = _compaction(pipeline, config, plugin)
        keys += compaction_keys
        report += compaction_report
        files += plugin_files(pre, CWD_MARKER if marked else None, compaction_prompt)
        return Export(self.name, tuple(files), (SharedJson(config, tuple(keys)),), tuple(report))


TARGET = OpencodeTarget("opencode", "opencode 1.18.33", ".opencode/")


def _prompt_files(pipeline: "Pipeline", place: Place, pre: str, plugin: str) -> tuple[
        list[OwnedFile], list[tuple[Key, Any]], list[Carried], bool]:
    """The prompt file that replaces opencode's (``base: profile``), else the team's instructions file."""
    config = "opencode.json"
    if replaces_prompt(pipeline):
        where = f"{pre}{DATA}/prompt.md"
        text, sections, marked = _prompt(pipeline, where, plugin)
        head = Carried("system_prompt", "native", f"{where}, named by {config} agent.build.prompt (opencode's default "
                                                  "agent; opencode appends its environment, AGENTS.md and skills "
                                                  "after it)")
        return ([OwnedFile(where, text + "\n")], [(("agent", "build", "prompt"), "{file:./" + where + "}")],
                [head, *sections], marked)
    where = f"{pre}{DATA}/instructions.md"
    text, sections, marked = _prompt(pipeline, where, plugin)
    head = Carried("system_prompt", "own", "opencode's own prompt" + (
        f"; the team's sections in {where}, named by {config} instructions (opencode appends it to its system "
        "prompt)" if text else ""))
    if not text:
        return [], [], [head, *sections], marked
    named = f"{place.root}/{where}" if place.user else where
    return [OwnedFile(where, text + "\n")], [(("instructions",), [named])], [head, *sections], marked


def _prompt(pipeline: "Pipeline", where: str, plugin: str) -> tuple[str, list[Carried], bool]:
    """The prompt file's text, the sections' report, and whether a section holds the marker."""
    marked = rendered_for(pipeline, CWD_MARKER)
    static = static_prompt(pipeline, where, HOST, CWD_WHY, "opencode")
    kept = []
    report: list[Carried] = []
    uses_marker = False
    for c in static.report:
        sid = c.key.removeprefix("system_prompt.sections.")
        if c.how in ("native", "mismatch"):
            kept.append(marked[sid])
            report.append(c)
        elif c.why == CWD_WHY and sid in marked and CWD_MARKER in marked[sid].text:
            kept.append(marked[sid])
            uses_marker = True
            report.append(Carried(c.key, "extension", f"{where}, the working directory written by {plugin} "
                                                      "(experimental.chat.system.transform)"))
        elif c.why == CWD_WHY:
            report.append(Carried(c.key, "lost", why="it differs between working directories in a way the plugin "
                                                     "cannot write in"))
        else:
            report.append(c)
    text = "".join(("" if i == 0 else s.separator) + s.text for i, s in enumerate(kept))
    return text, report, uses_marker


def translate_md(template) -> tuple:
    """A template as an opencode command file (Kilo CLI, a fork, reads the same)."""
    from pipeline.templates.dialects.export import export_template

    out = export_template(template, "opencode")
    return out.relpath, out.text, out.reasons, out.notes


#: what becomes of each compaction and retry setting in opencode.json (Kilo CLI's kilo.json): {config} the
#: file, {agent} the CLI, {reserve_note} added to compaction.reserved's line
KEYS_LOSSES = (
    Row("compaction.enabled", "native", "{config} compaction.auto"),
    Row("compaction.reserve_tokens", "native", "{config} compaction.reserved{reserve_note}", when=("reserve",)),
    Row("compaction.trigger", "native", "{config} compaction.reserved{reserve_note}", when=("reserve", "trigger")),
    Row("compaction.trigger", why="{agent} compacts at its model's window minus compaction.reserved; a share of the "
                                  "window or a fixed size needs each model's window", when=("not_reserve",)),
    Row("compaction.reserve_tokens", why="the profile's trigger is not a reserve", when=("not_reserve",)),
    Row("compaction.keep_recent_tokens", "native", "{config} compaction.preserve_recent_tokens"),
    Row("compaction.branch.reserve_tokens", why="{agent} has no branch summaries"),
    Row("compaction.model_overrides", why="{agent}'s compaction keys are not per model", when=("per_model",)),
    Row("compaction.strategy", "native", "{config} compaction.prune ({agent} clears old tool results; it still "
                                         "summarizes at its trigger)", when=("masks",)),
    Row("compaction.masking.placeholder", why="{agent} writes its own placeholder for a pruned tool result",
        when=("masks", "placeholder")),
    Row("compaction.strategy", why="hybrid is not exported to {agent}", when=("hybrid",)),
    Row("compaction.pins", why="{agent} has no pinned messages", when=("pins",)),
    Row("retry", why="{agent} retries provider errors by its own policy"),
)


def compaction_keys(pipeline: "Pipeline", config: str, agent: str, reserve_note: str = "") -> tuple[
        list[tuple[Key, Any]], list[Carried]]:
    """The ``compaction.*`` keys of ``config`` (opencode.json; Kilo CLI's kilo.json has the same)
    and their report (:data:`KEYS_LOSSES`); ``agent`` names the CLI in the reasons,
    ``reserve_note`` is added to ``compaction.reserved``'s line."""
    comp = pipeline.profile.compaction
    keys: list[tuple[Key, Any]] = [(("compaction", "auto"), comp.enabled)]
    trigger = comp.trigger
    if trigger is None or hasattr(trigger, "reserve_tokens"):
        keys.append((("compaction", "reserved"), getattr(trigger, "reserve_tokens", None) or comp.reserve_tokens))
    keys.append((("compaction", "preserve_recent_tokens"), comp.keep_recent_tokens))
    if comp.strategy == "mask_tool_results":
        keys.append((("compaction", "prune"), True))
    return keys, carried(pipeline.profile, KEYS_LOSSES, config=config, agent=agent, reserve_note=reserve_note)


OWN_SERIALIZING = "opencode serializes the conversation itself, after the prompt"
#: what becomes of each summary setting ({config}: opencode.json, {hook}: the plugin's line)
LOSSES = (
    Row("summary.system_prompt", "native", "{config} agent.compaction.prompt (opencode's compaction agent)"),
    Row("summary.instructions.initial", "extension", "{hook}"),
    Row("summary.schema", "extension", "{hook}, inside the instructions"),
    Row("summary.instructions.update", why="the hook cannot tell a first summary from an update; it sets the initial "
                                           "instructions"),
    *own_summary("opencode"),
    *lost(OWN_SERIALIZING, "summary.labels", "summary.tags"),
    Row("summarizer", why="the export does not name a model for opencode's compaction agent", when=("summarizer",)),
)


def _compaction(pipeline: "Pipeline", config: str, plugin: str) -> tuple[list[tuple[Key, Any]], list[Carried],
                                                                           Any]:
    """The compaction keys, the summary's compaction agent prompt, their report (:data:`LOSSES`)
    and the compaction prompt the plugin sets."""
    profile = pipeline.profile
    keys, report = compaction_keys(pipeline, config, "opencode")
    prompt = summary_instructions(pipeline)
    keys.append((("agent", "compaction", "prompt"), profile.summary.system_prompt.render()))
    hook = f"{plugin} (experimental.session.compacting replaces opencode's compaction prompt)"
    return keys, report + carried(profile, LOSSES, config=config, hook=hook), prompt


def plugin_files(pre: str, marker: "str | None", compaction_prompt: str) -> list[OwnedFile]:
    """The plugin (opencode's and Kilo CLI's ``plugin/`` folder) and the JSON it reads beside it."""
    data = json.dumps({"cwd_marker": marker, "compaction_prompt": compaction_prompt}, indent=1, ensure_ascii=False)
    return [OwnedFile(f"{pre}{DATA}/plugin.json", data + "\n"),
            OwnedFile(f"{pre}{PLUGIN}", Path(__file__).with_name("opencode_plugin.js").read_text(encoding="utf-8"))]
