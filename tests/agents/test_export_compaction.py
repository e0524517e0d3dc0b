"""The extension's JavaScript compaction half against the Python one, field by field (pinned Node 22).

As test_export_renderer.py does for the prompt, this drives the exported extension
(`index.js` beside the `profile.json` the export wrote) under Node, with pi 1.6's own
package resolved for it (`shouldCompact`, `convertToLlm`), and compares with the Python
compaction for the same profile:

* **when to compact**: for a grid of windows, models and context sizes, pi's own
  `shouldCompact` on the settings pi's `SettingsManager` reads for the model from the
  `settings.json` the export wrote, then the extension's
  `session_before_compact` answer (held back below the profile's trigger, or a summary),
  equal to `pipeline.compaction.triggers.fires` on the model's settings; the reserve and
  keep-recent tokens pi reads for the model (or the extension's `threshold`) equal the
  profile's;
* **what the summary asks**: the extension's calls to the model (system prompt, user
  text, output budget) for a first summary with an answer refused by `summary.validity`
  and one lacking the schema's headings, an update with custom instructions, and split
  turns with and without history, equal to the requests `summarize_plan` makes with the
  same answers; and the summary text written, file lists included.

The cut point is pi's (the extension receives `preparation.firstKeptEntryId` and passes it
on), so it is not compared here. No skip: a missing npm fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline import compile_profile
from pipeline.cli import main
from pipeline.compaction.fileops import CollectedFiles
from pipeline.compaction.plan import CompactionPlan, PlannedMessage
from pipeline.compaction.requests import RequestContext
from pipeline.compaction.summarize import summarize_plan
from pipeline.compaction.triggers import fires
from pipeline.llm.types import Completion
from pipeline.session.entries import parse_entry
from pipeline.session.messages import Usage
from pipeline.model.run_plan import ContextTexts

sys.path.insert(0, str(Path(__file__).resolve().parent))
from npm_install import AgentInstallError, install, node_bin  # noqa: E402

#: profiles beyond the shipped ones: a trigger of the profile's own, per model too, with
#: changed transcript words and budgets; a share of the window with pi's rule for one model
OWN = """extends: builtin:default
name: own
compaction:
  trigger: {tokens: 50000}
  keep_recent_tokens: 12000
  tool_result_max_chars: 40
  summary_budget: {history: 0.5, turn_prefix: 0.25}
  model_overrides:
    loop/big: {trigger: {percent_of_window: 50}, reserve_tokens: 7000, keep_recent_tokens: 3000}
summary:
  serialize_thinking: false
  labels: {user: "U: ", assistant: "A: ", tool_result: "R: "}
  tags: {conversation: talk, read_files: seen}
"""
PERCENT = """extends: builtin:default
name: percent
compaction:
  trigger: {percent_of_window: 80}
  model_overrides:
    loop/m: {reserve_tokens: 9000, keep_recent_tokens: 6000}
"""
#: pi's rule, per model too (written natively: pi's preparation carries the model's settings)
NATIVE = """extends: builtin:default
name: native
compaction:
  model_overrides:
    loop/m: {reserve_tokens: 9000, keep_recent_tokens: 5000}
"""
OFF = "extends: builtin:pi-1\nname: off\ncompaction:\n  enabled: false\n"
PROFILES = {"builtin:default": None, "builtin:pi-1": None, "builtin:examples/compaction-policy": None,
            "own": OWN, "percent": PERCENT, "native": NATIVE, "off": OFF}
MODELS = [{"provider": "loop", "id": "m", "contextWindow": 100_000, "maxTokens": 10_000},
          {"provider": "loop", "id": "big", "contextWindow": 200_000, "maxTokens": 30_000},
          {"provider": "other", "id": "x", "contextWindow": 32_768, "maxTokens": 1000}]
WINDOWS = [0, 32_768, 100_000, 200_000]
TOKENS = [0, 20_000, 49_999, 50_001, 80_000, 80_001, 90_000, 99_000, 150_000, 190_000]


def _message(role: str, n: int, **more) -> dict:
    return {"role": role, "timestamp": n, **more}


def _conversation() -> dict[str, list[dict]]:
    usage = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
    assistant = {"api": "openai-completions", "provider": "loop", "model": "m", "usage": usage, "stopReason": "toolUse"}
    history = [
        _message("user", 1, content=[{"type": "text", "text": "Fix the parser in src/p.py, please."}]),
        _message("assistant", 2, content=[{"type": "thinking", "thinking": "Read it first."},
                                          {"type": "text", "text": "Reading the parser."},
                                          {"type": "toolCall", "id": "c1", "name": "read",
                                           "arguments": {"path": "src/p.py", "limit": 40}}], **assistant),
        _message("toolResult", 3, toolCallId="c1", toolName="read", isError=False,
                 content=[{"type": "text", "text": "def parse(text):\n    " + "return text.split()  # " * 6}]),
        _message("user", 4, content="And keep the <tests> green & fast."),
    ]
    prefix = [
        _message("user", 5, content=[{"type": "text", "text": "Now rename parse to read_all."}]),
        _message("assistant", 6, content=[{"type": "text", "text": "Renaming."},
                                          {"type": "toolCall", "id": "c2", "name": "edit",
                                           "arguments": {"path": "src/p.py"}}], **assistant),
        _message("toolResult", 7, toolCallId="c2", toolName="edit", isError=False,
                 content=[{"type": "text", "text": "edited"}]),
    ]
    return {"history": history, "prefix": prefix}


FILES = {"read": ["src/p.py", "README.md"], "written": ["src/new.py"], "edited": ["src/p.py"]}


def _scenarios(headings: list[str]) -> list[dict]:
    """Each: pi's preparation, custom instructions and the model's answers in order."""
    whole = "\n".join(f"{h}\nsomething" for h in headings) or "A summary."
    conv = _conversation()
    base = {"previousSummary": None, "isSplitTurn": False, "turnPrefixMessages": [], "fileOps": FILES,
            "firstKeptEntryId": "k1", "tokensBefore": 1234}
    return [
        {"prep": {**base, "messagesToSummarize": conv["history"]}, "custom": None,
         "answers": [("cut sh", "length"), ("no headings here", "stop"), (whole, "stop")]},
        {"prep": {**base, "messagesToSummarize": conv["history"], "previousSummary": "## Goal\nold"},
         "custom": "Mention the tests.", "answers": [(whole, "stop")]},
        {"prep": {**base, "messagesToSummarize": conv["history"], "isSplitTurn": True,
                  "turnPrefixMessages": conv["prefix"]}, "custom": "Be brief.",
         "answers": [(whole, "stop"), ("The rename started.", "stop")]},
        {"prep": {**base, "messagesToSummarize": [], "isSplitTurn": True, "turnPrefixMessages": conv["prefix"],
                  "fileOps": {"read": [], "written": [], "edited": []}}, "custom": None,
         "answers": [("The rename started.", "stop")]},
    ]


DRIVER = """
import { readFileSync } from "node:fs";
import { SettingsManager, shouldCompact } from "@earendil-works/pi-coding-agent";
const input = JSON.parse(readFileSync(process.argv[2], "utf8"));
const read = (path) => JSON.parse(readFileSync(path, "utf8"));


function registry(answers, calls) {
  return { complete: async (model, context, options) => {
    calls.push({ system: context.systemPrompt, user: context.messages[0].content[0].text, maxTokens: options.maxTokens });
    const [text, stopReason] = answers[Math.min(calls.length - 1, answers.length - 1)];
    return { content: [{ type: "text", text }], stopReason, usage: { input: 1, output: 1 } };
  } };
}

const session = { getBranch: () => [] };

async function drive({ dir, scenarios }) {  // one export: its extension, as pi loads it from dir/.pi/extensions/context-pipeline/
  const ext = `${dir}/.pi/extensions/context-pipeline`;
  const { default: extension, compactionOf, threshold } = await import(`file://${ext}/index.js`);
  const manager = SettingsManager.inMemory(read(`${dir}/.pi/settings.json`));  // pi's own reading of the written file
  const forModel = (model) => manager.getCompactionSettings(model);
  const compiled = read(`${ext}/profile.json`);
  const handlers = {};
  extension({ on: (name, fn) => { handlers[name] = fn; }, appendEntry: () => {} });
  const out = { decisions: [], settings: [], summaries: [] };
  for (const model of input.models) {
    const key = `${model.provider}/${model.id}`;
    const s = forModel(model);
    out.settings.push({ key, ...s, threshold: compiled.trigger ? threshold(model.contextWindow, key) : null,
                        masked: compiled.masking && compiled.masking.rule ? threshold(model.contextWindow, key, compiled.masking.rule) : null });
    for (const window of input.windows) {
      for (const tokens of input.tokens) {
        let verdict = false;
        if (shouldCompact(tokens, window, s)) {  // pi asks; the extension answers
          const ctx = { model: { ...model, contextWindow: window }, modelRegistry: registry([["x", "stop"]], []), sessionManager: session };
          const preparation = { tokensBefore: tokens, messagesToSummarize: [], turnPrefixMessages: [], isSplitTurn: false,
                                fileOps: null, firstKeptEntryId: "k", settings: s };
          const answer = await handlers.session_before_compact({ reason: "threshold", preparation }, ctx);
          verdict = !(answer && answer.cancel);
        }
        out.decisions.push({ key, window, tokens, compacts: verdict });
      }
    }
  }
  const model = input.models[0];
  for (const sc of scenarios) {
    const calls = [];
    const ctx = { model, modelRegistry: registry(sc.answers, calls), sessionManager: session };
    const preparation = { ...sc.prep, settings: forModel(model) };
    // the summary half itself (hybrid calls it once the masked context is still over its trigger)
    const done = await compactionOf({ reason: "manual", preparation, customInstructions: sc.custom ?? undefined }, ctx);
    out.summaries.push({ calls, summary: done.compaction.summary, firstKept: done.compaction.firstKeptEntryId });
  }
  return out;
}

const results = {};
for (const [name, p] of Object.entries(input.profiles)) results[name] = await drive(p);
process.stdout.write(JSON.stringify(results));
"""


@pytest.fixture(scope="module")
def node() -> str:
    try:
        install("pi")
        return str(node_bin() / "node")
    except AgentInstallError as err:
        pytest.fail(f"pi 1.6 or the pinned Node 22 could not be installed: {err}")


def _headings(project: Path) -> list[str]:
    return json.loads((project / ".pi/extensions/context-pipeline/profile.json").read_text())["summary"][
        "required_headings"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory, node) -> dict:
    """Every profile exported into a project of its own, and what its extension did (one Node run)."""
    root = tmp_path_factory.mktemp("exports")
    (root / "node_modules").mkdir()
    os.symlink(install("pi").parent / "@earendil-works", root / "node_modules" / "@earendil-works")
    profiles = {}
    for i, name in enumerate(PROFILES):
        project = root / f"p{i}"
        project.mkdir()
        profile = _profile(root, name)
        assert main(["export", "pi", profile, "--project", str(project)]) == 0
        profiles[name] = {"dir": str(project), "profile": profile, "scenarios": _scenarios(_headings(project))}
    script, data = root / "drive.mjs", root / "input.json"
    script.write_text(DRIVER)
    data.write_text(json.dumps({"models": MODELS, "windows": WINDOWS, "tokens": TOKENS, "profiles": profiles}))
    done = subprocess.run([node, str(script), str(data)], capture_output=True, text=True, timeout=120, cwd=root)
    assert done.returncode == 0, done.stderr
    return {"profiles": profiles, "js": json.loads(done.stdout)}


class _Answers:
    """The model's answers, in order, as the extension's model registry gave them; the requests it was sent."""

    provider = "loop"

    def __init__(self, answers: list) -> None:
        self.answers, self.calls = answers, []

    def build_body(self, request):  # pragma: no cover - not called by summarize_plan
        return {}

    def complete(self, request):
        self.calls.append({"system": request.system_prompt, "user": request.user_text, "maxTokens": request.max_tokens})
        text, stop = self.answers[min(len(self.calls), len(self.answers)) - 1]
        return Completion(text, Usage(1, 1), stop, "m", "loop")


def _planned(messages: list[dict], first: int) -> tuple[PlannedMessage, ...]:
    return tuple(PlannedMessage(parse_entry({"type": "message", "id": f"e{first + i}", "parentId": None,
                                             "timestamp": "2026-01-01T00:00:00.000Z", "message": m}))
                 for i, m in enumerate(messages))


def _python_summary(pipeline, scenario: dict) -> dict:
    prep, model = scenario["prep"], MODELS[0]
    settings = pipeline.profile.compaction.for_model(model["provider"], model["id"])
    plan = CompactionPlan(
        first_kept_entry_id=prep["firstKeptEntryId"], first_kept_index=0, is_split_turn=prep["isSplitTurn"],
        turn_start_index=0, tokens_before=prep["tokensBefore"], previous_summary=prep["previousSummary"],
        previous_compaction_index=-1, summarize=_planned(prep["messagesToSummarize"], 0),
        turn_prefix=_planned(prep["turnPrefixMessages"], 100), files=CollectedFiles(**{
            k: tuple(v) for k, v in prep["fileOps"].items()}), settings=settings)
    ctx = RequestContext(pipeline.profile.summary, settings, max_output_tokens=model["maxTokens"])
    client = _Answers(scenario["answers"])
    done = summarize_plan(plan, client, ctx, ContextTexts.from_profile(pipeline.profile),
                          custom_instructions=scenario["custom"])
    return {"calls": client.calls, "summary": done.summary, "firstKept": done.first_kept_entry_id}


def _profile(tmp_path: Path, name: str) -> str:
    text = PROFILES[name]
    if text is None:
        return name
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("name", list(PROFILES))
def test_the_extension_compacts_as_python_does(exported, name):
    project = exported["profiles"][name]
    pipeline = compile_profile(project["profile"])
    js = exported["js"][name]
    comp = pipeline.profile.compaction

    for got in js["settings"]:
        ours = comp.for_model(*got["key"].split("/", 1))
        assert got["enabled"] == ours.enabled and got["keepRecentTokens"] == ours.keep_recent_tokens, got
        window = next(m["contextWindow"] for m in MODELS if f"{m['provider']}/{m['id']}" == got["key"])
        if got["threshold"] is None:  # pi's own rule on the numbers it reads
            assert window - got["reserveTokens"] == ours.threshold(window), got
        else:
            assert got["threshold"] == ours.threshold(window), got
        if got["masked"] is not None:
            assert got["masked"] == ours.threshold(window), got

    assert len(js["decisions"]) == len(MODELS) * len(WINDOWS) * len(TOKENS)
    for got in js["decisions"]:
        ours = comp.for_model(*got["key"].split("/", 1))
        assert got["compacts"] == fires(got["tokens"], got["window"], ours), got
    assert any(d["compacts"] for d in js["decisions"]) == comp.enabled
    assert any(not d["compacts"] for d in js["decisions"])

    for scenario, got in zip(project["scenarios"], js["summaries"], strict=True):
        want = _python_summary(pipeline, scenario)
        assert len(got["calls"]) == len(want["calls"]), (scenario["prep"]["isSplitTurn"], got["calls"])
        for js_call, py_call in zip(got["calls"], want["calls"]):
            for field in ("system", "user", "maxTokens"):
                assert js_call[field] == py_call[field], field
        assert got["summary"] == want["summary"]
        assert got["firstKept"] == want["firstKept"]
