"""The GitHub Copilot CLI target (checked on Copilot CLI 1.0.102, the pinned CLI of tests/agents).

* **The system prompt**: Copilot's own prompt cannot be replaced (no file, key or variable
  does it), so ``system_prompt.base: profile`` is reported lost and the sections are rendered
  as for ``base: agent``. The team's sections (:mod:`pipeline.export.static_prompt`) are
  ``.github/instructions/context-pipeline.instructions.md``, an owned file Copilot appends
  to its system message as it is (a file without front matter applies everywhere), after
  its own prompt and beside ``AGENTS.md`` and ``.github/copilot-instructions.md``, which
  stay the user's.
* **Templates are lost**: Copilot has no commands with arguments; ``/NAME args`` reaches the
  model as typed, and a command or skill file is a skill the model loads by name, its
  placeholders not substituted.
* **Compaction is lost**: Copilot compacts by itself and has no setting for it.

With ``--user-dir`` the root is laid out as ``$COPILOT_HOME`` (``~/.copilot``):
``instructions/context-pipeline.instructions.md``.
"""

from __future__ import annotations

from pipeline.export.base import Carried, Export, FolderTarget, OwnedFile, Place
from pipeline.export.static_prompt import replaces_prompt, static_prompt, templates_lost

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pipeline.facade import Pipeline

AGENT = "Copilot CLI"
FILE = "instructions/context-pipeline.instructions.md"
HOST = {
    "custom_prompt": "Copilot CLI's own prompt cannot be replaced, and it has no prompt file of the user's",
    "append_prompt": "Copilot CLI appends its instruction files itself (.github/copilot-instructions.md, "
                     ".github/instructions/*.instructions.md)",
    "context_files": "Copilot CLI reads AGENTS.md and its instruction files itself (<custom_instruction>)",
    "skills": "Copilot CLI lists its skills itself (<available_skills>)",
}
CWD_WHY = ("the exported file is shared by every checkout, so it cannot hold the working directory; Copilot CLI "
           "states it in its own <session_context>")
LOST = (
    ("system_prompt.base", "Copilot CLI's own prompt cannot be replaced (no file, key or variable does it): the "
                           "sections are appended after it"),
    ("compaction", "Copilot CLI compacts by itself and has no setting for it (`copilot help config` lists none)"),
    ("summary", "Copilot CLI writes its summary request itself"),
    ("summarizer", "Copilot CLI summarizes with the session's model"),
    ("retry", "Copilot CLI retries provider errors by its own policy"),
)
NO_COMMANDS = ("Copilot CLI has no commands with arguments: `/NAME args` reaches the model as typed, and a command "
               "or skill file becomes a skill the model loads by name, its placeholders not substituted")


class CopilotTarget(FolderTarget):
    def build(self, pipeline: "Pipeline", place: Place, pre: str) -> Export:
        where = pre + FILE
        prompt = static_prompt(pipeline, where, HOST, CWD_WHY, AGENT, replaces=False)
        head = Carried("system_prompt", "own", "Copilot CLI's own prompt" + (
            f"; the team's sections in {where} (Copilot CLI appends it to its system message)"
            if prompt.text else ""))
        report = [head, *prompt.report]
        report += templates_lost(pipeline, place, NO_COMMANDS)
        report += [Carried(key, "lost", why=why) for key, why in LOST
                   if key != "system_prompt.base" or replaces_prompt(pipeline)]
        files = (OwnedFile(where, prompt.text + "\n"),) if prompt.text else ()
        return Export(self.name, files, (), tuple(report))


TARGET = CopilotTarget("copilot", "GitHub Copilot CLI 1.0.102", ".github/")
