"""Generate ``edits.json``: pi 1.6.0's ``appendContextEdit`` (through the oracle's
``session_create`` ``contextEdit`` step) on every kind of target entry with every kind of
replacement, and ``build_context`` of each file it wrote.

Per case: the session steps before the edit (``steps``: one base session, a variant after a
compaction, one on another branch), the edit (``target`` step index, ``replacement`` as
given), and pi's answer: ``written`` (the ``context_edit`` entry's ``targetId`` and
``replacement`` as pi wrote it; ``null`` when pi refused the edit, its error sentence not
kept) and ``context`` (``build_context``'s agent messages of the file: role and content).
``base_jsonl``: pi's file of the steps alone, so a test can append the same edit with our
store. Our own filler text only: no pi sentence.

Needs a set-up pi 1.6.0 oracle (``$PI16_ORACLE``, see ``pi16_oracle.py``); tests do not.

    python tests/data/pi16/gen_edit_vectors.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pi16_oracle import HERE, Oracle, write_json  # noqa: E402

T0 = 1780308000000
USAGE = {"input": 3, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 5,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


def _assistant(i: int, *blocks: dict) -> dict:
    return {"message": {"role": "assistant", "content": list(blocks), "api": "anthropic-messages",
                        "provider": "anthropic", "model": "m", "usage": USAGE,
                        "stopReason": "toolUse" if any(b["type"] == "toolCall" for b in blocks) else "stop",
                        "timestamp": T0 + i}}


BASE = [
    {"model": {"provider": "anthropic", "modelId": "m"}},                                          # 0
    {"message": {"role": "system", "content": "", "sections": {"preamble": "p" * 20}, "timestamp": T0}},  # 1
    {"message": {"role": "user", "content": [{"type": "text", "text": "question one"}], "timestamp": T0 + 2}},  # 2
    _assistant(3, {"type": "text", "text": "reading"},
               {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.ts"}}),   # 3
    {"message": {"role": "toolResult", "toolCallId": "c1", "toolName": "read",
                 "content": [{"type": "text", "text": "file a"}], "isError": False, "timestamp": T0 + 4}},  # 4
    _assistant(5, {"type": "text", "text": "answer one"}),                                         # 5
    {"customMessage": {"customType": "note", "content": "a note", "display": True}},               # 6
    {"message": {"role": "bashExecution", "command": "ls", "output": "a.ts", "exitCode": 0,
                 "cancelled": False, "truncated": False, "timestamp": T0 + 7}},                    # 7
    {"message": {"role": "user", "content": "question two", "timestamp": T0 + 8}},                 # 8
    _assistant(9, {"type": "text", "text": "answer two"}),                                         # 9
    {"thinkingLevel": "high"},                                                                      # 10
]
COMPACTED = BASE + [{"compaction": {"summary": "the story", "firstKeptIndex": 8, "tokensBefore": 100}},  # 11
                    {"message": {"role": "user", "content": "three", "timestamp": T0 + 12}},          # 12
                    _assistant(13, {"type": "text", "text": "answer three"})]                         # 13
BRANCHED = BASE + [{"branch": 5},
                   {"branchWithSummary": {"from": 5, "summary": "went elsewhere"}},                  # 12
                   {"message": {"role": "user", "content": "back", "timestamp": T0 + 13}},          # 13
                   _assistant(14, {"type": "text", "text": "welcome back"})]                         # 14

REPLACEMENTS = [
    None,
    {"content": "shorter"},
    {"content": ""},
    {"content": [{"type": "text", "text": "block text"}]},
    {"content": [{"type": "text", "text": "t"}, {"type": "toolCall", "id": "x", "name": "read",
                                                   "arguments": {"path": "new.ts"}}]},
    {"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]},
    {"content": []},
    {"content": "kept", "note": "an extra key"},
    {},
    {"content": 5},
    {"content": None},
    "a bare string",
    [1],
]


def cases() -> list[dict]:
    out = []
    for name, steps, targets in (("base", BASE, range(11)), ("compacted", COMPACTED, (2, 3, 5, 8, 9, 11, 12, 13)),
                                 ("branched", BRANCHED, (2, 3, 7, 8, 12, 13))):
        for target in targets:
            for replacement in REPLACEMENTS:
                out.append({"session": name, "target": target, "replacement": replacement})
    return out


def main() -> int:
    oracle = Oracle()
    sessions = {"base": BASE, "compacted": COMPACTED, "branched": BRANCHED}
    common = {"op": "session_create", "cwd": "/w", "now": "2026-06-01T10:00:00Z", "seed": 7}
    bases = dict(zip(sessions, oracle.results([{**common, "steps": s} for s in sessions.values()])))
    todo = cases()
    requests = [{**common, "steps": [*sessions[c["session"]], {"contextEdit": {"targetIndex": c["target"],
                                                                               "replacement": c["replacement"]}}]}
                for c in todo]
    envelopes = oracle.envelopes(requests)
    written = []
    for case, env in zip(todo, envelopes):
        if not env["ok"]:
            case["written"] = None
            continue
        last = json.loads(env["result"]["jsonl"].splitlines()[-1])
        assert last["type"] == "context_edit"
        case["written"] = {"targetId": last["targetId"], "replacement": last["replacement"]}
        written.append((case, env["result"]["jsonl"]))
    contexts = oracle.results([{"op": "build_context", "jsonl": jsonl} for _, jsonl in written])
    for (case, _), result in zip(written, contexts):
        case["context"] = [{k: m[k] for k in ("role", "content", "summary", "command") if k in m}
                           for m in result["agentMessages"]]
    oracle.close()
    doc = {"pi_version": "1.6.0", "generator": "tests/data/pi16/gen_edit_vectors.py",
           "base_jsonl": {k: v["jsonl"] for k, v in bases.items()}, "base_ids": {k: v["ids"] for k, v in bases.items()},
           "cases": todo}
    write_json(HERE / "edits.json", doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
