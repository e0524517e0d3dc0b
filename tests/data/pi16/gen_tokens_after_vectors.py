"""Generate ``tokens_after.json``: pi 1.6.0's ``estimatedTokensAfter`` of manual compactions
(issue 22, item 6), through the oracle's ``agent_compact`` (``AgentSession.compact``).

Needs a set-up pi 1.6.0 oracle (``$PI16_ORACLE``, see ``pi16_oracle.py``); tests do not.
Inputs: every session file under ``sessions/`` (pi 1.6's own, masked, and the ones our
runtime wrote: recorded system messages, a compaction with its ``systemMessage``) and the
0.84.0 files of ``tests/data/sessions/real/`` (no system message), and those files with
recorded system messages and context edits inserted (``variant``, ``tests/pi16/pi1_derive.py``),
each at its last entry
and at up to two earlier assistant replies, under several ``keepRecentTokens``. The
summarizer's replies are fixed (``responses``).

Per vector: the input (``file``, ``leafId``, ``settings``, ``responses``) and pi's answer:
``tokensBefore``, ``firstKeptEntryId``, ``estimatedTokensAfter``, the UTF-16 length of the
summary pi wrote (``summaryChars``: the summary holds one of pi's sentences when the turn
was split, so the text itself is not kept; the estimate reads only its length), and the
compaction's ``systemMessage`` (the replay of the file's own system messages, in the
file's words). Fixed inputs and a pinned clock: a re-run writes the same file.

    python tests/data/pi16/gen_tokens_after_vectors.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path[:0] = [str(HERE), str(ROOT / "tests" / "pi16")]

from pi1_derive import VARIANTS, derive  # noqa: E402
from pi16_oracle import PACKAGE_DIR, Oracle, write_json  # noqa: E402

NOW = "2026-11-25T12:00:00Z"
RESPONSES = ["HISTORY SUMMARY", "PREFIX SUMMARY"]
KEEP = (300, 2000, 8000)
REAL = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "tests" / "data" / "sessions" / "real").glob("*.jsonl"))
#: (file, variant of tests/pi16/pi1_derive.py or None)
FILES = [*((p.relative_to(ROOT).as_posix(), None) for p in sorted((HERE / "sessions").glob("*.jsonl"))),
         *((f, None) for f in REAL),
         *((f, v) for f in REAL if "short-chat" not in f for v in VARIANTS)]


def u16len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def session_text(file: str, variant: str | None) -> str:
    text = (ROOT / file).read_text(encoding="utf-8")
    return text if variant is None else derive(text, variant)


def leaves(text: str) -> list[str | None]:
    """The file's own leaf (``None``) and up to two earlier assistant replies on the way to it."""
    entries = [json.loads(line) for line in text.splitlines()[1:] if line.strip()]
    replies = [e["id"] for e in entries if e.get("type") == "message" and e["message"].get("role") == "assistant"
               and e["message"].get("stopReason") == "stop"]
    if len(replies) <= 6:
        return [None]
    return [None, *dict.fromkeys((replies[len(replies) // 2], replies[len(replies) // 3]))]


def main() -> int:
    oracle = Oracle()
    requests, inputs = [], []
    for file, variant in FILES:
        text = session_text(file, variant)
        for leaf in leaves(text):
            for keep in KEEP:
                request: dict[str, Any] = {"op": "agent_compact", "packageDir": PACKAGE_DIR, "jsonl": text, "now": NOW,
                                           "responses": RESPONSES, "settings": {"keepRecentTokens": keep}}
                if leaf is not None:
                    request["leafId"] = leaf
                requests.append(request)
                inputs.append({"file": file, "variant": variant, "leafId": leaf, "settings": {"keepRecentTokens": keep}})
    vectors = []
    for given, env in zip(inputs, oracle.envelopes(requests, chunk=8)):
        if not env["ok"]:  # nothing to compact at this point (pi refuses): not a vector
            given["refused"] = True
            continue
        result, entry = env["result"]["result"], env["result"]["compactionEntry"]
        assert entry["type"] == "compaction" and entry["summary"] == result["summary"]
        vectors.append({
            **given, "responses": RESPONSES,
            "pi": {"tokensBefore": result["tokensBefore"], "firstKeptEntryId": result["firstKeptEntryId"],
                   "estimatedTokensAfter": result["estimatedTokensAfter"], "summaryChars": u16len(result["summary"]),
                   "systemMessage": entry.get("systemMessage")},
        })
    oracle.close()
    doc = {
        "pi_version": "1.6.0", "generator": "tests/data/pi16/gen_tokens_after_vectors.py", "now": NOW,
        "refused": sum(1 for g in inputs if g.get("refused")),
        "vectors": vectors,
    }
    write_json(HERE / "tokens_after.json", doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
