#!/usr/bin/env python3
"""Generate the compaction test vectors from pi 0.84.0 (the oracle). Needs the oracle; the tests do not.

    /tmp/venv/bin/python tests/data/compaction/gen_vectors.py [--oracle /tmp/oracle]

Writes, under ``tests/data/compaction/``:

* ``sessions/*.jsonl`` — sessions written by pi's own ``SessionManager``: small
  ``synth_session`` files and ``session_create`` files built from seeded random steps
  (custom messages, branch summaries, compactions kept before older ones, bash runs,
  images, labels, model/thinking changes, branches);
* ``plans.json`` — ``prepare_compaction`` for every session (the four real ones in
  ``tests/data/sessions/real`` too) × several leaves × keep-recent settings;
* ``tokens.json`` — ``estimate_tokens`` / ``estimate_context_tokens`` / ``should_compact``;
* ``serialize.json`` — ``serialize`` (with ``convert``) and ``file_ops`` on varied messages;
* ``requests.json`` — ``summary_request``, ``generate_summary``, ``branch_summary_request``,
  ``agent_compact`` and ``agent_navigate`` captures;
* ``branch.json`` — ``branch_entries`` and ``prepare_branch``;
* ``pi_masked.yaml`` — a profile whose summary texts are pi's *structure* with every pi
  sentence replaced by a mask token.

pi's sentences never reach these files. They are read from the oracle's own output
at generation time (``constants``, and requests captured from probes), cut into lines,
and every line that is not a heading (``## Goal``) or empty becomes ``MASK_nn`` (the same
line, the same mask). Outputs are masked by replacing each whole pi text with its masked
version; a final scan fails if any pi line is left.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "compaction"))

from entryspec import raw_entries  # noqa: E402

from pipeline.compaction.summary_schema import render_schema  # noqa: E402
from pipeline.model.summary import SchemaFormat, SchemaItem, SchemaSection  # noqa: E402

REAL = ROOT / "tests" / "data" / "sessions" / "real"
REAL_NAMES = ("short-chat", "long-coding", "compacted-branched", "multi-compaction")
KEEPS = (0, 100, 1000, 4000, 8000, 20000)
NOW = "2026-08-20T12:00:00Z"


# =========================================================================== oracle


class Oracle:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def run(self, requests: list[dict]) -> list:
        """One ``--jsonl`` process for a batch; results in order (any failure stops the generator)."""
        text = "".join(json.dumps(r) + "\n" for r in requests)
        proc = subprocess.run(
            [str(self.directory / "oracle"), "--jsonl"], input=text, capture_output=True, text=True,
            cwd=self.directory, check=True,
        )
        replies = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
        assert len(replies) == len(requests), proc.stderr[-2000:]
        for request, reply in zip(requests, replies):
            if not reply["ok"]:
                raise RuntimeError(f"oracle failed on {json.dumps(request)[:300]}: {reply['error']}")
        return [reply["result"] for reply in replies]

    def one(self, request: dict) -> Any:
        return self.run([request])[0]


# =========================================================================== pi's texts and masks


class Masks:
    """Line-wise masks: each distinct non-heading line of pi's texts gets ``MASK_nn``.

    Masking is structural, so session content quoted in a request (a stored branch
    summary that begins with pi's preamble, say) stays exactly as the session file has
    it: only the parts pi adds are replaced — the system prompt, the projection wrappers
    inside the conversation, the instructions after it, and the fixed words at the start
    of a result summary.
    """

    def __init__(self) -> None:
        self.by_line: dict[str, str] = {}
        self.named: dict[str, tuple[str, str]] = {}  # name -> (pi text, masked text)

    def line(self, line: str) -> str:
        if not line or line.startswith(("## ", "### ")) or line == "---" or re.fullmatch(r"</?[a-z-]+>", line):
            return line
        if line not in self.by_line:
            self.by_line[line] = f"MASK_{len(self.by_line) + 1:02d}"
        return self.by_line[line]

    def text(self, name: str, text: str) -> str:
        masked = "\n".join(self.line(line) for line in text.split("\n"))
        self.named[name] = (text, masked)
        return masked

    def sub(self, value: str, *names: str) -> str:
        for name in sorted(names, key=lambda n: -len(self.named[n][0])):
            pi_text, masked = self.named[name]
            value = value.replace(pi_text, masked)
        return value

    def head(self, value: str, *names: str) -> str:
        """Replace a pi text that starts ``value`` (a result summary's fixed opening)."""
        for name in names:
            pi_text, masked = self.named[name]
            if value.startswith(pi_text):
                return masked + value[len(pi_text) :]
        return value

    def conversation(self, text: str) -> str:
        return self.sub(text, "compaction_open", "branch_open")

    def user_text(self, text: str) -> str:
        """``<conversation>…</conversation>\n\n`` + (previous summary) + instructions."""
        cut = text.rindex("\n</conversation>\n\n") + len("\n</conversation>\n\n")
        head, tail = text[:cut], text[cut:]
        previous = ""
        if tail.startswith("<previous-summary>\n"):
            end = tail.rindex("\n</previous-summary>\n\n") + len("\n</previous-summary>\n\n")
            previous, tail = tail[:end], tail[end:]
        prompts = ("initial", "update", "turn_prefix", "branch")
        tail = self.sub(tail, *prompts)
        label = self.named["custom_label"]
        tail = tail.replace(f"\n\n{label[0]}: ", f"\n\n{label[1]}: ")
        return self.conversation(head) + previous + tail

    def capture(self, call: dict) -> dict:
        return dict(call, systemPrompt=self.sub(call["systemPrompt"], "system"), userText=self.user_text(call["userText"]))

    def summary(self, text: str) -> str:
        if text == self.named["branch_empty"][0]:
            return self.named["branch_empty"][1]
        return self.head(text, "preamble", "no_history")

    def check(self, value: Any, allowed: str) -> None:
        """Fail if a pi line (longer than a marker) is in ``value`` but not in the session files (``allowed``)."""
        blob = json.dumps(value, ensure_ascii=False)
        for line in self.by_line:
            quoted = json.dumps(line, ensure_ascii=False)[1:-1]
            if len(line) > 12 and quoted in blob and line not in allowed:
                raise AssertionError(f"unmasked pi text in output: {line[:60]!r}")


def _after_conversation(text: str) -> str:
    return text.split("\n</conversation>\n\n", 1)[1]


def pi_texts(oracle: Oracle) -> dict[str, str]:
    """pi's prompt texts, read from the oracle's output (never stored)."""
    user = {"role": "user", "content": "x", "timestamp": 1}
    const = oracle.one({"op": "constants"})
    first, update, custom = oracle.run([
        {"op": "generate_summary", "messages": [user], "responses": "R"},
        {"op": "generate_summary", "messages": [user], "previousSummary": "PREV", "responses": "R"},
        {"op": "generate_summary", "messages": [user], "customInstructions": "CUSTOMX", "responses": "R"},
    ])
    initial = _after_conversation(first["requests"][0]["messages"][0]["content"][0]["text"])
    custom_text = _after_conversation(custom["requests"][0]["messages"][0]["content"][0]["text"])
    update_text = update["requests"][0]["messages"][0]["content"][0]["text"].split("\n</previous-summary>\n\n", 1)[1]
    split = oracle.one({
        "op": "summary_request", "entries": raw_entries("U5 A10 T10 A10 T10 A10"),
        "settings": {"keepRecentTokens": 20}, "responses": "PREFIXTEXT",
    })
    no_history, separator = split["result"]["summary"].split("PREFIXTEXT")[0], None
    separator = "\n\n---\n\n" + no_history.split("\n\n---\n\n", 1)[1]
    no_history = no_history.split("\n\n---\n\n", 1)[0]
    turn_prefix = _after_conversation(split["requests"][0]["messages"][0]["content"][0]["text"])
    branch = oracle.one({"op": "branch_summary_request", "entries": raw_entries("U5"), "responses": "BRANCHTEXT"})
    empty = oracle.one({"op": "branch_summary_request", "entries": raw_entries("T5"), "responses": "R"})
    return {
        "system": const["SUMMARIZATION_SYSTEM_PROMPT"],
        "initial": initial,
        "update": update_text,
        "turn_prefix": turn_prefix,
        "branch": _after_conversation(branch["requests"][0]["messages"][0]["content"][0]["text"]),
        "custom_label": custom_text[len(initial) + 2 :].split(": CUSTOMX")[0],
        "no_history": no_history,
        "separator": separator,
        "preamble": branch["result"]["summary"].split("BRANCHTEXT")[0],
        "branch_empty": empty["result"]["summary"],
        "compaction_open": const["COMPACTION_SUMMARY_PREFIX"],
        "compaction_close": const["COMPACTION_SUMMARY_SUFFIX"],
        "branch_open": const["BRANCH_SUMMARY_PREFIX"],
        "branch_close": const["BRANCH_SUMMARY_SUFFIX"],
    }


def _split_format(text: str) -> tuple[str, str, str]:
    """``(before, format block, after)``: the block runs from the first ``## `` line to the last paragraph."""
    head, _, rest = text.partition("\n## ")
    block, _, tail = ("## " + rest).rpartition("\n\n")
    return head + "\n", block, tail


def parse_schema(block: str) -> tuple[SchemaSection, ...]:
    """The schema sections of a format block (heading, guidance lines, items)."""
    sections: list[dict] = []
    current: dict | None = None
    for line in block.split("\n"):
        if line.startswith("## "):
            sections.append({"heading": line[3:], "guidance": [], "items": []})
            current = sections[-1]
        elif line.startswith("### "):
            sections[-1]["items"].append({"heading": line[4:], "guidance": []})
            current = sections[-1]["items"][-1]
        elif line:
            current["guidance"].append(line)
    return tuple(_section(s) for s in sections)


def _section(data: dict) -> SchemaSection:
    items = tuple(SchemaItem(heading=i["heading"], guidance="\n".join(i["guidance"]) or None) for i in data["items"])
    return SchemaSection(heading=data["heading"], guidance="\n".join(data["guidance"]) or None, items=items)


def _schema_json(sections: tuple[SchemaSection, ...]) -> list[dict]:
    return [s.model_dump(mode="json", exclude_defaults=True) for s in sections]


def masked_profile(texts: dict[str, str], masks: Masks) -> dict:
    """The test profile: pi's layout, masks instead of pi's sentences, ``${schema}`` where pi lists the format."""
    # The split-turn separator is a format marker (docs/pi-rules.md#summary-requests; pi's stored summaries hold it).
    m = {name: text if name == "separator" else masks.text(name, text) for name, text in texts.items()}
    init_head, init_block, init_tail = _split_format(m["initial"])
    branch_head, branch_block, branch_tail = _split_format(m["branch"])
    schema, branch_schema = parse_schema(init_block), parse_schema(branch_block)
    assert render_schema(schema, SchemaFormat()) == init_block, "schema layout differs from pi's format block"
    assert render_schema(branch_schema, SchemaFormat()) == branch_block
    return {
        "extends": "builtin:default",
        "name": "pi-masked",
        "summary": {
            "system_prompt": m["system"],
            "schema": _schema_json(schema),
            "branch_schema": _schema_json(branch_schema),
            "on_schema_violation": "warn",  # pi checks nothing: no extra calls
            "instructions": {
                "initial": init_head + "${schema}\n\n" + init_tail,
                "update": m["update"],
                "turn_prefix": m["turn_prefix"],
                "branch": branch_head + "${schema}\n\n" + branch_tail,
                "custom_label": m["custom_label"],
                "schema_retry": "RETRY_MASK missing: ${missing}\n\n${schema}",
            },
            "split_turn_separator": m["separator"],
            "no_history": m["no_history"],
            "branch_empty": m["branch_empty"],
            "branch_preamble": m["preamble"],
            "truncation_marker": "\n\n[... ${count} more characters truncated]",
            "projection": {
                "compaction": {"open": m["compaction_open"], "close": m["compaction_close"]},
                "branch": {"open": m["branch_open"], "close": m["branch_close"]},
            },
        },
        "context": {
            "bash_execution": {
                "ran": "Ran `${command}`\n",
                "output": "```\n${output}\n```",
                "no_output": "(no output)",
                "cancelled": "\n\n(command cancelled)",
                "exit_code": "\n\nCommand exited with code ${code}",
                "truncated": "\n\n[Output truncated. Full output: ${path}]",
            }
        },
    }


# =========================================================================== sessions


def _usage(rng: random.Random, total: int) -> dict:
    parts = [rng.randint(0, total // 3) for _ in range(3)]
    usage = {"input": parts[0], "output": parts[1], "cacheRead": parts[2], "cacheWrite": 0}
    usage["totalTokens"] = sum(usage.values()) if rng.random() < 0.8 else 0
    usage["cost"] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    return usage


def _text(rng: random.Random, words: int) -> str:
    vocab = ["alpha", "beta", "src/x.ts", "fix", "test", "é", "😀", "line\nbreak", "  ", "tab\t", "naïve", "q\"uote"]
    return " ".join(rng.choice(vocab) for _ in range(words))


def _assistant(rng: random.Random, ms: int, tokens: int) -> dict:
    content: list[dict] = []
    if rng.random() < 0.5:
        content.append({"type": "thinking", "thinking": _text(rng, rng.randint(1, 30))})
    if rng.random() < 0.7:
        content.append({"type": "text", "text": _text(rng, rng.randint(0, 60))})
    for _ in range(rng.choice((0, 0, 1, 2))):
        name = rng.choice(("read", "write", "edit", "bash", "grep", "Read"))
        path = rng.choice(("src/a.ts", "src/b.ts", "README.md", "docs/ü.md", "", "src/😀.ts"))
        args: dict = {"path": path} if name != "bash" else {"command": "ls -la"}
        if rng.random() < 0.3:
            args["offset"] = rng.choice((1, 2.5, 10))
        content.append({"type": "toolCall", "id": f"call{ms}", "name": name, "arguments": args})
    stop = rng.choice(("stop", "stop", "toolUse", "length", "error", "aborted"))
    message = {
        "role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic",
        "model": "claude-x", "usage": _usage(rng, tokens), "stopReason": stop, "timestamp": ms,
    }
    if stop == "error":
        message["errorMessage"] = "prompt is too long"
    return message


def _message_step(rng: random.Random, ms: int, tokens: int) -> dict:
    roll = rng.random()
    if roll < 0.3:
        content: Any = _text(rng, rng.randint(0, 40))
        if rng.random() < 0.5:
            content = [{"type": "text", "text": content}]
            if rng.random() < 0.2:
                content.append({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"})
        return {"role": "user", "content": content, "timestamp": ms}
    if roll < 0.65:
        return _assistant(rng, ms, tokens)
    if roll < 0.9:
        return {
            "role": "toolResult", "toolCallId": "c", "toolName": "read",
            "content": [{"type": "text", "text": _text(rng, rng.randint(0, 300))}],
            "isError": rng.random() < 0.1, "timestamp": ms,
        }
    return {
        "role": "bashExecution", "command": "make", "output": _text(rng, rng.randint(0, 20)),
        "exitCode": rng.choice((0, 2, None)), "cancelled": rng.random() < 0.2, "truncated": rng.random() < 0.3,
        "fullOutputPath": "/tmp/o.txt", "excludeFromContext": rng.random() < 0.2, "timestamp": ms,
    }


def random_steps(seed: int, count: int) -> list[dict]:
    """Seeded steps for ``session_create``: mostly messages, some of every other kind."""
    rng = random.Random(seed)
    steps: list[dict] = [{"model": {"provider": "anthropic", "modelId": "claude-x"}}]
    steps.append({"message": {"role": "user", "content": "start", "timestamp": 1780300000000}})
    steps.append({"message": _assistant(rng, 1780300000001, 500)})
    for i in range(count):
        ms = 1780300001000 + i * 1000
        roll = rng.random()
        if roll < 0.78:
            steps.append({"message": _message_step(rng, ms, 300 + 40 * i)})
        elif roll < 0.82:
            steps.append({"customMessage": {"customType": "ext", "content": _text(rng, 20), "display": True}})
        elif roll < 0.86 and i > 6:
            kept = rng.randint(max(1, len(steps) - 20), len(steps) - 1)
            details = {"readFiles": ["src/r.ts"], "modifiedFiles": ["src/m.ts"]}
            steps.append({"compaction": {"summary": _text(rng, 30), "firstKeptIndex": kept, "tokensBefore": 999,
                                         "details": details}})
        elif roll < 0.89 and i > 4:
            summary = _text(rng, 10) if rng.random() < 0.7 else ""
            steps.append({"branchWithSummary": {"from": rng.randint(1, len(steps) - 1), "summary": summary,
                                                "details": {"readFiles": ["x.md"], "modifiedFiles": []}}})
        elif roll < 0.92:
            steps.append({"thinkingLevel": rng.choice(("off", "low", "high"))})
        elif roll < 0.94:
            steps.append({"label": {"targetIndex": rng.randint(1, len(steps) - 1), "label": "l"}})
        elif roll < 0.96:
            steps.append({"customEntry": {"customType": "ext", "data": {"n": i}}})
        else:
            steps.append({"model": {"provider": "openai", "modelId": "gpt-x"}})
    return steps


def _mask_strings(value: Any, masks: Masks) -> Any:
    if isinstance(value, str):
        for line, mask in masks.by_line.items():
            if len(line) > 12:
                value = value.replace(line, mask)
        return value
    if isinstance(value, list):
        return [_mask_strings(v, masks) for v in value]
    if isinstance(value, dict):
        return {k: _mask_strings(v, masks) for k, v in value.items()}
    return value


def masked_copy(source: Path, target: Path, masks: Masks) -> Path:
    """``source`` with pi's sentences inside its content masked (a stored branch summary quotes pi's preamble)."""
    from pipeline.js import js_json

    lines = [js_json(_mask_strings(json.loads(line), masks)) for line in source.read_text("utf-8").splitlines()]
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


def make_sessions(oracle: Oracle, out: Path) -> list[Path]:
    """Generated sessions (written by pi), returned with the real ones."""
    out.mkdir(parents=True, exist_ok=True)
    requests = [
        {"op": "synth_session", "out": str(out / "synth-90.jsonl"), "entries": 90, "seed": 11},
        {"op": "synth_session", "out": str(out / "synth-160.jsonl"), "entries": 160, "seed": 29},
    ]
    for seed, count in ((1, 40), (2, 70), (3, 110), (4, 60), (5, 140)):
        requests.append({
            "op": "session_create", "cwd": "/w", "now": "2026-06-01T10:00:00Z", "seed": seed,
            "steps": random_steps(seed, count), "out": str(out / f"random-{seed}.jsonl"),
        })
    oracle.run(requests)
    generated = sorted(Path(r["out"]) for r in requests)
    return [REAL / f"{name}.jsonl" for name in REAL_NAMES] + generated


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


# =========================================================================== vectors


def leaves_of(oracle: Oracle, session: Path, rng: random.Random) -> list[str | None]:
    opened = oracle.one({"op": "session_open", "sessionFile": str(session)})
    ids = [e["id"] for e in opened["entries"]]
    picks = rng.sample(ids, min(2, len(ids)))
    return [None, *picks]


def plan_vectors(oracle: Oracle, sessions: list[Path]) -> list[dict]:
    rng = random.Random(7)
    cases, requests = [], []
    for session in sessions:
        for leaf in leaves_of(oracle, session, rng):
            for keep in KEEPS:
                request = {"op": "prepare_compaction", "sessionFile": str(session),
                           "settings": {"keepRecentTokens": keep, "reserveTokens": 16384}}
                if leaf:
                    request["leafId"] = leaf
                requests.append(request)
                cases.append({"session": rel(session), "leaf": leaf, "keep": keep})
    for case, result in zip(cases, oracle.run(requests)):
        case["expected"] = None if result is None else {
            k: result[k] for k in (
                "firstKeptEntryId", "firstKeptEntryIndex", "isSplitTurn", "tokensBefore",
                "messagesToSummarizeCount", "messagesToSummarizeRoles", "messagesToSummarizeTimestamps",
                "turnPrefixMessagesCount", "turnPrefixMessagesRoles", "turnPrefixMessagesTimestamps", "fileOps",
            )
        }
        if result is not None:
            case["expected"]["previousSummary"] = result.get("previousSummary")
    return cases


ODD_MESSAGES: list[dict] = [
    {"role": "user", "content": "hello", "timestamp": 1},
    {"role": "user", "content": "", "timestamp": 1},
    {"role": "user", "content": "😀😀😀", "timestamp": 1},
    {"role": "user", "content": [{"type": "text", "text": "ab"}, {"type": "text", "text": "cde"}], "timestamp": 1},
    {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image", "data": "x", "mimeType": "image/png"}],
     "timestamp": 1},
    {"role": "user", "content": [{"type": "image", "data": "x", "mimeType": "image/png"}], "timestamp": 1},
    {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "t1"}, {"type": "text", "text": "x1"},
        {"type": "toolCall", "id": "1", "name": "read", "arguments": {"path": "a.ts", "offset": 3}},
        {"type": "thinking", "thinking": "t2"}, {"type": "text", "text": "x2"},
        {"type": "toolCall", "id": "2", "name": "bash",
         "arguments": {"command": "ls -la \"q\"", "nested": {"k": [1, "é", 2.5, 1e21, -0.000001, True, None]}}},
    ], "stopReason": "toolUse", "timestamp": 1},
    {"role": "assistant", "content": [{"type": "text", "text": ""}], "stopReason": "stop", "timestamp": 1},
    {"role": "assistant", "content": [], "stopReason": "stop", "timestamp": 1},
    {"role": "assistant", "content": [{"type": "toolCall", "id": "3", "name": "ls", "arguments": {}}], "timestamp": 1},
    {"role": "assistant", "content": [{"type": "toolCall", "id": "4", "name": "w", "arguments": {"p": "é\n"}}],
     "timestamp": 1},
    {"role": "toolResult", "toolCallId": "1", "toolName": "read",
     "content": [{"type": "text", "text": "r1"}, {"type": "text", "text": "r2"}], "isError": False, "timestamp": 1},
    {"role": "toolResult", "toolCallId": "1", "toolName": "read", "content": [{"type": "text", "text": "y" * 2003}],
     "isError": False, "timestamp": 1},
    {"role": "toolResult", "toolCallId": "1", "toolName": "read", "content": [{"type": "text", "text": "😀" * 1001}],
     "isError": False, "timestamp": 1},
    {"role": "toolResult", "toolCallId": "1", "toolName": "read", "content": [{"type": "text", "text": "z" * 2000}],
     "isError": False, "timestamp": 1},
    {"role": "toolResult", "toolCallId": "1", "toolName": "read", "content": [{"type": "text", "text": "a" + "😀" * 1000}],
     "isError": False, "timestamp": 1},
    {"role": "toolResult", "toolCallId": "1", "toolName": "read",
     "content": [{"type": "image", "data": "x", "mimeType": "image/png"}], "isError": False, "timestamp": 1},
    {"role": "toolResult", "toolCallId": "1", "toolName": "read", "content": [], "isError": True, "timestamp": 1},
    {"role": "bashExecution", "command": "make", "output": "", "exitCode": 2, "cancelled": False, "truncated": True,
     "fullOutputPath": "/tmp/o.txt", "timestamp": 1},
    {"role": "bashExecution", "command": "sleep 9", "output": "partial", "exitCode": None, "cancelled": True,
     "truncated": False, "timestamp": 1},
    {"role": "bashExecution", "command": "secret", "output": "x", "exitCode": 0, "cancelled": False,
     "truncated": False, "excludeFromContext": True, "timestamp": 1},
    {"role": "bashExecution", "command": "ls", "output": "a\nb", "exitCode": 0, "cancelled": False,
     "truncated": False, "timestamp": 1},
    {"role": "custom", "customType": "x", "content": "custom text", "display": True, "timestamp": 1},
    {"role": "custom", "customType": "x", "content": "abcdefgh", "display": True, "timestamp": 1},
    {"role": "custom", "customType": "x", "content": [{"type": "text", "text": "a"},
                                                      {"type": "image", "data": "x", "mimeType": "image/png"}],
     "display": True, "timestamp": 1},
    {"role": "branchSummary", "summary": "BS", "fromId": "root", "timestamp": 1},
    {"role": "branchSummary", "summary": "123456789", "fromId": "root", "timestamp": 1},
    {"role": "compactionSummary", "summary": "CS", "tokensBefore": 5, "timestamp": 1},
    {"role": "compactionSummary", "summary": "12345678", "tokensBefore": 5, "timestamp": 1},
    {"role": "developer", "content": "ignored", "timestamp": 1},
]


def _with_usage(stop: str, usage: dict) -> dict:
    return {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "stopReason": stop, "usage": usage,
            "timestamp": 1}


def _u(inp: int, out: int, cr: int, cw: int, total: int) -> dict:
    return {"input": inp, "output": out, "cacheRead": cr, "cacheWrite": cw, "totalTokens": total,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


def token_vectors(oracle: Oracle, sessions: list[Path]) -> dict:
    session_messages = {}
    for session in sessions:
        opened = oracle.one({"op": "session_open", "sessionFile": str(session)})
        session_messages[rel(session)] = [e["message"] for e in opened["entries"] if e["type"] == "message"]
    contexts = [
        [{"role": "user", "content": "12345678", "timestamp": 1}, {"role": "user", "content": "1234", "timestamp": 1}],
        [_with_usage("stop", _u(1, 1, 0, 0, 1000)), {"role": "user", "content": "12345678", "timestamp": 1}],
        [_with_usage("stop", _u(100, 20, 5, 1, 0))],
        [_with_usage("stop", _u(0, 0, 0, 0, 500)), _with_usage("error", _u(0, 0, 0, 0, 9999)),
         {"role": "user", "content": "1234", "timestamp": 1}],
        [_with_usage("stop", _u(0, 0, 0, 0, 500)), _with_usage("stop", _u(0, 0, 0, 0, 0))],
        [_with_usage("stop", _u(0, 0, 0, 0, 500)), _with_usage("aborted", _u(0, 0, 0, 0, 800))],
        [_with_usage("stop", _u(0, 0, 0, 0, 500)), _with_usage("length", _u(0, 0, 0, 0, 700)),
         *ODD_MESSAGES[:6]],
        ODD_MESSAGES,
        [],
    ]
    thresholds = [
        (183616, 200000, {}), (183617, 200000, {}), (1, 0, {}), (0, 0, {}), (-20000, 0, {}),
        (190000, 200000, {"enabled": False}), (5000, 10000, {"reserveTokens": 5000}),
        (5001, 10000, {"reserveTokens": 5000}),
    ]
    requests: list[dict] = [{"op": "estimate_tokens", "messages": m} for m in session_messages.values()]
    requests.append({"op": "estimate_tokens", "messages": ODD_MESSAGES})
    requests += [{"op": "estimate_context_tokens", "messages": c} for c in contexts]
    requests += [
        {"op": "should_compact", "contextTokens": t, "contextWindow": w,
         "settings": {"enabled": True, "reserveTokens": 16384, "keepRecentTokens": 20000, **s}}
        for t, w, s in thresholds
    ]
    results = oracle.run(requests)
    n = len(session_messages)
    return {
        "sessions": [{"session": name, "tokens": r} for name, r in zip(session_messages, results[:n])],
        "odd": {"messages": ODD_MESSAGES, "tokens": results[n]},
        "contexts": [{"messages": c, "expected": r} for c, r in zip(contexts, results[n + 1 : n + 1 + len(contexts)])],
        "thresholds": [
            {"tokens": t, "window": w, "settings": s, "expected": r}
            for (t, w, s), r in zip(thresholds, results[n + 1 + len(contexts) :])
        ],
    }


def serialize_vectors(oracle: Oracle, sessions: list[Path], masks: Masks) -> dict:
    lists, sources = [ODD_MESSAGES, ODD_MESSAGES[::-1]], [{"messages": ODD_MESSAGES}, {"messages": ODD_MESSAGES[::-1]}]
    for session in sessions[:4] + sessions[-3:]:
        context = oracle.one({"op": "build_context", "sessionFile": str(session)})
        lists.append(context["agentMessages"][:80])
        sources.append({"session": rel(session), "count": 80})  # the test projects the same session itself
    fileop_cases = [
        {"messages": [
            {"role": "assistant", "content": [
                {"type": "toolCall", "id": str(i), "name": name, "arguments": args}
                for i, (name, args) in enumerate([
                    ("read", {"path": "b.ts"}), ("read", {"path": "a.ts"}), ("edit", {"path": "a.ts"}),
                    ("write", {"path": "c.ts"}), ("read", {"path": ""}), ("read", {"file": "d.ts"}),
                    ("Read", {"path": "e.ts"}), ("grep", {"path": "f"}), ("read", {"path": 5}),
                    ("read", {"path": "B.ts"}), ("read", {"path": "😀.ts"}), ("read", {"path": "～.ts"}),
                ])
            ], "timestamp": 1},
            {"role": "user", "content": [{"type": "toolCall", "name": "read", "arguments": {"path": "u.ts"}}],
             "timestamp": 1},
        ], "previousDetails": {"readFiles": ["p.ts", "a.ts"], "modifiedFiles": ["q.ts"]}},
        {"messages": ODD_MESSAGES},
    ]
    requests = [{"op": "serialize", "messages": m, "convert": True} for m in lists]
    requests += [{"op": "file_ops", **case} for case in fileop_cases]
    results = oracle.run(requests)
    return {
        "serialize": [dict(src, expected=masks.conversation(r)) for src, r in zip(sources, results)],
        "file_ops": [{**case, "expected": r} for case, r in zip(fileop_cases, results[len(lists) :])],
    }


def _capture(request: dict) -> dict:
    return {
        "systemPrompt": request["systemPrompt"],
        "userText": request["messages"][0]["content"][0]["text"],
        "maxTokens": request["options"]["maxTokens"],
        "reasoning": request["options"].get("reasoning"),
        "cacheRetention": request["options"].get("cacheRetention"),
    }


REPLY = {"text": "SUM-n", "thinking": "hidden", "usage": {"input": 100, "output": 20, "cacheRead": 3, "cacheWrite": 4,
                                                            "totalTokens": 127}}


def request_vectors(oracle: Oracle, sessions: list[Path], masks: Masks) -> dict:
    real = {p.stem: str(p) for p in sessions[:4]}
    model = {"reasoning": True, "maxTokens": 10000, "contextWindow": 200000}
    cases = [
        {"op": "summary_request", "sessionFile": real["short-chat"], "settings": {"keepRecentTokens": 100}},
        {"op": "summary_request", "sessionFile": real["long-coding"], "settings": {"keepRecentTokens": 20000},
         "customInstructions": "focus on tests", "thinkingLevel": "medium", "model": model},
        {"op": "summary_request", "sessionFile": real["multi-compaction"],
         "settings": {"keepRecentTokens": 4000, "reserveTokens": 4096}},
        {"op": "summary_request", "sessionFile": real["compacted-branched"], "settings": {"keepRecentTokens": 8000},
         "thinkingLevel": "high", "model": {"reasoning": False, "maxTokens": 1000}},
        {"op": "summary_request", "entries": raw_entries("U10 A10 U10 A10 C4:0:2 U10 A10 U10 A10"),
         "settings": {"keepRecentTokens": 20}},
        {"op": "summary_request", "entries": raw_entries("U5 A10 T10 A10 T10 A10"), "settings": {"keepRecentTokens": 20},
         "thinkingLevel": "off", "model": {"reasoning": True}},
        *({"op": "summary_request", "sessionFile": str(p), "settings": {"keepRecentTokens": 1000}} for p in sessions[-4:]),
    ]
    for case in cases:
        case.update(now=NOW, responses=[dict(REPLY, text=f"SUM-{i}\nL2") for i in (1, 2)])
    generate = [
        {"op": "generate_summary", "messages": ODD_MESSAGES, "reserveTokens": 4096},
        {"op": "generate_summary", "messages": ODD_MESSAGES[::-1], "previousSummary": "## Goal\nShip it",
         "customInstructions": "be brief", "reserveTokens": 1000, "thinkingLevel": "low", "model": {"reasoning": True}},
    ]
    for case in generate:
        case.update(now=NOW, responses=[REPLY])
    results = oracle.run(cases + generate)
    out = {"summary_request": [], "generate_summary": []}
    for case, result in zip(cases, results[: len(cases)]):
        out["summary_request"].append({
            "request": {k: v for k, v in case.items() if k not in ("op", "now", "responses", "sessionFile")},
            "session": rel(Path(case["sessionFile"])) if "sessionFile" in case else None,
            "responses": case["responses"],
            "calls": [dict(masks.capture(_capture(r)), kind=r["kind"]) for r in result["requests"]],
            "result": dict(result["result"], summary=masks.summary(result["result"]["summary"])),
        })
    for case, result in zip(generate, results[len(cases) :]):
        out["generate_summary"].append({
            "request": {k: v for k, v in case.items() if k not in ("op", "now", "responses", "sessionFile")},
            "calls": [masks.capture(_capture(r)) for r in result["requests"]],
            "result": result["result"],
        })
    branched = masked_copy(REAL / "compacted-branched.jsonl", HERE / "sessions" / "branched-masked.jsonl", masks)
    out["branch"] = branch_request_vectors(oracle, str(branched), masks)
    out["navigate"] = navigate_vectors(oracle, branched, masks)
    out["agent_compact"] = agent_vectors(oracle, sessions, masks)
    return out


def branch_request_vectors(oracle: Oracle, branched: str, masks: Masks) -> list[dict]:
    opened = oracle.one({"op": "session_open", "sessionFile": branched})
    ids = [e["id"] for e in opened["entries"]]
    pairs = [("ec085678", "d40b89c1"), (ids[-1], "ec085678"), (ids[-1], ids[40]), (ids[120], ids[-1])]
    cases = []
    for old, target in pairs:
        cases.append({"op": "branch_summary_request", "sessionFile": branched, "oldLeafId": old, "targetId": target})
    cases.append({"op": "branch_summary_request", "sessionFile": branched, "oldLeafId": ids[-1], "targetId": ids[3],
                  "customInstructions": "One paragraph.", "model": {"contextWindow": 20000}})
    cases.append({"op": "branch_summary_request", "sessionFile": branched, "oldLeafId": ids[-1], "targetId": ids[3],
                  "customInstructions": "Only a list.", "replaceInstructions": True})
    cases.append({"op": "branch_summary_request", "entries": raw_entries("U5 A5 C3:0:0 BS0 BS4 T4 CM3 MC A2"),
                  "responses": REPLY})
    for case in cases:
        case.setdefault("responses", REPLY)
        case["now"] = NOW
    results = oracle.run(cases)
    return [
        {"request": {k: v for k, v in c.items() if k not in ("op", "now", "responses", "sessionFile")},
         "session": rel(Path(c["sessionFile"])) if "sessionFile" in c else None,
         "entryIds": r["entryIds"], "calls": [masks.capture(_capture(q)) for q in r["requests"]],
         "result": dict(r["result"], summary=masks.summary(r["result"]["summary"]))}
        for c, r in zip(cases, results)
    ]


def navigate_vectors(oracle: Oracle, branched: Path, masks: Masks) -> list[dict]:
    """pi's ``/tree`` end to end on the branched session: the entries it appends and the new leaf."""
    opened = oracle.one({"op": "session_open", "sessionFile": str(branched)})
    entries = opened["entries"]
    users = [e["id"] for e in entries if e["type"] == "message" and e["message"]["role"] == "user"]
    others = [e["id"] for e in entries if e["type"] == "message" and e["message"]["role"] == "assistant"]
    targets = [("ec085678", None), (users[3], None), (others[10], "One paragraph."), (entries[-1]["id"], None),
               (users[0], None)]
    cases = [{"op": "agent_navigate", "sessionFile": str(branched), "targetId": t, "now": NOW, "responses": [REPLY],
              **({"customInstructions": c} if c else {})} for t, c in targets]
    results = oracle.run(cases)
    return [
        {"session": rel(branched), "targetId": c["targetId"], "customInstructions": c.get("customInstructions"),
         "leafId": r["leafId"], "calls": [masks.capture(_capture(q)) for q in r["requests"]],
         "newEntries": [dict(e, summary=masks.summary(e["summary"])) if "summary" in e else e for e in r["newEntries"]],
         "contextAfterCount": len(r["contextAfter"])}
        for c, r in zip(cases, results)
    ]


def agent_vectors(oracle: Oracle, sessions: list[Path], masks: Masks) -> list[dict]:
    cases = [
        {"op": "agent_compact", "sessionFile": str(sessions[1]), "settings": {"keepRecentTokens": 20000}},
        {"op": "agent_compact", "sessionFile": str(sessions[3]), "settings": {"keepRecentTokens": 4000,
                                                                              "reserveTokens": 4096},
         "customInstructions": "keep the paths"},
    ]
    for case in cases:
        case.update(now=NOW, responses=[dict(REPLY, text="HISTORY"), dict(REPLY, text="PREFIX")])
    results = oracle.run(cases)
    return [
        {"request": {k: v for k, v in c.items() if k not in ("op", "now", "sessionFile")}, "session": rel(Path(c["sessionFile"])),
         "compactionEntry": dict(r["compactionEntry"], summary=masks.summary(r["compactionEntry"]["summary"])),
         "contextAfterCount": len(r["contextAfter"])}
        for c, r in zip(cases, results)
    ]


def branch_vectors(oracle: Oracle, sessions: list[Path]) -> dict:
    rng = random.Random(3)
    cases = []
    for session in sessions:
        opened = oracle.one({"op": "session_open", "sessionFile": str(session)})
        ids = [e["id"] for e in opened["entries"]]
        for _ in range(4):
            cases.append({"op": "branch_entries", "sessionFile": str(session), "oldLeafId": rng.choice(ids),
                          "targetId": rng.choice(ids)})
    collected = oracle.run(cases)
    prepares, prep_meta = [], []
    for case, result in zip(cases, collected):
        for budget in (0, 300, 3000):
            prepares.append({"op": "prepare_branch", "entries": result["entries"], "tokenBudget": budget})
            prep_meta.append({"session": rel(Path(case["sessionFile"])), "oldLeafId": case["oldLeafId"],
                              "targetId": case["targetId"], "budget": budget})
    prepared = oracle.run(prepares)
    return {
        "entries": [
            {"session": rel(Path(c["sessionFile"])), "oldLeafId": c["oldLeafId"], "targetId": c["targetId"],
             "entryIds": r["entryIds"], "commonAncestorId": r["commonAncestorId"]}
            for c, r in zip(cases, collected)
        ],
        "prepare": [
            dict(meta, messageCount=len(r["messages"]), timestamps=[m.get("timestamp") for m in r["messages"]],
                 roles=[m.get("role") for m in r["messages"]], fileOps=r["fileOps"], totalTokens=r["totalTokens"])
            for meta, r in zip(prep_meta, prepared)
        ],
    }


# =========================================================================== main


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


def session_text(sessions: list[Path]) -> str:
    """Every string the committed session files hold (pi's own output, which some requests quote)."""
    found = []
    for session in sessions:
        for line in session.read_text(encoding="utf-8").splitlines():
            if line.strip():
                found.extend(_strings(json.loads(line)))
    return "\n".join(found)


ALLOWED = {"text": ""}


def write_json(name: str, value: Any, masks: Masks) -> None:
    masks.check(value, ALLOWED["text"])
    (HERE / name).write_text(json.dumps(value, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {name}: {(HERE / name).stat().st_size} bytes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oracle", default="/tmp/oracle", type=Path)
    args = parser.parse_args()
    oracle = Oracle(args.oracle)
    masks = Masks()
    profile = masked_profile(pi_texts(oracle), masks)
    masks.check(profile, "")
    (HERE / "pi_masked.yaml").write_text(
        "# Generated by gen_vectors.py: pi's summary structure with every pi sentence masked.\n"
        + json.dumps(profile, ensure_ascii=False, indent=1) + "\n", encoding="utf-8",
    )
    sessions = make_sessions(oracle, HERE / "sessions")
    ALLOWED["text"] = session_text(sessions)
    write_json("plans.json", plan_vectors(oracle, sessions), masks)
    write_json("tokens.json", token_vectors(oracle, sessions), masks)
    write_json("serialize.json", serialize_vectors(oracle, sessions, masks), masks)
    write_json("requests.json", request_vectors(oracle, sessions, masks), masks)
    write_json("branch.json", branch_vectors(oracle, sessions), masks)


if __name__ == "__main__":
    main()
