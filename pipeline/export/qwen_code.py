"""The Qwen Code target (checked on Qwen Code 0.24.4, the pinned CLI of tests/agents; a fork of
Gemini CLI that reads the same kinds of files under ``.qwen/``).

* **The system prompt** (``system_prompt.base: agent``, the default): Qwen Code keeps its own
  prompt; the team's sections (:mod:`pipeline.export.static_prompt`) are a marked block of
  the project's ``QWEN.md`` (:class:`~pipeline.export.base.SharedBlock`: the user's lines
  around it stay), which Qwen Code appends to the end of its system message
  (``--- Context from: QWEN.md ---``).
* With ``system_prompt.base: profile``: ``.qwen/system.md`` holds every section rendered for a
  static file and ``.qwen/.env`` sets ``QWEN_SYSTEM_MD=true``: the file's text replaces Qwen
  Code's whole prompt (its QWEN.md and AGENTS.md still follow it). With ``--user-dir`` the
  variable holds the file's absolute path.
* **Templates**: ``.qwen/commands/NAME.toml`` in Gemini CLI's dialect (``prompt``,
  ``description``); Qwen Code's only placeholder is ``{{args}}``, the arguments as typed:
  pi's ``$@``/``$ARGUMENTS`` become it, a template with a positional ``$N``, a slice or a
  default is not written and is reported lost.
* **Compaction**: ``.qwen/settings.json`` ``context.autoCompactThreshold`` (a fraction of the
  window) for a share-of-window trigger. Qwen Code has no keep-recent or reserve key.
* **The summary request**: Qwen Code's own, with the profile's initial instructions (the
  schema rendered in) added by a ``PreCompact`` hook of ``.qwen/settings.json``: the hook
  prints ``.qwen/context-pipeline/precompact.json``, whose
  ``hookSpecificOutput.additionalContext`` Qwen Code 0.24.4 appends to its summary prompt
  (``Additional Instructions:``), keeping its first :data:`HOOK_LIMIT` characters; longer
  instructions are not exported and are reported lost. The user's own ``PreCompact`` hooks
  stay beside the export's. Project hooks run only in a folder Qwen Code trusts.
"""

from __future__ import annotations

import json
from typing import Any

from pipeline.export.base import Carried, Key, OwnedFile, Place
from pipeline.export.gemini import GeminiTarget, MemoryFiles
from pipeline.export.losses import Row, summary_lost
from pipeline.export.static_prompt import precompact_hook, summary_instructions

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pipeline.facade import Pipeline

AGENT = "Qwen Code"
HOST = {
    "custom_prompt": "Qwen Code has no prompt file of the user's beside system.md (the export writes that one)",
    "append_prompt": "Qwen Code has no appended prompt",
    "context_files": "Qwen Code appends QWEN.md and AGENTS.md to its system message itself, in its own layout "
                     "(--- Context from: ... ---)",
    "skills": "Qwen Code lists its skills itself (its skill tool)",
}
CWD_WHY = ("the exported file is shared by every checkout, so it cannot hold the working directory; Qwen Code "
           "states it in its first user message (<system-reminder>)")
FIXED = "Qwen Code's summary prompt is fixed (a PreCompact hook may only add to it)"
#: the characters of a PreCompact hook's instructions Qwen Code 0.24.4 keeps (MAX_HOOK_INSTRUCTIONS_CHARS)
HOOK_LIMIT = 4000
HOOK_FILE = "context-pipeline/precompact.json"
QWEN = MemoryFiles(AGENT, "QWEN.md", "QWEN_SYSTEM_MD", "Qwen Code's own system prompt",
                   "Qwen Code appends it to its system message",
                   "Qwen Code sends it as its system message, in place of its own prompt", HOST, CWD_WHY)


#: what becomes of each compaction, summary and retry setting ({settings}: the settings file)
LOSSES = (
    Row("compaction.trigger", "native", "{settings} context.autoCompactThreshold (Qwen Code compacts at the smaller "
                                        "of that share and the window less 33,000 tokens)", when=("percent",)),
    Row("compaction.trigger", why="Qwen Code compacts at a share of the window only", when=("other_trigger",)),
    Row("compaction.reserve_tokens", why="Qwen Code compacts at a share of the window; a reserve in tokens needs each "
                                         "model's window", when=("reserve",)),
    Row("compaction.enabled", "native", "Qwen Code compacts by default", when=("enabled",)),
    Row("compaction.enabled", why="Qwen Code has no setting that turns compaction off", when=("disabled",)),
    Row("compaction.keep_recent_tokens", why="Qwen Code has no keep-recent setting (model.chatCompression tunes only "
                                             "the files and images it keeps)"),
    Row("compaction.branch.reserve_tokens", why="Qwen Code has no branch summaries"),
    Row("retry", why="Qwen Code retries provider errors by its own policy"),
    Row("compaction.model_overrides", why="Qwen Code's compaction settings are not per model", when=("per_model",)),
    Row("compaction.strategy", why="Qwen Code always summarizes", when=("not_summarize",)),
    Row("compaction.pins", why="Qwen Code has no pinned messages", when=("pins",)),
    *summary_lost(FIXED, ("system_prompt", "instructions.update", "instructions.turn_prefix", "instructions.branch",
                          "branch_schema", "on_schema_violation", "validity", "labels", "tags")),
    Row("summarizer", why="not exported (Qwen Code summarizes with the session's model)", when=("summarizer",)),
)


class QwenCodeTarget(GeminiTarget):
    """Gemini CLI's export, with Qwen Code's memory file, threshold key and table."""

    memory = QWEN
    threshold: Key = ("context", "autoCompactThreshold")
    table = LOSSES
    extend: tuple[Key, ...] = (("hooks", "PreCompact"),)  # the user's own PreCompact hooks stay beside the export's

    def summary_hook(self, pipeline: "Pipeline", place: Place, pre: str) -> tuple[
            list[OwnedFile], list[tuple[Key, Any]], list[Carried]]:
        return _precompact(pipeline, place, pre)


TARGET = QwenCodeTarget("qwen-code", "Qwen Code 0.24.4", ".qwen/")


def _precompact(pipeline: "Pipeline", place: Place, pre: str) -> tuple[list[OwnedFile], list[tuple[Key, Any]],
                                                                      list[Carried]]:
    """The PreCompact hook that adds the profile's initial instructions to Qwen Code's summary
    request, the file it prints, and the report of the instructions and the schema."""
    instructions = summary_instructions(pipeline)
    keys = ("summary.instructions.initial", "summary.schema")
    if pipeline.profile.compaction.strategy == "mask_tool_results":
        return [], [], [Carried(k, "lost", why="the profile masks tool results: it asks for no summary") for k in keys]
    if len(instructions) > HOOK_LIMIT:
        why = (f"the instructions are {len(instructions)} characters; Qwen Code keeps the first {HOOK_LIMIT} of a "
               "PreCompact hook's, so the export writes no hook")
        return [], [], [Carried(k, "lost", why=why) for k in keys]
    where = f"{pre}{HOOK_FILE}"
    output = {"hookSpecificOutput": {"hookEventName": "PreCompact", "additionalContext": instructions}}
    hook = precompact_hook(place, pre, HOOK_FILE, "QWEN_PROJECT_DIR")
    what = (f"{pre}settings.json hooks.PreCompact prints {where}; Qwen Code adds it to its summary prompt "
            "(Additional Instructions)")
    return ([OwnedFile(where, json.dumps(output, indent=1, ensure_ascii=False) + "\n")], [(("hooks", "PreCompact"), hook)],
            [Carried("summary.instructions.initial", "extension", what),
             Carried("summary.schema", "extension", what + ", inside the instructions")])
