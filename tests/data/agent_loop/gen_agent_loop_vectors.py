#!/usr/bin/env python3
"""Generate the agent-loop differential vectors from pi 0.84.0's own ``AgentSession``.

Needs the pi oracle (its directory in ``$PI_ORACLE`` or ``--oracle DIR``); the tests do not.

    python tests/data/agent_loop/gen_agent_loop_vectors.py --oracle DIR          # (re)write vectors
    python tests/data/agent_loop/gen_agent_loop_vectors.py --oracle DIR --check  # regenerate, compare

Each scenario is one ``agent_request`` (or a chain of them on the same session, for tools
or the model changing between runs): pi's real agent loop with scripted model replies, pi's
real tools executing on a fixture project written by the request itself (``writeFiles``),
a pinned clock (``now``) and pi's seeded ids. One ``<name>.json`` per scenario holds the
request (input, settings, tools, scripted replies, model) and pi's output: every request pi
sent to the model, the compaction / retry events, the entries appended.

pi's sentences are kept out of the files: an agent request's system prompt is pi's base
prompt (recorded as its data-driven inputs, from ``agent_system_prompt``, plus a sha256) or
one of our override strings (verbatim); tool definitions keep their names and parameter
schemas without descriptions; a summary request keeps the serialized conversation (and
previous summary) it carried, the instructions around them only as a sha256.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SESSIONS = ROOT / "tests" / "data" / "sessions" / "real"
BASE_DIR = "/srv/ctxp-agent-loop"
NOW = "2026-08-20T10:00:00Z"
PACKAGE_DIR = "/opt/pi"
SUMMARY = ["SUMMARY-H", "SUMMARY-P"]
QUICK_RETRY = {"retry": {"baseDelayMs": 1}}
OVERFLOW = {"stopReason": "error", "errorMessage": "prompt is too long: 213456 tokens > 200000 maximum"}
OVERFLOW_OPENAI = {"stopReason": "error", "errorMessage":
                   "400 This model's maximum context length is 128000 tokens. However, your messages resulted "
                   "in 130000 tokens. Please reduce the length of the messages."}
BIG = {"totalTokens": 190000}  # above 200000 - 16384 (pi's default threshold)

#: Every category a scenario can prove; the light test checks each is covered.
CATEGORIES = {
    "tool-single": "one tool call, its result, the final answer",
    "tool-parallel": "several tool calls in one reply, results in call order",
    "tool-multistep": "a chain of tool-call replies before the answer",
    "tool-error": "a tool that fails (missing file, bad arguments, unknown tool) gives an error result",
    "threshold-compaction": "usage above window - reserve after a run: compaction, no retry",
    "threshold-before-prompt": "the check before a new prompt compacts a session that ended above the threshold",
    "overflow-recovery": "a context-overflow error: the reply leaves the context, compaction, one retry",
    "overflow-twice": "a second overflow for the same input: failure (or pi's stale-retry rule)",
    "length-stop": "a reply stopped by the output limit",
    "transient-retry": "retryable provider errors: auto-retry with backoff, success or exhaustion",
    "aborted": "an aborted reply: recorded, no retry, no compaction",
    "per-turn-override": "before_agent_start systemPrompt/message applies to every request of the run",
    "tools-changed": "the active tools change between runs: tool list and system prompt rebuilt",
    "template": "a prompt template expanded from the typed input (unknown /name unchanged)",
    "skill": "/skill:name args expanded from the skill file",
    "queued-messages": "compaction with queued messages (documented as not expressible; see README)",
    "model-switch": "another model answers next: its usage and the other model's are told apart",
    "multi-turn": "several prompts in one session",
    "session-file": "a run continuing one of the shared real session files",
    "fresh-session": "a run on a new in-memory session",
}

#: Categories the oracle cannot drive, and why (the light test accepts these without a scenario).
NOT_EXPRESSIBLE = {
    "queued-messages": "agent_request awaits each prompt() before the next input and exposes neither steer() nor "
                       "followUp(), so no message is ever queued while a run (or its compaction) is in flight",
}

FIXTURE = {
    "README.md": "# demo\n\nA tiny fixture project for agent-loop vectors.\n",
    "notes.txt": "alpha\nbeta\ngamma\n",
    "src/app.py": "def greet(name):\n    return 'hello ' + name\n",
    "src/util.py": "def add(a, b):\n    return a + b\n",
    "AGENTS.md": "Answer in one short paragraph.\n",
    ".pi/prompts/fix.md": "---\ndescription: Fix a file\nargument-hint: <file> [focus...]\n---\n"
                          "Fix $1. Focus: ${@:2}. Default: ${3:-none}\n",
    ".pi/prompts/hello.md": "Say hello to ${1:-everyone}.\n",
    ".pi/skills/lint/SKILL.md": "---\nname: lint\ndescription: Lint the given files\n---\n"
                                "# Lint\n\nRun the project's linter on the files named.\n",
}


def call(name: str, **arguments: Any) -> dict:
    return {"name": name, "arguments": arguments}


def tools(*calls: dict, usage: dict | None = None, text: str | None = None) -> dict:
    reply: dict[str, Any] = {"toolCalls": list(calls)}
    if usage:
        reply["usage"] = usage
    if text is not None:
        reply["text"] = text
    return reply


def err(message: str, **usage: int) -> dict:
    return {"stopReason": "error", "errorMessage": message, **({"usage": usage} if usage else {})}


# Scenario spec keys: name, categories, about, and request fields (session = a real session
# file name or None for in-memory, leafId, input, agent (replies), settings, pi, model,
# tools, hooks, thinkingLevel); "steps": [spec, ...] runs a chain on the same session.
SCENARIOS: list[dict] = [
    # ---------------------------------------------------------------- tool calls
    {"name": "tool-read", "categories": ["tool-single", "session-file"],
     "about": "one read call on the fixture, then the answer",
     "agent": [tools(call("read", path="notes.txt")), "it lists three words"]},
    {"name": "tool-read-fresh", "categories": ["tool-single", "fresh-session"], "session": None,
     "about": "the same on a new in-memory session (model and thinking-level entries first)",
     "agent": [tools(call("read", path="src/app.py")), "greet returns a greeting"]},
    {"name": "tool-parallel-read-ls", "categories": ["tool-parallel"], "tools": ["read", "ls"],
     "about": "read and ls in one reply; both results before the next request",
     "agent": [tools(call("read", path="notes.txt"), call("ls", path="src")), "two files in src"]},
    {"name": "tool-parallel-three", "categories": ["tool-parallel"], "tools": ["read", "ls", "bash"],
     "about": "three calls of different tools in one reply, with text beside them",
     "agent": [tools(call("read", path="README.md"), call("ls", path="src"),
                     call("bash", command="wc -l notes.txt"), text="Looking around."), "done"]},
    {"name": "tool-multistep-edit", "categories": ["tool-multistep"], "tools": ["read", "edit", "write", "bash"],
     "about": "read, edit, bash (cat), then the answer: four requests in one run",
     "agent": [tools(call("read", path="src/util.py")),
               tools(call("edit", path="src/util.py", edits=[{"oldText": "a + b", "newText": "b + a"}])),
               tools(call("bash", command="cat src/util.py")), "swapped the operands"]},
    {"name": "tool-multistep-write", "categories": ["tool-multistep", "fresh-session"], "session": None,
     "tools": ["read", "write", "ls"],
     "about": "write a new file, list, read it back",
     "agent": [tools(call("write", path="out/new.txt", content="fresh\n")), tools(call("ls", path="out")),
               tools(call("read", path="out/new.txt")), "written"]},
    {"name": "tool-missing-file", "categories": ["tool-error"],
     "about": "read of a missing file: an isError tool result, the loop continues",
     "agent": [tools(call("read", path="missing.txt")), "no such file"]},
    {"name": "tool-unknown", "categories": ["tool-error"], "tools": ["read"],
     "about": "a call of a tool that is not active: pi answers with an error result",
     "agent": [tools(call("bash", command="ls")), "cannot run commands"]},
    {"name": "tool-bad-arguments", "categories": ["tool-error"],
     "about": "a read call without its required path: a validation error result",
     "agent": [tools(call("read")), "I need a path"]},
    {"name": "tool-bash-exit", "categories": ["tool-error", "tool-single"], "tools": ["bash"],
     "about": "a bash command that exits non-zero",
     "agent": [tools(call("bash", command="echo out; exit 3")), "it failed with 3"]},
    {"name": "tool-call-ids", "categories": ["tool-parallel"],
     "about": "provider tool call ids with characters other providers reject",
     "agent": [tools({"name": "read", "arguments": {"path": "notes.txt"}, "id": "call|a.b/c+1"},
                     {"name": "read", "arguments": {"path": "README.md"}, "id": "toolu_" + "x" * 70}), "ok"]},
    # ---------------------------------------------------------------- threshold compaction
    {"name": "threshold-after-run", "categories": ["threshold-compaction"],
     "about": "the answer's usage is above the threshold: compaction after the run, no retry",
     "agent": [{"text": "done", "usage": BIG}]},
    {"name": "threshold-after-tool-run", "categories": ["threshold-compaction", "tool-single"],
     "about": "a tool call, then an answer above the threshold",
     "agent": [tools(call("read", path="notes.txt")), {"text": "done", "usage": BIG}]},
    {"name": "threshold-small-window", "categories": ["threshold-compaction"],
     "model": {"contextWindow": 8000, "maxTokens": 2000}, "settings": {"reserveTokens": 2000, "keepRecentTokens": 100},
     "about": "a small window (8000, reserve 2000): usage 6500 crosses it",
     "agent": [{"text": "done", "usage": {"input": 6000, "output": 500}}]},
    {"name": "threshold-just-below", "categories": ["threshold-compaction"],
     "about": "usage exactly at window - reserve: no compaction",
     "agent": [{"text": "done", "usage": {"totalTokens": 183616}}]},
    {"name": "threshold-then-next-prompt", "categories": ["threshold-compaction", "multi-turn"],
     "input": ["first", "second"],
     "about": "compaction after the first run; the second prompt is sent on the compacted context",
     "agent": [{"text": "one", "usage": BIG}, "two"]},
    {"name": "threshold-before-prompt", "categories": ["threshold-before-prompt"],
     "about": "run 1 (compaction disabled) ends above the threshold; run 2 (enabled) compacts before its prompt",
     "steps": [{"settings": {"enabled": False}, "agent": [{"text": "big", "usage": BIG}]},
               {"input": "next", "agent": ["small"]}]},
    {"name": "threshold-disabled", "categories": ["threshold-compaction"], "settings": {"enabled": False},
     "about": "compaction disabled: no compaction whatever the usage",
     "agent": [{"text": "done", "usage": BIG}]},
    {"name": "threshold-with-tools-compacted", "categories": ["threshold-compaction", "tool-multistep"],
     "tools": ["read", "ls"], "input": ["look", "again"],
     "about": "tool results of the first run are summarised; the file list lands in the entry's details",
     "agent": [tools(call("read", path="notes.txt")), tools(call("ls")), {"text": "seen", "usage": BIG}, "again"]},
    # ---------------------------------------------------------------- overflow
    {"name": "overflow-recover", "categories": ["overflow-recovery"],
     "about": "an overflow error: dropped from the context (kept in the session), compaction, one retry",
     "agent": [OVERFLOW, "fine"]},
    {"name": "overflow-after-tool", "categories": ["overflow-recovery", "tool-single"],
     "about": "the overflow comes after a tool call; the retry continues from the tool result",
     "agent": [tools(call("read", path="notes.txt")), OVERFLOW, "fine"]},
    {"name": "overflow-openai-text", "categories": ["overflow-recovery"],
     "about": "OpenAI's context-length wording is recognised too",
     "agent": [OVERFLOW_OPENAI, "fine"]},
    {"name": "overflow-by-usage", "categories": ["overflow-recovery"],
     "about": "a successful reply whose input usage exceeds the window: overflow compaction, no retry (it is complete)",
     "agent": [{"text": "ok", "usage": {"input": 210000}}, "fine"]},
    {"name": "overflow-twice-short", "categories": ["overflow-twice"],
     "about": "two overflows, pinned clock: the second error is not newer than the compaction, so pi skips it",
     "agent": [OVERFLOW, OVERFLOW, "never"]},
    {"name": "overflow-twice-long", "categories": ["overflow-twice", "session-file"], "session": "long-coding",
     "leaf": 80, "settings": {"keepRecentTokens": 2000},
     "about": "two overflows, pinned clock: the second error is not newer than the compaction, so pi skips it",
     "agent": [OVERFLOW, OVERFLOW, "never"]},
    {"name": "overflow-twice-fail", "categories": ["overflow-twice"], "realClock": True,
     "about": "two overflows on a running clock: the second is a failure (compaction_end with an error)",
     "agent": [OVERFLOW, OVERFLOW, "never"]},
    {"name": "overflow-small-window", "categories": ["overflow-recovery"], "session": "multi-compaction",
     "model": {"contextWindow": 16384, "maxTokens": 4096},
     "settings": {"reserveTokens": 4096, "keepRecentTokens": 2000},
     "about": "overflow recovery on the session that already holds three compactions",
     "agent": [err("context_length_exceeded"), "fine"]},
    # ---------------------------------------------------------------- length
    {"name": "length-stop", "categories": ["length-stop"],
     "about": "a length stop below the model's output limit is recoverable: compaction (reason overflow), one retry",
     "agent": [{"text": "cut", "stopReason": "length", "usage": {"output": 100}}, "never"]},
    {"name": "length-after-tool", "categories": ["length-stop", "tool-single"],
     "about": "a length stop after a tool call: compaction and retry, the retry stops at length again and the run ends",
     "agent": [tools(call("read", path="notes.txt")), {"text": "cut", "stopReason": "length"}]},
    {"name": "length-full-output", "categories": ["length-stop"], "model": {"maxTokens": 32000},
     "about": "a length stop with the whole output budget used: not recoverable, the run ends",
     "agent": [{"text": "cut", "stopReason": "length", "usage": {"input": 18000, "output": 32000}}, "next"]},
    {"name": "length-zero-output-overflow", "categories": ["length-stop", "overflow-recovery"],
     "about": "a length stop with no output and the input at the window: treated as an overflow",
     "agent": [{"stopReason": "length", "usage": {"input": 198000}}, "done"]},
    # ---------------------------------------------------------------- transient errors
    {"name": "retry-503-then-ok", "categories": ["transient-retry"], "pi": QUICK_RETRY,
     "about": "one 503, then success",
     "agent": [err("503 service unavailable"), "fine"]},
    {"name": "retry-429-twice", "categories": ["transient-retry"], "pi": QUICK_RETRY,
     "about": "rate limited twice, then success",
     "agent": [err("429 rate limit exceeded"), err("429 Too Many Requests"), "fine"]},
    {"name": "retry-exhausted", "categories": ["transient-retry"], "pi": {"retry": {"baseDelayMs": 1, "maxRetries": 2}},
     "about": "overloaded every time: two retries, then pi gives up",
     "agent": [err("overloaded_error")]},
    {"name": "retry-disabled", "categories": ["transient-retry"], "pi": {"retry": {"enabled": False}},
     "about": "retry disabled: the error ends the run",
     "agent": [err("503 service unavailable"), "never"]},
    {"name": "retry-after-tool", "categories": ["transient-retry", "tool-single"], "pi": QUICK_RETRY,
     "about": "a transient error in the continuation after a tool call",
     "agent": [tools(call("read", path="notes.txt")), err("socket hang up"), "fine"]},
    {"name": "retry-permanent-error", "categories": ["transient-retry"], "pi": QUICK_RETRY,
     "about": "a non-retryable error: no retry",
     "agent": [err("401 invalid api key"), "never"]},
    # ---------------------------------------------------------------- aborted
    {"name": "aborted-reply", "categories": ["aborted"],
     "about": "an aborted reply above the threshold: recorded, no compaction, no retry",
     "agent": [{"text": "partial", "stopReason": "aborted", "usage": BIG}]},
    {"name": "aborted-then-prompt", "categories": ["aborted", "multi-turn"], "input": ["a", "b"],
     "about": "the check before the next prompt does count an aborted reply's usage: compaction before prompt 2",
     "agent": [{"text": "partial", "stopReason": "aborted", "usage": BIG}, "ok"]},
    {"name": "aborted-after-tool", "categories": ["aborted", "tool-single"], "pi": QUICK_RETRY,
     "about": "aborted in the continuation after a tool call: recorded, no retry",
     "agent": [tools(call("read", path="notes.txt")), {"stopReason": "aborted", "errorMessage": "Request was aborted"}]},
    # ---------------------------------------------------------------- per-turn override
    {"name": "override-system-prompt", "categories": ["per-turn-override", "tool-single"],
     "hooks": [{"systemPrompt": "OVERRIDE: terse mode."}],
     "about": "the hook's prompt is the system prompt of every request of the run, the tool continuation included",
     "agent": [tools(call("read", path="notes.txt")), "done"]},
    {"name": "override-message", "categories": ["per-turn-override"],
     "hooks": [{"message": {"customType": "note", "content": "Context from a hook.", "display": False}}],
     "about": "the hook adds a custom message before the prompt (stored, sent as a user message)",
     "agent": ["done"]},
    {"name": "override-per-prompt", "categories": ["per-turn-override", "multi-turn"], "input": ["a", "b"],
     "hooks": [{"systemPrompt": "OVERRIDE: first hook."}, {"message": {"customType": "n", "content": "x"}}],
     "about": "the override holds for each run and is re-applied per prompt; the base prompt is what hooks see",
     "agent": ["one", "two"]},
    {"name": "override-overflow-retry", "categories": ["per-turn-override", "overflow-recovery"],
     "hooks": [{"systemPrompt": "OVERRIDE: during recovery."}],
     "about": "the override survives the overflow compaction and the retry",
     "agent": [tools(call("read", path="notes.txt")), OVERFLOW, "fine"]},
    # ---------------------------------------------------------------- tools changed, model switch
    {"name": "tools-changed", "categories": ["tools-changed"],
     "about": "run 1 with read only, run 2 with read, bash and ls: tool list and prompt differ",
     "steps": [{"tools": ["read"], "agent": [tools(call("read", path="notes.txt")), "one"]},
               {"tools": ["read", "bash", "ls"], "input": "now list",
                "agent": [tools(call("ls", path=".")), "listed"]}]},
    {"name": "tools-none", "categories": ["tools-changed"],
     "about": "run 1 with the default tools, run 2 with no tools at all",
     "steps": [{"agent": ["one"]}, {"tools": [], "input": "no tools now", "agent": ["two"]}]},
    {"name": "model-switch", "categories": ["model-switch"],
     "about": "run 1 on model A ends in an overflow error (compaction off); run 2 on model B: A's overflow is ignored",
     "steps": [{"settings": {"enabled": False}, "agent": [OVERFLOW]},
               {"model": {"id": "model-b", "provider": "other", "contextWindow": 100000},
                "input": "switch", "agent": ["small"]}]},
    {"name": "model-switch-threshold", "categories": ["model-switch", "threshold-before-prompt"],
     "about": "run 1 on model A ends above the threshold (compaction off); run 2 on model B compacts first: "
              "the threshold check counts any model's usage",
     "steps": [{"settings": {"enabled": False}, "agent": [{"text": "big", "usage": BIG}]},
               {"model": {"id": "model-b", "provider": "other", "contextWindow": 100000},
                "input": "switch", "agent": ["small"]}]},
    {"name": "model-switch-reasoning", "categories": ["model-switch"],
     "about": "run 2 on a reasoning model with thinking level high: options carry the reasoning level",
     "steps": [{"agent": ["one"]},
               {"model": {"id": "think-1", "reasoning": True}, "thinkingLevel": "high",
                "input": "think", "agent": [{"thinking": "hmm", "thinkingSignature": "sig-1", "text": "two"}]}]},
    {"name": "model-switch-overflow", "categories": ["model-switch", "overflow-recovery"],
     "about": "run 2 on a smaller-window model overflows by usage and recovers",
     "steps": [{"agent": ["one"]},
               {"model": {"id": "small-1", "contextWindow": 50000, "maxTokens": 8000},
                "input": "go on", "agent": [{"text": "x", "usage": {"input": 60000}}, "fine"]}]},
    # ---------------------------------------------------------------- templates and skills
    {"name": "template-expanded", "categories": ["template"], "input": "/fix src/app.py perf style",
     "about": "/fix with arguments expands the project template", "agent": ["fixed"]},
    {"name": "template-default-arg", "categories": ["template", "fresh-session"], "session": None,
     "input": "/hello", "about": "a ${1:-default} with no argument", "agent": ["hi"]},
    {"name": "template-unknown", "categories": ["template"], "input": "/nope a b",
     "about": "an unknown /name is sent unchanged", "agent": ["?"]},
    {"name": "skill-expanded", "categories": ["skill"], "input": "/skill:lint src/app.py",
     "about": "/skill:lint args: the skill file's body wrapped with its arguments", "agent": ["linted"]},
    {"name": "skill-unknown", "categories": ["skill"], "input": "/skill:nope x",
     "about": "an unknown skill is sent unchanged", "agent": ["?"]},
    {"name": "template-multi-turn", "categories": ["template", "skill", "multi-turn"],
     "input": ["/hello Ann", "/skill:lint README.md", "plain"],
     "about": "templates, skills and plain input in consecutive prompts", "agent": ["a", "b", "c"]},
    # ---------------------------------------------------------------- sessions
    {"name": "session-long-coding-early", "categories": ["session-file", "tool-single"], "session": "long-coding",
     "leaf": 12, "about": "continue long-coding from an early entry (a branch off the middle of the file)",
     "agent": [tools(call("read", path="notes.txt")), "ok"]},
    {"name": "session-compacted-branched", "categories": ["session-file", "threshold-compaction"],
     "session": "compacted-branched", "settings": {"keepRecentTokens": 2000},
     "about": "continue the branched session that holds a compaction and a branch summary; compact again",
     "agent": [{"text": "ok", "usage": BIG}]},
    {"name": "session-multi-compaction", "categories": ["session-file", "multi-turn"], "session": "multi-compaction",
     "input": ["a", "b"], "about": "continue the session with three compactions (context from the latest)",
     "agent": ["one", "two"]},
    {"name": "multi-turn-three", "categories": ["multi-turn", "fresh-session"], "session": None,
     "input": ["one", "two", "three"], "about": "three prompts on a fresh session",
     "agent": ["1", tools(call("read", path="notes.txt")), "2", "3"]},
]


# =========================================================================== oracle


def oracle(oracle_dir: Path, requests: list[dict]) -> list[Any]:
    text = "".join(json.dumps(r, ensure_ascii=True) + "\n" for r in requests)
    proc = subprocess.run(["./oracle", "--jsonl"], input=text, capture_output=True, text=True, cwd=oracle_dir,
                          check=True, encoding="utf-8", errors="surrogatepass")
    replies = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert len(replies) == len(requests), proc.stderr[-2000:]
    for request, reply in zip(requests, replies):
        if not reply["ok"]:
            raise RuntimeError(f"oracle failed on {json.dumps(request)[:300]}: {reply['error']}")
    return [reply["result"] for reply in replies]


# =========================================================================== requests


def cwd_of(name: str) -> str:
    return f"{BASE_DIR}/{name}/proj"


def base_request(name: str, spec: dict) -> dict:
    """The oracle request of one run (without the session input)."""
    cwd = cwd_of(name)
    req: dict[str, Any] = {
        "op": "agent_request", "cwd": cwd, "agentDir": f"{BASE_DIR}/{name}/agent", "packageDir": PACKAGE_DIR,
        "now": NOW, "seed": 1, "settings": {"keepRecentTokens": 100, **spec.get("settings", {})},
        "input": spec.get("input", "go"), "responses": {"agent": spec["agent"], "summary": SUMMARY},
    }
    for key, field in (("pi", "piSettings"), ("model", "model"), ("tools", "tools"),
                       ("hooks", "beforeAgentStart"), ("thinkingLevel", "thinkingLevel")):
        if key in spec:
            req[field] = spec[key]
    return req


def fixture_files(name: str) -> dict[str, str]:
    return {f"{cwd_of(name)}/{rel}": text for rel, text in FIXTURE.items()}


def session_lines(session: str) -> list[str]:
    return (SESSIONS / f"{session}.jsonl").read_text(encoding="utf-8").splitlines()


def steps_of(scenario: dict) -> list[dict]:
    shared = {k: v for k, v in scenario.items() if k not in ("steps", "name", "categories", "about")}
    if "steps" not in scenario:
        return [shared]
    return [{**shared, **step} for step in scenario["steps"]]


def run_scenario(oracle_dir: Path, scenario: dict) -> dict:
    name = scenario["name"]
    shutil.rmtree(f"{BASE_DIR}/{name}", ignore_errors=True)
    session = scenario.get("session", "short-chat")
    header_and_entries: list[str] | None = session_lines(session) if session else None
    leaf = None
    if session and "leaf" in scenario:
        leaf = json.loads(header_and_entries[scenario["leaf"]])["id"]
    steps, in_memory = [], session is None
    for index, spec in enumerate(steps_of(scenario)):
        req = base_request(name, spec)
        if index == 0:
            req["writeFiles"] = fixture_files(name)
        if header_and_entries is not None:
            req["jsonl"] = "\n".join(header_and_entries) + "\n"
            if leaf and index == 0:
                req["leafId"] = leaf
        result = run_request(oracle_dir, req, scenario.get("realClock", False))
        prompts = base_prompts(oracle_dir, req)
        steps.append(step_record(req, result, prompts, index, session, leaf))
        header_and_entries = next_session(header_and_entries, result, in_memory)
        in_memory = False
    return {"name": name, "categories": scenario["categories"], "about": scenario["about"],
            "session": {"file": f"{session}.jsonl", "leafId": leaf} if session else None, "steps": steps}


def run_request(oracle_dir: Path, req: dict, real_clock: bool, tries: int = 12) -> dict:
    """One run; on the real clock re-run until pi fails the overflow recovery, then renumber the clock."""
    if not real_clock:
        return oracle(oracle_dir, [req])[0]
    req.pop("now")
    for _ in range(tries):
        started = time.time() * 1000 - 1
        result = oracle(oracle_dir, [req])[0]
        if any(e.get("errorMessage") for e in result["events"]):
            return renumber_clock(result, started)
    raise RuntimeError("pi never failed the overflow recovery")


def renumber_clock(result: Any, started: float) -> Any:
    """Timestamps taken while the op ran -> NOW + rank in ms (order and ties kept, runs comparable)."""
    seen: set[float] = set()

    def collect(v: Any) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                stamp = _stamp(k, x, started)
                if stamp is not None:
                    seen.add(stamp)
                collect(x)
        elif isinstance(v, list):
            for x in v:
                collect(x)

    collect(result)
    base = datetime.fromisoformat(NOW.replace("Z", "+00:00")).timestamp() * 1000
    rank = {stamp: base + i for i, stamp in enumerate(sorted(seen))}

    def rewrite(v: Any) -> Any:
        if isinstance(v, dict):
            out = {}
            for k, x in v.items():
                stamp = _stamp(k, x, started)
                if stamp is None:
                    out[k] = rewrite(x)
                elif isinstance(x, str):
                    out[k] = datetime.fromtimestamp(rank[stamp] / 1000, timezone.utc).isoformat(
                        timespec="milliseconds").replace("+00:00", "Z")
                else:
                    out[k] = int(rank[stamp])
            return out
        if isinstance(v, list):
            return [rewrite(x) for x in v]
        return v

    return rewrite(result)


def _stamp(key: str, value: Any, started: float) -> float | None:
    if key != "timestamp":
        return None
    if isinstance(value, str):
        ms = datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        ms = float(value)
    else:
        return None
    return ms if ms >= started else None


def next_session(lines: list[str] | None, result: dict, in_memory: bool) -> list[str]:
    """The session after a run, as JSONL lines (an in-memory session gets pi's header)."""
    entries = [json.dumps(e, ensure_ascii=False) for e in result["sessionEntries"]]
    if lines is not None and not in_memory:
        return [lines[0], *entries]
    header = {"type": "session", "version": 3, "id": "01960000-0000-7000-8000-0000000000aa",
              "timestamp": "2026-08-20T10:00:00.000Z", "cwd": "/"}
    return [json.dumps(header), *entries]


def base_prompts(oracle_dir: Path, req: dict) -> dict[str, dict]:
    """sha256 of pi's base system prompt for this run's configuration -> its data-driven inputs."""
    keys = ("cwd", "agentDir", "packageDir", "tools", "now", "seed")
    probe = {"op": "agent_system_prompt", **{k: req[k] for k in keys if k in req}}
    info = oracle(oracle_dir, [probe])[0]
    options = dict(info["systemPromptOptions"])
    options["toolSnippets"] = sorted((options.get("toolSnippets") or {}).keys())
    options["promptGuidelines"] = len(options.get("promptGuidelines") or [])
    options["skills"] = [{k: s[k] for k in ("name", "description", "filePath", "baseDir") if k in s}
                         for s in options.get("skills") or []]
    return {sha(info["systemPrompt"]): {"sha256": sha(info["systemPrompt"]), "activeTools": info["activeTools"],
                                        "options": options}}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# =========================================================================== masking


def ours(req: dict) -> set[str]:
    return {h["systemPrompt"] for h in req.get("beforeAgentStart") or [] if h and "systemPrompt" in h}


def mask_prompt(prompt: str, req: dict, prompts: dict[str, dict]) -> dict:
    if prompt in ours(req):
        return {"text": prompt}
    base = prompts.get(sha(prompt))
    if base is None:
        raise RuntimeError("an agent request carried a prompt that is neither ours nor pi's base prompt")
    return {"base": base["sha256"]}


def strip_descriptions(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: strip_descriptions(v) for k, v in schema.items() if k != "description"}
    if isinstance(schema, list):
        return [strip_descriptions(v) for v in schema]
    return schema


def mask_tools(tool_defs: list[dict] | None) -> list[dict] | None:
    if tool_defs is None:
        return None
    return [{"name": t["name"], "descriptionSha256": sha(t.get("description") or ""),
             "parameters": strip_descriptions(t.get("parameters"))} for t in tool_defs]


TAGGED = re.compile(r"<(conversation|previous-summary)>\n(.*?)\n</\1>", re.S)


def mask_summary_messages(messages: list[dict]) -> list[dict]:
    out = []
    for m in messages:
        text = "".join(b.get("text", "") for b in m["content"] if b.get("type") == "text")
        parts = {tag: body for tag, body in TAGGED.findall(text)}
        rest = TAGGED.sub(lambda mo: f"<{mo.group(1)}/>", text)
        out.append({"role": m["role"], **parts, "instructionsSha256": sha(rest)})
    return out


def mask_request(r: dict, req: dict, prompts: dict[str, dict]) -> dict:
    if r["kind"] == "summary":
        return {"kind": "summary", "systemPromptSha256": sha(r["systemPrompt"]),
                "messages": mask_summary_messages(r["messages"]), "options": r["options"], "model": r["model"]}
    return {"kind": "agent", "systemPrompt": mask_prompt(r["systemPrompt"], req, prompts),
            "messages": r["messages"], "tools": mask_tools(r.get("tools")), "options": r["options"],
            "model": r["model"]}


def mask_event(event: dict) -> dict:
    """pi's own failure sentence in a ``compaction_end`` event is kept as a hash."""
    if event.get("type") == "compaction_end" and isinstance(event.get("errorMessage"), str):
        return {**event, "errorMessage": "sha256:" + sha(event["errorMessage"])}
    return event


def step_record(req: dict, result: dict, prompts: dict[str, dict], index: int, session: str | None,
                leaf: str | None) -> dict:
    request = {k: v for k, v in req.items() if k not in ("jsonl", "writeFiles", "op")}
    if index == 0:
        request["session"] = {"file": f"{session}.jsonl", "leafId": leaf} if session else None
        request["writeFiles"] = {k.removeprefix(req["cwd"] + "/"): v for k, v in req.get("writeFiles", {}).items()}
    else:
        request["session"] = "previous step"
    record = {
        "request": request,
        "basePrompt": next(iter(prompts.values())),
        "requests": [mask_request(r, req, prompts) for r in result["requests"]],
        "events": [mask_event(e) for e in result["events"]],
        "newEntries": result["newEntries"],
    }
    if "beforeAgentStartSeen" in result:
        record["beforeAgentStartSeen"] = [
            {"handler": s["handler"], "systemPrompt": mask_prompt(s["systemPrompt"], req, prompts)}
            for s in result["beforeAgentStartSeen"]]
    return record


# =========================================================================== main


#: pi's sentences around a compaction or branch summary (read from the oracle's constants
#: by main) are not kept in our files, only these marks; tag lines (``<summary>``) stay.
PI_SENTENCE_MASKS = {"COMPACTION_SUMMARY_PREFIX": "[pi: compaction summary prefix]",
                     "BRANCH_SUMMARY_PREFIX": "[pi: branch summary prefix]"}
PI_SENTENCES: dict[str, str] = {}  # sentence -> mark, filled by main


def pi_sentences(constants: dict) -> dict[str, str]:
    """Each line of the masked constants that is not empty and not a bare tag, with its mark."""
    return {line: mark for name, mark in PI_SENTENCE_MASKS.items()
            for line in constants[name].splitlines() if line.strip() and not line.startswith("<")}


def render(data: Any) -> str:
    text = json.dumps(data, ensure_ascii=False, indent=1)
    for sentence, mark in PI_SENTENCES.items():
        text = text.replace(json.dumps(sentence, ensure_ascii=False)[1:-1], mark)
    return text + "\n"


def generate(oracle_dir: Path, only: list[str] | None) -> dict[str, str]:
    out = {}
    for scenario in SCENARIOS:
        if only and scenario["name"] not in only:
            continue
        out[f"{scenario['name']}.json"] = render(run_scenario(oracle_dir, scenario))
        print(f"ran {scenario['name']}", file=sys.stderr)
    manifest = {"categories": CATEGORIES, "notExpressible": NOT_EXPRESSIBLE,
                "scenarios": {s["name"]: s["categories"] for s in SCENARIOS}}
    out["manifest.json"] = render(manifest)
    out["README.md"] = readme()
    return out


README_HEAD = """# Agent-loop vectors: pi 0.84.0's own loop, recorded

Each `<scenario>.json` is one run (or a chain of runs on the same session) of pi's real
`AgentSession` with scripted model replies, recorded by `gen_agent_loop_vectors.py` from
pi's oracle (`agent_request`). The tests need no Node: they read these files. The
differential test of our runtime feeds the same replies through the loopback server
(`pipeline.testing.loopback`) and compares requests, events and entries.

## What a file holds

- `name`, `categories`, `about`; `session`: the shared real session file the run starts
  from (`tests/data/sessions/real/<file>`, optionally at `leafId`), or `null` for a new
  in-memory session (id `01960000-0000-7000-8000-0000000000aa`).
- `steps`: one per run. Step 2 and later continue the session the previous step left
  (`"session": "previous step"`): that is how tools and models change between runs.
  - `request`: what pi was given: `input` (a string or one string per prompt), `settings`
    (compaction: `keepRecentTokens` 100 unless said otherwise), `piSettings` (e.g. retry
    `baseDelayMs` 1), `tools`, `model` (the scripted model: id, provider, contextWindow,
    maxTokens, reasoning), `beforeAgentStart` (one extension per item whose
    `before_agent_start` handler returns it), `thinkingLevel`, `responses` (`agent`
    replies in order, the last repeating; `summary` replies for summarization calls),
    `cwd`/`agentDir`, `now` (the pinned clock), `seed` (pi's ids), and `writeFiles`: the
    fixture project, relative to `cwd`, written before the run; pi's real tools (read, ls,
    bash, edit, write) ran on it.
  - `basePrompt`: pi's base system prompt for this configuration as its data-driven
    inputs (`options`: cwd, skills, context files, selected tools; the names of the tools
    with snippets, the number of guidelines), `activeTools` and a `sha256` of pi's text.
  - `requests`: every request pi sent to the model, in order. `kind` `agent`:
    `systemPrompt` is `{"base": sha256}` (pi's base prompt, see `basePrompt`) or
    `{"text": ...}` (one of our override strings), `messages` exactly as pi passed them to
    the provider (after `convertToLlm`), `tools` (name, parameter schema without
    descriptions, sha256 of the description), `options` (sessionId, maxTokens, reasoning,
    ...), `model`. `kind` `summary`: the serialized `conversation` (and
    `previous-summary`) the summarization call carried; the instructions around them and
    the system prompt are kept as sha256 only.
  - `events`: pi's compaction / auto-retry events, in order.
  - `newEntries`: the session entries pi appended (failed replies included).
  - `beforeAgentStartSeen` (override scenarios): which system prompt each hook saw.

pi's sentences are not copied in: its base system prompt, tool descriptions and summary
instructions appear only as hashes. Compaction summaries are our scripted replies
(`SUMMARY-H`, `SUMMARY-P`) joined the way pi joins them.

## Determinism

The clock is pinned (`now`), ids are seeded, the fixture is rewritten per scenario under
its own directory (removed first), so re-running the generator gives identical files
(`--check`). One exception: `overflow-twice-fail` needs a running clock (with a pinned
clock the second error is never newer than the compaction, and pi skips it), so it runs
on the real clock until pi fails the recovery, and every timestamp taken during the run is
renumbered to `now` + its rank in milliseconds (order and ties kept). Which stamps tie
depends on the run, so `--check` compares that file without its timestamps.

`convert/` holds the converter vectors (`gen_convert_vectors.py`): pi-ai's own OpenAI and
Anthropic providers sending contexts to the loopback server, the bodies they sent and the
messages they built; `tests/llm/test_convert_vectors.py` checks `pipeline.llm.wire`
against them.

`grep` and `find` are left out: pi runs them through `rg` / `fd`, whose presence depends
on the machine.

## Not expressible

- `queued-messages`: {queued}

## Scenarios

| scenario | categories | what it shows |
| --- | --- | --- |
"""


def readme() -> str:
    rows = [f"| `{s['name']}` | {', '.join(s['categories'])} | {s['about']} |" for s in SCENARIOS]
    categories = [f"- `{name}`: {about}" for name, about in CATEGORIES.items()]
    return (README_HEAD.replace("{queued}", NOT_EXPRESSIBLE["queued-messages"]) + "\n".join(rows)
            + "\n\n## Categories\n\n" + "\n".join(categories) + "\n")


REAL_CLOCK = {f"{s['name']}.json" for s in SCENARIOS if s.get("realClock")}


def comparable(name: str, text: str) -> str:
    """A real-clock scenario's ties between timestamps can fall differently: --check ignores its timestamps."""
    return re.sub(r'"timestamp": ("[^"]*"|\d+)', '"timestamp": T', text) if name in REAL_CLOCK else text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oracle", default=os.environ.get("PI_ORACLE"), help="the pi oracle's directory")
    parser.add_argument("--check", action="store_true", help="regenerate and compare, write nothing")
    parser.add_argument("--only", nargs="*", help="scenario names")
    args = parser.parse_args()
    if not args.oracle:
        parser.error("give --oracle DIR or set PI_ORACLE")
    PI_SENTENCES.update(pi_sentences(oracle(Path(args.oracle), [{"op": "constants"}])[0]))
    files = generate(Path(args.oracle), args.only)
    if args.check:
        bad = [n for n, text in files.items()
               if not (HERE / n).exists() or comparable(n, (HERE / n).read_text(encoding="utf-8")) != comparable(n, text)]
        print("identical" if not bad else f"differ: {bad}")
        return 1 if bad else 0
    for name, text in files.items():
        (HERE / name).write_text(text, encoding="utf-8", errors="surrogatepass")
    print(f"wrote {len(files)} files", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
