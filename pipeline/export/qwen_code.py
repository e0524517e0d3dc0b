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
  window) for a share-of-window trigger. Qwen Code's summary prompt is fixed and it has no
  keep-recent or reserve key.
"""

from __future__ import annotations

from pipeline.export.base import Key
from pipeline.export.gemini import GeminiTarget, MemoryFiles
from pipeline.export.losses import Row, summary_lost

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
    *summary_lost(FIXED),
    Row("summarizer", why="not exported (Qwen Code summarizes with the session's model)", when=("summarizer",)),
)


class QwenCodeTarget(GeminiTarget):
    """Gemini CLI's export, with Qwen Code's memory file, threshold key and table."""

    memory = QWEN
    threshold: Key = ("context", "autoCompactThreshold")
    table = LOSSES


TARGET = QwenCodeTarget("qwen-code", "Qwen Code 0.24.4", ".qwen/")
