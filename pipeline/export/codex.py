"""The Codex CLI target (checked on codex-cli 0.169.0, the pinned CLI of tests/agents).

* **The system prompt** (``system_prompt.base: agent``, the default): Codex keeps its
  built-in instructions and tool guidance; the team's sections
  (:mod:`pipeline.export.static_prompt`) are ``.codex/config.toml`` ``developer_instructions``,
  which Codex sends as a developer message of its own, beside its instructions. The user's
  ``AGENTS.md`` is not touched (Codex sends it as a user message, as without the export).
* With ``system_prompt.base: profile``: ``.codex/context-pipeline/instructions.md``, every
  section rendered for a static file, and ``model_instructions_file`` naming it (relative to
  ``.codex/``): Codex then sends that text in place of its built-in instructions. Its other
  developer blocks (skills, permissions), ``AGENTS.md`` and its ``<environment_context>``
  stay Codex's own.
* **Compaction**: ``model_auto_compact_token_limit`` from a fixed-tokens trigger (or a limit
  no context reaches when the profile turns compaction off: Codex has no ``enabled`` key),
  and ``compact_prompt``, the profile's initial summary instructions with the schema: Codex
  sends it as the last user message of its summary request (local compaction, which a
  custom provider gets).
* **Templates**: lost. Codex 0.169.0 has no custom prompts (``~/.codex/prompts`` was removed
  in 0.117.0): ``codex exec "/prompts:NAME args"`` reaches the model as typed.

Codex reads a project's ``.codex/config.toml`` only when the project is trusted
(``[projects."<dir>"] trust_level = "trusted"`` in ``$CODEX_HOME/config.toml``); the export
does not write that trust. ``config.toml`` is shared with the user: the export edits only
its own top-level keys, line by line (:class:`~pipeline.export.base.SharedToml`).

With ``--user-dir`` the root is laid out as ``$CODEX_HOME`` (``~/.codex``): ``config.toml``
and ``context-pipeline/instructions.md``.
"""

from __future__ import annotations

from typing import Any

from pipeline.export.base import Carried, Export, FolderTarget, Key, OwnedFile, Place, SharedToml
from pipeline.export.losses import Row, carried, lost, own_summary
from pipeline.export.static_prompt import replaces_prompt, static_prompt, summary_instructions, templates_lost

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pipeline.facade import Pipeline

INSTRUCTIONS = "context-pipeline/instructions.md"
#: model_auto_compact_token_limit when the profile turns compaction off (Codex has no `enabled` key)
NEVER = 9_223_372_036_854_775_807

HOST = {
    "custom_prompt": "Codex has no prompt file of the user's to put in its place (model_instructions_file is the "
                     "export's)",
    "append_prompt": "Codex has no appended prompt of the user's beside developer_instructions (config.toml)",
    "context_files": "Codex reads AGENTS.md itself and sends it as a user message (`# AGENTS.md instructions for "
                     "<cwd>`), not in the instructions",
    "skills": "Codex lists its skills (.agents/skills) itself, in a developer message of its own",
}
CWD_WHY = ("the exported text is shared by every checkout, so it cannot hold the working directory; Codex "
           "states it in its <environment_context> message")
NO_PROMPTS = ("Codex 0.169.0 has no custom prompts (removed in 0.117.0): `codex exec \"/prompts:NAME args\"` "
              "reaches the model as typed")


class CodexTarget(FolderTarget):
    def build(self, pipeline: "Pipeline", place: Place, pre: str) -> Export:
        config = f"{pre}config.toml"
        files, keys, report = _prompt(pipeline, config, f"{pre}{INSTRUCTIONS}")
        compaction_keys, compaction_report = _compaction(pipeline, config)
        return Export(self.name, tuple(files), (SharedToml(config, tuple(keys + compaction_keys)),),
                      tuple(report + templates_lost(pipeline, place, NO_PROMPTS) + compaction_report))


TARGET = CodexTarget("codex", "Codex CLI 0.169.0", ".codex/")


def _prompt(pipeline: "Pipeline", config: str, instructions: str) -> tuple[list[OwnedFile], list[tuple[Key, Any]],
                                                                         list[Carried]]:
    """The instructions file that replaces Codex's (``base: profile``), else ``developer_instructions``."""
    if replaces_prompt(pipeline):
        prompt = static_prompt(pipeline, instructions, HOST, CWD_WHY, "Codex")
        head = Carried("system_prompt", "native", f"{instructions}, named by {config} model_instructions_file (Codex "
                                                  "sends it as its first developer message, in place of its built-in "
                                                  "instructions)")
        return ([OwnedFile(instructions, prompt.text + "\n")], [(("model_instructions_file",), INSTRUCTIONS)],
                [head, *prompt.report])
    where = f"{config} developer_instructions"
    prompt = static_prompt(pipeline, where, HOST, CWD_WHY, "Codex")
    head = Carried("system_prompt", "own", "Codex's built-in instructions" + (
        f"; the team's sections in {where} (Codex sends them as a developer message of their own)"
        if prompt.text else ""))
    return [], ([(("developer_instructions",), prompt.text)] if prompt.text else []), [head, *prompt.report]


WINDOW_WHY = ("Codex compacts at an absolute token count (model_auto_compact_token_limit, else its model catalog's); "
              "{what} needs each model's window, which the export does not know")
OWN_ITEMS = "Codex writes the summary request from the conversation's own items; only compact_prompt is set"
NEVER_SUMMARIZES = "the profile's strategy never summarizes; Codex always does"
#: what becomes of each compaction, summary and retry setting ({limit}: the limit key, {prompt}: compact_prompt's line)
LOSSES = (
    Row("compaction.enabled", "native", "{limit} = " + f"{NEVER} (a limit no context reaches: Codex has no `enabled` "
                                                       "key)", when=("disabled",)),
    Row("compaction.enabled", "native", "Codex compacts automatically by default", when=("enabled",)),
    Row("compaction.trigger", "native", "{limit}", when=("tokens", "enabled")),
    Row("compaction.trigger", why="the profile turns compaction off", when=("tokens", "disabled")),
    Row("compaction.trigger", why=WINDOW_WHY.format(what="a share of the window"), when=("percent",)),
    Row("compaction.reserve_tokens", why=WINDOW_WHY.format(what="a reserve"), when=("reserve",)),
    Row("compaction.keep_recent_tokens", why="Codex keeps a fixed share of recent user messages (20,000 tokens) "
                                             "itself"),
    Row("compaction.branch.reserve_tokens", why="Codex has no branch summaries"),
    Row("compaction.model_overrides", why="Codex's compaction keys are not per model", when=("per_model",)),
    Row("compaction.strategy", why="Codex always summarizes", when=("not_summarize",)),
    Row("compaction.pins", why="Codex has no pinned messages", when=("pins",)),
    Row("retry", why="Codex's retries are keys of each model provider (model_providers.<id>.request_max_retries), "
                     "not the export's"),
    Row("summary.instructions.initial", "native", "{prompt}", when=("summarizes",)),
    Row("summary.schema", "native", "{prompt}, inside the instructions", when=("summarizes",)),
    Row("summary.system_prompt", why="Codex sends its developer instructions (here: the profile's system prompt) "
                                     "with the summary request; compact_prompt is the user turn"),
    Row("summary.instructions.update", why="Codex summarizes the whole conversation each time, with one prompt "
                                           "(compact_prompt)"),
    *own_summary("Codex"),
    *lost(OWN_ITEMS, "summary.labels", "summary.tags"),
    *lost(NEVER_SUMMARIZES, "summary.instructions.initial", "summary.schema", when=("masks",)),
    Row("summarizer", why="Codex summarizes with the session's model", when=("summarizer",)),
)


def _compaction(pipeline: "Pipeline", config: str) -> tuple[list[tuple[Key, Any]], list[Carried]]:
    """The config.toml keys of the profile's compaction, and its report (:data:`LOSSES`)."""
    from pipeline.model.compaction import TokensTrigger

    profile = pipeline.profile
    comp = profile.compaction
    keys: list[tuple[Key, Any]] = []
    if comp.enabled is False:
        keys.append((("model_auto_compact_token_limit",), NEVER))
    elif isinstance(comp.trigger, TokensTrigger):
        keys.append((("model_auto_compact_token_limit",), comp.trigger.tokens))
    if comp.strategy != "mask_tool_results":
        keys.append((("compact_prompt",), summary_instructions(pipeline)))
    prompt = f"{config} compact_prompt (Codex sends it as the last user message of its summary request)"
    return keys, carried(profile, LOSSES, limit=f"{config} model_auto_compact_token_limit", prompt=prompt)
