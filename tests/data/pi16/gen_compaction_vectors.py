"""Generate ``compaction.json``: pi 1.6.0's compaction plans, settings resolution (with
``modelOverrides``), serialization (thinking dropped) and summary-request structure, on the
same inputs as the 0.84.0 vectors of ``tests/data/compaction/`` so the differences show.

Needs a set-up pi 1.6.0 oracle (``$PI16_ORACLE``, see ``pi16_oracle.py``); tests do not.
Inputs are the committed sessions (``tests/data/sessions/real/*.jsonl``, byte-identical to
the shared oracle sessions, and ``tests/data/compaction/sessions/*.jsonl``).

* ``plans``: every ``prepare_compaction`` case of ``tests/data/compaction/plans.json``
  re-run under 1.6 (``pi16``) beside its 0.84.0 answer (``pi084``), plus per-model override
  cases (``settingsFor``);
* ``settings``: ``compaction_settings`` (``SettingsManager.getCompactionSettings(model)``);
* ``serialize``: ``serializeConversation`` on messages with thinking blocks;
* ``summary_requests``: the ``summary_request`` / ``generate_summary`` /
  ``branch_summary_request`` cases of ``tests/data/compaction/requests.json`` re-run under
  1.6, plus budget and override cases; each captured call's options, masked system prompt
  and masked user text, and the combined result.

pi's sentences are masked line by line (``P16_nn``; headings ``#``/``##``/``###`` and tag
lines stay), as in ``tests/data/compaction/gen_vectors.py``.

    python tests/data/pi16/gen_compaction_vectors.py
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pi16_oracle import HERE, Oracle, write_json  # noqa: E402

ROOT = HERE.parents[2]
sys.path.insert(0, str(ROOT / "tests" / "compaction"))

from entryspec import raw_entries  # noqa: E402

OLD = ROOT / "tests" / "data" / "compaction"
REAL = ROOT / "tests" / "data" / "sessions" / "real"
NOW = "2026-08-20T12:00:00Z"
REPLY = {"text": "SUM-n", "thinking": "hidden", "usage": {"input": 100, "output": 20, "cacheRead": 3, "cacheWrite": 4,
                                                            "totalTokens": 127}}


def rel(path: str | Path) -> str:
    return str(Path(path).resolve().relative_to(ROOT))


# --------------------------------------------------------------------------- masks


class LineMasks:
    def __init__(self) -> None:
        self.by_line: dict[str, str] = {}
        self.named: dict[str, tuple[str, str]] = {}

    def line(self, line: str) -> str:
        if not line or re.match(r"#{1,3} ", line) or line == "---" or re.fullmatch(r"</?[a-z-]+>", line):
            return line
        return self.by_line.setdefault(line, f"P16_{len(self.by_line) + 1:02d}")

    def add(self, name: str, text: str) -> None:
        self.named[name] = (text, "\n".join(self.line(x) for x in text.split("\n")))

    def sub(self, value: str, *names: str) -> str:
        for name in sorted(names or self.named, key=lambda n: -len(self.named[n][0])):
            value = value.replace(*self.named[name])
        return value

    def check(self, doc: Any, allowed: str) -> None:
        blob = json.dumps(doc, ensure_ascii=False)
        for line in self.by_line:
            quoted = json.dumps(line, ensure_ascii=False)[1:-1]
            if len(line) > 12 and quoted in blob and line not in allowed:
                raise AssertionError(f"unmasked pi text in output: {line[:60]!r}")


def user_text(call: dict) -> str:
    content = call["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(b["text"] for b in content if b["type"] == "text")


def learn(oracle: Oracle) -> LineMasks:
    m = LineMasks()
    user = {"role": "user", "content": "x", "timestamp": 1}
    const = oracle.one({"op": "constants"})
    first, update, custom = oracle.results([
        {"op": "generate_summary", "messages": [user], "responses": "R"},
        {"op": "generate_summary", "messages": [user], "previousSummary": "PREV", "responses": "R"},
        {"op": "generate_summary", "messages": [user], "customInstructions": "CUSTOMX", "responses": "R"},
    ])
    after = lambda r: user_text(r["requests"][0]).split("\n</conversation>\n\n", 1)[1]  # noqa: E731
    initial = after(first)
    split = oracle.one({"op": "summary_request", "entries": raw_entries("U5 A10 T10 A10 T10 A10"),
                        "settings": {"keepRecentTokens": 20}, "responses": "PREFIXTEXT"})
    head = split["result"]["summary"].split("PREFIXTEXT")[0]
    no_history, sep = head.split("\n\n---\n\n", 1)
    branch = oracle.one({"op": "branch_summary_request", "entries": raw_entries("U5"), "responses": "BRANCHTEXT"})
    empty = oracle.one({"op": "branch_summary_request", "entries": raw_entries("T5"), "responses": "R"})
    texts = {
        "system": const["SUMMARIZATION_SYSTEM_PROMPT"], "initial": initial,
        "update": user_text(update["requests"][0]).split("\n</previous-summary>\n\n", 1)[1],
        "turn_prefix": user_text(split["requests"][0]).rsplit("\n\n# Instructions\n", 1)[1],
        "branch": after(branch), "no_history": no_history, "separator": sep,
        "branch_preamble": branch["result"]["summary"].split("BRANCHTEXT")[0],
        "branch_empty": empty["result"]["summary"],
        "compaction_open": const["COMPACTION_SUMMARY_PREFIX"], "compaction_close": const["COMPACTION_SUMMARY_SUFFIX"],
        "branch_open": const["BRANCH_SUMMARY_PREFIX"], "branch_close": const["BRANCH_SUMMARY_SUFFIX"],
    }
    for name, text in texts.items():
        m.add(name, text)
    label = after(custom)[len(initial) + 2 :].split(": CUSTOMX")[0]
    m.named["focus_label"] = ("\n\n" + label + ": ", "\n\n" + m.line(label) + ": ")
    return m


def capture(call: dict, m: LineMasks) -> dict:
    text = user_text(call)
    if text.startswith("# Conversation\n"):
        body, tail = text.rsplit("\n\n# Instructions\n", 1)
        masked = m.sub(body, "compaction_open", "compaction_close", "branch_open", "branch_close") + "\n\n# Instructions\n" + m.sub(tail, "turn_prefix", "focus_label")
        shape = "turn_prefix"
    else:
        cut = text.rindex("\n</conversation>\n\n") + len("\n</conversation>\n\n")
        body, tail = text[:cut], text[cut:]
        prev = ""
        if tail.startswith("<previous-summary>\n"):
            end = tail.rindex("\n</previous-summary>\n\n") + len("\n</previous-summary>\n\n")
            prev, tail = tail[:end], tail[end:]
        masked = m.sub(body, "compaction_open", "compaction_close", "branch_open", "branch_close") + prev + m.sub(tail, "initial", "update", "branch", "focus_label")
        shape = "update" if prev else "history"
    options = {k: v for k, v in call["options"].items() if k not in ("apiKey", "signal")}
    return {"kind": call["kind"], "shape": shape, "options": options, "has_max_tokens": "maxTokens" in call["options"],
            "model": {k: call["model"].get(k) for k in ("provider", "id", "maxTokens", "reasoning")},
            "systemPrompt": m.sub(call["systemPrompt"], "system"), "messageCount": len(call["messages"]),
            "userText": masked}


def summary(text: str, m: LineMasks) -> str:
    if text == m.named["branch_empty"][0]:
        return m.named["branch_empty"][1]
    return m.sub(text, "no_history", "separator", "branch_preamble")


# --------------------------------------------------------------------------- vectors


def plans(oracle: Oracle) -> list[dict]:
    old = json.loads((OLD / "plans.json").read_text(encoding="utf-8"))
    cases = []
    for case in old:
        req = {"op": "prepare_compaction", "sessionFile": str(ROOT / case["session"]),
               "settings": {"keepRecentTokens": case["keep"], "reserveTokens": 16384}}
        if case["leaf"]:
            req["leafId"] = case["leaf"]
        cases.append((req, {"session": case["session"], "leaf": case["leaf"], "keep": case["keep"], "pi084": case["expected"]}))
    overrides = {"ollama/qwen3:8b": {"keepRecentTokens": 500}, "anthropic/claude-x": {"reserveTokens": 4096},
                 "openai/gpt-y": {"keepRecentTokens": 3000, "reserveTokens": 2048}}
    for session in sorted(REAL.glob("*.jsonl")):
        for provider, model_id in (("ollama", "qwen3:8b"), ("anthropic", "claude-x"), ("openai", "gpt-y"), ("other", "z")):
            settings = {"keepRecentTokens": 8000, "modelOverrides": overrides}
            req = {"op": "prepare_compaction", "sessionFile": str(session), "settings": settings,
                   "settingsFor": {"provider": provider, "id": model_id}}
            cases.append((req, {"session": rel(session), "leaf": None, "settings": settings,
                                "settingsFor": req["settingsFor"]}))
    keys = ("firstKeptEntryId", "firstKeptEntryIndex", "isSplitTurn", "tokensBefore", "messagesToSummarizeCount",
            "messagesToSummarizeRoles", "messagesToSummarizeTimestamps", "turnPrefixMessagesCount",
            "turnPrefixMessagesRoles", "turnPrefixMessagesTimestamps", "fileOps", "previousSummary", "settings")
    out = []
    for (_, case), result in zip(cases, oracle.results([r for r, _ in cases])):
        case["pi16"] = None if result is None else {k: result.get(k) for k in keys}
        out.append(case)
    return out


def settings_cases(oracle: Oracle) -> list[dict]:
    ov = {"ollama/qwen3-coder:30b": {"keepRecentTokens": 3000}, "anthropic/claude-x": {"reserveTokens": 4096},
          "a/b": {"reserveTokens": 1}, "openai/gpt-y": {"enabled": False, "keepRecentTokens": 10}}
    inputs = [
        ({}, None), ({"reserveTokens": 8000}, None), ({"modelOverrides": ov}, None),
        ({"reserveTokens": 8000, "modelOverrides": ov}, {"provider": "ollama", "id": "qwen3-coder:30b"}),
        ({"modelOverrides": ov}, {"provider": "anthropic", "id": "claude-x"}),
        ({"modelOverrides": ov}, {"provider": "a", "id": "c"}),
        ({"modelOverrides": ov}, {"provider": "a", "id": "b"}),
        ({"modelOverrides": ov}, {"provider": "openai", "id": "gpt-y"}),
        ({"enabled": False, "modelOverrides": ov}, {"provider": "ollama", "id": "qwen3-coder:30b"}),
        ({"keepRecentTokens": 100, "modelOverrides": {"x/y": {}}}, {"provider": "x", "id": "y"}),
        ({"modelOverrides": {"OLLAMA/Qwen": {"keepRecentTokens": 5}}}, {"provider": "ollama", "id": "qwen"}),
        ({"modelOverrides": {"p/m/n": {"keepRecentTokens": 7}}}, {"provider": "p", "id": "m/n"}),
    ]
    reqs = [{"op": "compaction_settings", "settings": s, **({"model": mdl} if mdl else {})} for s, mdl in inputs]
    return [{"settings": s, "model": mdl, "pi16": r} for (s, mdl), r in zip(inputs, oracle.results(reqs))]


def serialize_cases(oracle: Oracle) -> list[dict]:
    usage = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
    def asst(*blocks: dict) -> dict:
        return {"role": "assistant", "content": list(blocks), "api": "anthropic-messages", "provider": "anthropic",
                "model": "m", "usage": usage, "stopReason": "stop", "timestamp": 2}
    th = lambda t: {"type": "thinking", "thinking": t, "thinkingSignature": "c2ln"}  # noqa: E731
    tx = lambda t: {"type": "text", "text": t}  # noqa: E731
    call = {"type": "toolCall", "id": "1", "name": "read", "arguments": {"path": "a.ts"}}
    user = {"role": "user", "content": "q?", "timestamp": 1}
    sets = [
        [user, asst(th("Simple."), tx("4"))],
        [user, asst(th("Only thinking."))],
        [user, asst(th("t1"), call)],
        [user, asst(th("t1"), tx("x1"), th("t2"), tx("x2"), call)],
        [user, asst(tx(""), th("t"))],
        [asst(th("a"), th("b"))],
    ]
    old = json.loads((OLD / "serialize.json").read_text(encoding="utf-8"))
    olds = [v for v in old["serialize"] if "messages" in v]
    reqs = [{"op": "serialize", "messages": s} for s in sets] + [{"op": "serialize", "messages": v["messages"]} for v in olds]
    res = oracle.results(reqs)
    out = [{"messages": s, "pi16": r} for s, r in zip(sets, res)]
    out += [{"messages": v["messages"], "pi16": r, "pi084": v["expected"]} for v, r in zip(olds, res[len(sets):])]
    return out


def request_cases() -> list[tuple[dict, dict]]:
    old = json.loads((OLD / "requests.json").read_text(encoding="utf-8"))
    cases = []
    for group, op in (("summary_request", "summary_request"), ("generate_summary", "generate_summary"),
                      ("branch", "branch_summary_request")):
        for v in old[group]:
            req = {"op": op, **v["request"], "now": NOW, "responses": v.get("responses", [REPLY])}
            if v.get("session"):
                req["sessionFile"] = str(ROOT / v["session"])
            cases.append((req, {"op": op, "session": v.get("session"), "request": v["request"],
                                "pi084_maxTokens": [c.get("maxTokens") for c in v["calls"]],
                                "pi084_kinds": [c.get("kind") for c in v["calls"]]}))
    model = {"reasoning": True, "maxTokens": 2000, "contextWindow": 32000}
    ov = {"ollama/gpt-oss:120b": {"keepRecentTokens": 4000, "reserveTokens": 4096}}
    extra = [
        {"sessionFile": REAL / "long-coding.jsonl"},
        {"sessionFile": REAL / "short-chat.jsonl", "settings": {"keepRecentTokens": 100, "reserveTokens": 4096}, "model": model},
        {"sessionFile": REAL / "short-chat.jsonl", "settings": {"keepRecentTokens": 100, "reserveTokens": 100000},
         "model": {"maxTokens": 64000, "contextWindow": 200000}},
        {"sessionFile": REAL / "multi-compaction.jsonl", "settings": {"keepRecentTokens": 20000, "modelOverrides": ov},
         "settingsFor": {"provider": "ollama", "id": "gpt-oss:120b"}, "customInstructions": "Keep test names.",
         "thinkingLevel": "medium", "model": model, "sessionId": "019a0000-0000-7000-8000-000000000001"},
        {"sessionFile": REAL / "compacted-branched.jsonl", "settings": {"keepRecentTokens": 8000},
         "customInstructions": "Focus on the CLI changes.", "thinkingLevel": "high", "model": {"reasoning": True}},
        {"entries": raw_entries("U5 A10 T10 A10 T10 A10"), "settings": {"keepRecentTokens": 20}, "customInstructions": "F"},
        {"entries": raw_entries("U10 A10 U10 A10 C4:0:2 U10 A10 T10 A10"), "settings": {"keepRecentTokens": 20}},
    ]
    for e in extra:
        req = {"op": "summary_request", **{k: str(v) if isinstance(v, Path) else v for k, v in e.items()}, "now": NOW,
               "responses": [dict(REPLY, text=f"SUM-{i}\nL2") for i in (1, 2)]}
        meta = {k: v for k, v in req.items() if k not in ("op", "now", "responses", "sessionFile")}
        cases.append((req, {"op": "summary_request", "session": rel(e["sessionFile"]) if "sessionFile" in e else None,
                            "request": meta}))
    return cases


def summary_requests(oracle: Oracle, m: LineMasks) -> list[dict]:
    cases = request_cases()
    out = []
    for (req, case), res in zip(cases, oracle.results([r for r, _ in cases])):
        case["responses"] = req["responses"]
        case["calls"] = [capture(c, m) for c in res["requests"]]
        result = res["result"]
        if isinstance(result, dict) and "summary" in result:
            result = dict(result, summary=summary(result["summary"], m))
        case["result"] = result
        if "preparation" in res and res["preparation"]:
            case["preparation"] = {k: res["preparation"].get(k) for k in ("firstKeptEntryId", "isSplitTurn", "tokensBefore",
                                                                         "messagesToSummarizeCount", "turnPrefixMessagesCount")}
        out.append(case)
    return out


def main() -> int:
    oracle = Oracle()
    masks = learn(oracle)
    doc = {
        "pi_version": "1.6.0", "compared_with": "0.84.0", "generator": "tests/data/pi16/gen_compaction_vectors.py",
        "masks": {"line_tokens": len(masks.by_line), "rule": "each distinct non-heading line of pi's texts -> P16_nn"},
        "plans": plans(oracle), "settings": settings_cases(oracle), "serialize": serialize_cases(oracle),
        "summary_requests": summary_requests(oracle, masks),
    }
    oracle.close()
    allowed = "".join(p.read_text(encoding="utf-8") for p in [*REAL.glob("*.jsonl"), *(OLD / "sessions").glob("*.jsonl")])
    masks.check(doc, allowed)
    write_json(HERE / "compaction.json", doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
