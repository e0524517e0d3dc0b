"""The Kilo CLI target (checked on Kilo CLI 7.7.7, the pinned CLI of tests/agents; a fork of
opencode that reads the same kinds of files under ``.kilo/`` and ``kilo.json``).

* **The system prompt** (``system_prompt.base: agent``, the default): Kilo keeps its own
  prompt; the team's sections (:mod:`pipeline.export.static_prompt`) are
  ``.kilo/context-pipeline/instructions.md``, named in ``kilo.json`` ``instructions``: Kilo
  appends the file to its system message, beside the user's ``AGENTS.md``.
* With ``system_prompt.base: profile``: ``.kilo/context-pipeline/prompt.md``, every section
  rendered for a static file, named by ``kilo.json`` ``agent.code.prompt`` (``{file:...}``):
  Kilo sends it in place of its default agent's prompt, **after Kilo's own opening
  paragraph**, which stays (the report says so).
* A section holding the working directory is lost: Kilo states the directory in each user
  message (``<environment_details>``); the exported plugin's hook that writes it in for
  opencode was not tried on Kilo, so the export does not rely on it.
* **Templates**: ``.kilo/command/NAME.md`` in opencode's dialect (``$ARGUMENTS``, 1-based
  ``$N``, the highest taking the rest; slices and defaults lost per template).
* **Compaction**: ``kilo.json`` ``compaction.auto``, ``compaction.reserved``,
  ``compaction.preserve_recent_tokens``, ``compaction.prune``, as opencode's
  (:func:`pipeline.export.opencode.compaction_keys`). ``reserved`` moves Kilo's trigger only
  for a model whose input window Kilo knows (``limit.input``); the report notes it.
* **The summary request**: Kilo 7.7.7 summarizes the conversation in chunks with its own
  instructions, then sends one last request that merges the chunks' summaries. The
  profile's ``summary.system_prompt`` is ``kilo.json`` ``agent.compaction.prompt`` (its
  compaction agent's prompt: in every summary request, after Kilo's own opening paragraph);
  its initial instructions, the schema rendered in, are the last request's prompt, set by
  opencode's plugin (``.kilo/plugin/context-pipeline.js``, ``experimental.session.compacting``),
  which Kilo runs as opencode does. The other ``summary.*`` settings are lost.
* **The summary model**: a ``summarizer`` with a provider and a model becomes Kilo's
  ``compaction`` agent's model, ``kilo.json`` ``agent.compaction.model`` =
  ``context-pipeline-summarizer/MODEL`` (Kilo summarizes with that agent's model when it has
  one), with the provider ``provider.context-pipeline-summarizer`` written beside it: npm
  ``@ai-sdk/openai-compatible`` at the summarizer's ``base_url`` for ``openai`` (default
  ``https://api.openai.com/v1``), ``@ai-sdk/anthropic`` at ``base_url`` + ``/v1`` for
  ``anthropic``, its key read from ``api_key_env`` (``env``; not ``{env:...}``, which Kilo's
  config loader throws on in a file it does not mark trusted, as its binary shows). The other ``summarizer`` settings (output limit, reasoning,
  time limits, retries) are Kilo's own and reported lost.

``kilo.json`` is shared with the user and merged key by key. With ``--user-dir`` the root is
laid out as Kilo's config folder (``~/.config/kilo``): ``kilo.json``, ``command/``,
``context-pipeline/``.
"""

from __future__ import annotations

from typing import Any

from pipeline.export.base import Carried, Export, FolderTarget, Key, OwnedFile, Place, SharedJson
from pipeline.export.losses import Row, carried, lost, own_summary
from pipeline.export.opencode import PLUGIN, compaction_keys, plugin_files, translate_md
from pipeline.export.static_prompt import command_files, replaces_prompt, static_prompt, summary_instructions
from pipeline.llm.providers import PROVIDERS

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pipeline.facade import Pipeline

AGENT = "Kilo CLI"
DATA = "context-pipeline"
CONFIG = "kilo.json"
HOST = {
    "custom_prompt": "Kilo CLI has no prompt file of the user's to put in its place (agent.code.prompt is the "
                     "export's)",
    "append_prompt": "Kilo CLI appends the `instructions` files of kilo.json itself, after the prompt",
    "context_files": "Kilo CLI reads AGENTS.md itself and appends it after the prompt (`Instructions from: <path>`)",
    "skills": "Kilo CLI lists its skills itself, after the prompt (<available_skills>)",
}
CWD_WHY = ("the exported file is shared by every checkout, so it cannot hold the working directory; Kilo CLI "
           "states it in each user message (<environment_details>), not at system level")
RESERVE_NOTE = (" (Kilo CLI counts it only for a model whose input window it knows, limit.input; otherwise it "
                "compacts at the window less the model's output limit)")
#: the provider ``kilo.json`` names for the summarizer, and the AI SDK package of each of the profile's wires
SUMMARIZER = "context-pipeline-summarizer"
NPM = {"openai": "@ai-sdk/openai-compatible", "anthropic": "@ai-sdk/anthropic"}
#: what becomes of each summary setting ({config}: kilo.json, {hook}: the plugin's line)
LOSSES = (
    Row("summary.system_prompt", "native", "{config} agent.compaction.prompt (Kilo CLI's compaction agent: in every "
                                           "summary request, after Kilo's own opening paragraph)"),
    Row("summary.instructions.initial", "extension", "{hook}"),
    Row("summary.schema", "extension", "{hook}, inside the instructions"),
    Row("summary.instructions.update", why="the hook cannot tell a first summary from an update; it sets the initial "
                                           "instructions"),
    *own_summary(AGENT),
    *lost(f"{AGENT} serializes the conversation itself, in chunks it summarizes with its own instructions",
          "summary.labels", "summary.tags"),
)


class KiloTarget(FolderTarget):
    def build(self, pipeline: "Pipeline", place: Place, pre: str) -> Export:
        files, keys, report = _prompt(pipeline, place, pre)
        commands, template_lines = command_files(pipeline, place, f"{pre}command", _translate, "kilo")
        compaction, lines = compaction_keys(pipeline, CONFIG, AGENT, RESERVE_NOTE)
        system, prompt, summary = _summary(pipeline, pre)
        model, summarizer = summarizer_keys(pipeline)
        return Export(self.name, tuple(files + commands + plugin_files(pre, None, prompt)),
                      (SharedJson(CONFIG, tuple(keys + compaction + system + model)),),
                      tuple(report + template_lines + lines + summary + summarizer))


TARGET = KiloTarget("kilo", "Kilo CLI 7.7.7", ".kilo/")


def _translate(template) -> tuple:
    """opencode's command file, which Kilo CLI reads as opencode does; Kilo's name in the report."""
    relpath, text, reasons, notes = translate_md(template)
    return relpath, text, tuple(r.replace("opencode", AGENT) for r in reasons), tuple(
        n.replace("opencode", AGENT) for n in notes)


def _prompt(pipeline: "Pipeline", place: Place, pre: str) -> tuple[list[OwnedFile], list[tuple[Key, Any]],
                                                                     list[Carried]]:
    """The agent prompt after Kilo's opening (``base: profile``), else the team's instructions file."""
    if replaces_prompt(pipeline):
        where = f"{pre}{DATA}/prompt.md"
        prompt = static_prompt(pipeline, where, HOST, CWD_WHY, AGENT)
        head = Carried("system_prompt", "native", f"{where}, named by {CONFIG} agent.code.prompt (Kilo CLI's default "
                                                  "agent; Kilo's own opening paragraph stays before it, its "
                                                  "environment, AGENTS.md and skills after it)")
        return ([OwnedFile(where, prompt.text + "\n")], [(("agent", "code", "prompt"), "{file:./" + where + "}")],
                [head, *prompt.report])
    where = f"{pre}{DATA}/instructions.md"
    prompt = static_prompt(pipeline, where, HOST, CWD_WHY, AGENT)
    head = Carried("system_prompt", "own", "Kilo CLI's own prompt" + (
        f"; the team's sections in {where}, named by {CONFIG} instructions (Kilo CLI appends it to its system "
        "message)" if prompt.text else ""))
    if not prompt.text:
        return [], [], [head, *prompt.report]
    named = f"{place.root}/{where}" if place.user else where
    return [OwnedFile(where, prompt.text + "\n")], [(("instructions",), [named])], [head, *prompt.report]


def _summary(pipeline: "Pipeline", pre: str) -> tuple[list[tuple[Key, Any]], str, list[Carried]]:
    """``agent.compaction.prompt``, the prompt the plugin sets, and their report (:data:`LOSSES`)."""
    hook = (f"{pre}{PLUGIN} (experimental.session.compacting sets the prompt of Kilo CLI's last summary request, "
            "which merges the summaries of the conversation's chunks; the chunks are summarized with Kilo's own "
            "instructions)")
    system = pipeline.profile.summary.system_prompt.render()
    return ([(("agent", "compaction", "prompt"), system)], summary_instructions(pipeline),
            carried(pipeline.profile, LOSSES, config=CONFIG, hook=hook))


def summarizer_keys(pipeline: "Pipeline") -> tuple[list[tuple[Key, Any]], list[Carried]]:
    """``agent.compaction.model`` and the provider it names, for a summarizer with a model."""
    summarizer = pipeline.profile.summarizer
    if summarizer.provider == "offline":
        return [], []
    if not summarizer.model:
        return [], [Carried("summarizer", "lost", why="the profile names no summarizer model, so Kilo CLI "
                                                      "summarizes with the session's model")]
    known = PROVIDERS[summarizer.provider]
    base = (summarizer.base_url or known.base_url).rstrip("/")
    url = base + "/v1" if summarizer.provider == "anthropic" else base
    key = summarizer.api_key_env or known.key_env
    entry = {"name": "context-pipeline summarizer", "npm": NPM[summarizer.provider], "env": [key],
             "options": {"baseURL": url}, "models": {summarizer.model: {}}}
    ref = f"{SUMMARIZER}/{summarizer.model}"
    where = (f"{CONFIG} agent.compaction.model ({ref}: Kilo CLI's compaction agent sends its summary request to "
             f"this model), provider.{SUMMARIZER} ({entry['npm']} at {url}, key from ${key})")
    return ([(("provider", SUMMARIZER), entry), (("agent", "compaction", "model"), ref)],
            [Carried("summarizer.model", "native", where),
             Carried("summarizer", "lost", why="Kilo CLI takes the summary model (its provider, base URL and key "
                                               "variable) from the profile; the output limit, reasoning, time "
                                               "limits and retries of the summary call are its own")])
