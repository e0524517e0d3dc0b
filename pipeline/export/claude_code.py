"""The Claude Code target (checked on Claude Code 2.1.328, the pinned CLI of tests/agents).

* **The system prompt** (``system_prompt.base: agent``, the default): Claude Code keeps its
  own system prompt and tool guidance; the team's sections (:mod:`pipeline.export.static_prompt`)
  are written to ``.claude/rules/context-pipeline.md``, a file of the export's own that
  Claude Code reads as project memory beside ``CLAUDE.md`` (or ``AGENTS.md``, which 2.1.328
  reads when a project has no ``CLAUDE.md``) and sends in the first user message. The
  user's ``CLAUDE.md`` and ``AGENTS.md`` are not touched.
* With ``system_prompt.base: profile``: ``.claude/agents/context-pipeline.md``, an agent
  definition whose body is every section rendered for a static file, and
  ``.claude/settings.json`` ``agent: "context-pipeline"``, which runs the main thread as that
  agent: Claude Code then sends the body as its system prompt in place of its own (it keeps
  one identity line before it, and its ``# Environment`` system message).
* **Templates**: ``.claude/commands/NAME.md``, translated by
  :func:`pipeline.templates.dialects.export.export_template` (pi's 1-based ``$N`` is
  Claude Code's 0-based ``$ARGUMENTS[N-1]``; a slice or a default has no form there, so
  such a template is not written and is reported lost).
* **Compaction**: ``settings.json`` ``env.DISABLE_AUTO_COMPACT`` when the profile turns
  compaction off (``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` did not change when 2.1.328 compacts,
  so a trigger is reported lost), and a ``PreCompact`` hook that prints the profile's
  summary instructions (``.claude/context-pipeline/compact-instructions.md``): Claude Code
  appends a PreCompact hook's output to its own summary request.

With ``--user-dir`` the root is laid out as ``~/.claude``.
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.export.base import Carried, Export, FolderTarget, Key, OwnedFile, Place, SharedJson
from pipeline.export.losses import Row, carried, lost, own_summary
from pipeline.export.static_prompt import (command_files, precompact_hook, replaces_prompt, static_prompt,
                                           summary_instructions)
from pipeline.templates.dialects.export import export_template

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pipeline.facade import Pipeline

AGENT = "context-pipeline"
RULES = "rules/context-pipeline.md"
INSTRUCTIONS = "context-pipeline/compact-instructions.md"

HOST = {
    "custom_prompt": "Claude Code has no prompt file of the user's to put in its place (its --system-prompt is a "
                     "command-line flag)",
    "append_prompt": "Claude Code appends --append-system-prompt (a command-line flag) itself, after the prompt",
    "context_files": "Claude Code puts the CLAUDE.md files (AGENTS.md where a folder has no CLAUDE.md) and "
                     ".claude/rules in the first user message in its own layout",
    "skills": "Claude Code lists its skills (.claude/skills) itself, in its own layout",
}
CWD_WHY = ("the exported file is shared by every checkout, so it cannot hold the working directory; Claude Code "
           "states it in its own # Environment message")


class ClaudeCodeTarget(FolderTarget):
    def build(self, pipeline: "Pipeline", place: Place, pre: str) -> Export:
        settings = f"{pre}settings.json"
        prompt_files, prompt_keys, prompt_report = _prompt(pipeline, pre, settings)
        commands, carried = command_files(pipeline, place, f"{pre}commands", _translate, "claude-code")
        hook_files, hook_keys, compaction_report = _compaction(pipeline, place, pre, settings)
        extend = (("hooks", "PreCompact"),)  # the user's own PreCompact hooks stay beside the export's
        return Export(self.name, tuple(prompt_files + commands + hook_files),
                      (SharedJson(settings, tuple(prompt_keys + hook_keys), extend),),
                      tuple(prompt_report + carried + compaction_report))


TARGET = ClaudeCodeTarget("claude-code", "Claude Code 2.1.328", ".claude/")


def _prompt(pipeline: "Pipeline", pre: str, settings: str) -> tuple[list[OwnedFile], list[tuple[Key, Any]],
                                                                    list[Carried]]:
    """The agent file that replaces Claude Code's prompt (``base: profile``), else the rules file."""
    agent_file, rules = f"{pre}agents/{AGENT}.md", f"{pre}{RULES}"
    if replaces_prompt(pipeline):
        prompt = static_prompt(pipeline, agent_file, HOST, CWD_WHY, "Claude Code")
        head = Carried("system_prompt", "native", f"{agent_file}, selected by {settings} agent (Claude Code sends it "
                                                  "as its system prompt, after its identity line)")
        return [OwnedFile(agent_file, _agent_file(pipeline, prompt.text))], [(("agent",), AGENT)], [head, *prompt.report]
    prompt = static_prompt(pipeline, rules, HOST, CWD_WHY, "Claude Code")
    head = Carried("system_prompt", "own", "Claude Code's own system prompt" + (
        f"; the team's sections in {rules} (Claude Code reads it as project memory and sends it in the first user "
        "message)" if prompt.text else ""))
    return ([OwnedFile(rules, prompt.text + "\n")] if prompt.text else []), [], [head, *prompt.report]


def _agent_file(pipeline: "Pipeline", body: str) -> str:
    profile = pipeline.profile
    description = profile.description or profile.name
    return (f"---\nname: {AGENT}\ndescription: {json.dumps(description, ensure_ascii=False)}\n---\n"
            f"{body}\n")


def _translate(template) -> tuple:
    out = export_template(template, "claude-code")
    return out.relpath, out.text, out.reasons, out.notes


#: what becomes of each compaction, summary and retry setting ({settings}: the settings file, {hook}: the hook's line)
OWN_PROMPT = "Claude Code writes the summary with its own prompt; the hook can only add instructions"
LOSSES = (
    Row("compaction.enabled", "native", "{settings} env.DISABLE_AUTO_COMPACT", when=("disabled",)),
    Row("compaction.enabled", "native", "Claude Code compacts automatically by default", when=("enabled",)),
    Row("compaction.trigger", why="Claude Code decides when to compact by its model's window; its "
                                  "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE showed no effect on 2.1.328 here",
        when=("trigger",)),
    Row("compaction.reserve_tokens", why="Claude Code triggers at a share of the window; a reserve in tokens needs "
                                         "each model's window", when=("reserve",)),
    Row("compaction.keep_recent_tokens", why="Claude Code decides what it keeps itself"),
    Row("compaction.branch.reserve_tokens", why="Claude Code has no branch summaries"),
    Row("compaction.model_overrides", why="Claude Code's compaction settings are not per model", when=("per_model",)),
    Row("compaction.strategy", why="Claude Code always summarizes", when=("not_summarize",)),
    Row("compaction.pins", why="Claude Code has no pinned messages", when=("pins",)),
    Row("retry", why="Claude Code retries provider errors by its own policy"),
    Row("summary.instructions.initial", "extension", "{hook}", when=("summarizes",)),
    Row("summary.schema", "extension", "{hook} (inside the instructions)", when=("summarizes",)),
    Row("summary.system_prompt", why=OWN_PROMPT),
    Row("summary.instructions.update", why="Claude Code summarizes the whole conversation each time; the hook adds "
                                           "the initial instructions"),
    *own_summary("Claude Code"),
    *lost(OWN_PROMPT, "summary.labels", "summary.tags"),
    Row("summarizer", why="Claude Code summarizes with the session's model", when=("summarizer",)),
)


def _compaction(pipeline: "Pipeline", place: Place, pre: str, settings: str) -> tuple[
        list[OwnedFile], list[tuple[Key, Any]], list[Carried]]:
    """The settings keys and PreCompact hook of the profile's compaction, and its report (:data:`LOSSES`)."""
    profile = pipeline.profile
    comp = profile.compaction
    keys: list[tuple[Key, Any]] = []
    if comp.enabled is False:
        keys.append((("env", "DISABLE_AUTO_COMPACT"), "1"))
    files: list[OwnedFile] = []
    instructions = f"{pre}{INSTRUCTIONS}"
    if comp.strategy != "mask_tool_results":
        files.append(OwnedFile(instructions, summary_instructions(pipeline) + "\n"))
        keys.append((("hooks", "PreCompact"), precompact_hook(place, pre, INSTRUCTIONS, "CLAUDE_PROJECT_DIR")))
    hook = f"{settings} hooks.PreCompact prints {instructions}; Claude Code adds it to its summary request"
    return files, keys, carried(profile, LOSSES, settings=settings, hook=hook)
