#!/usr/bin/env python3
"""Generate converter vectors: pi-ai 0.84.0's own providers talking to the loopback server.

Needs the pi oracle's Node and packages (``$PI_ORACLE`` or ``--oracle DIR``); the tests do not.

    python tests/data/agent_loop/convert/gen_convert_vectors.py --oracle DIR [--check]

For every case (a context: system prompt, messages, tools; a target model; one scripted
reply) pi-ai's real ``openai-completions`` and ``anthropic-messages`` stream functions send
their request to :class:`pipeline.testing.loopback.LoopbackServer`. Recorded per case and
format: the request body pi sent (``body``) and the assistant message pi built from the
server-sent events the server answered with (``message``, without its timestamp). The
test feeds the same context to :mod:`pipeline.llm.wire` and compares the bodies, and
parses the same events (rebuilt from ``reply`` by the loopback server's own functions) and
compares the messages.

pi inserts a few texts of its own when converting (an orphan tool call's result, image
placeholders); the cases avoid them, so no pi sentence is recorded, and our converter's
texts are exercised by the table tests instead.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[3]))

from pipeline.testing.loopback import LoopbackServer  # noqa: E402

IMAGE = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
READ = {"name": "read", "description": "Read a file.",
        "parameters": {"type": "object", "required": ["path"],
                       "properties": {"path": {"type": "string"}, "limit": {"type": "number"}}}}
LS = {"name": "ls", "description": "List a directory.", "parameters": {"type": "object", "properties": {}}}


def model(api: str, **extra) -> dict:
    base = {"openai-completions": {"id": "gpt-test", "provider": "local", "api": api},
            "anthropic-messages": {"id": "claude-test", "provider": "anthropic", "api": api}}[api]
    return {**base, "name": base["id"], "reasoning": False, "input": ["text", "image"],
            "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
            "contextWindow": 200000, "maxTokens": 4096, **extra}


def u(content, ts=1):
    return {"role": "user", "content": content, "timestamp": ts}


def a(*content, who=None, stop="stop", **extra):
    who = who or {}
    return {"role": "assistant", "content": list(content), "api": who.get("api", "API"),
            "provider": who.get("provider", "PROVIDER"), "model": who.get("id", "MODEL"),
            "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                      "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": stop, "timestamp": 2, **extra}


def r(id, *content, error=False, name="read"):
    return {"role": "toolResult", "toolCallId": id, "toolName": name,
            "content": list(content) or [{"type": "text", "text": "out"}], "isError": error, "timestamp": 3}


def t(text):
    return {"type": "text", "text": text}


def tc(id, name="read", **arguments):
    return {"type": "toolCall", "id": id, "name": name, "arguments": arguments}


# "same": the history's assistant messages come from the target model ("SAME" is replaced
# per format); anything else is another model.
CASES = [
    {"name": "plain", "messages": [u("hello")], "reply": "hi there"},
    {"name": "blocks-and-image", "messages": [u([t("look at"), IMAGE, t("  ")])], "reply": "a picture"},
    {"name": "tools-single", "tools": [READ], "messages": [u("read a")],
     "reply": {"toolCalls": [{"name": "read", "arguments": {"path": "a"}, "id": "call_1"}],
               "usage": {"input": 120, "output": 8, "cacheRead": 30}}},
    {"name": "tool-history", "tools": [READ, LS], "same": True,
     "messages": [u("read a and list"), a(t("Sure."), tc("call_1", path="a"), tc("call_2", name="ls"), stop="toolUse"),
                  r("call_1", t("line 1"), t("line 2")), r("call_2", t("a.txt"), name="ls"), u("thanks")],
     "reply": {"text": "done", "usage": {"input": 500, "output": 20, "cacheWrite": 100}}},
    {"name": "tool-error-result", "tools": [READ], "same": True,
     "messages": [u("read b"), a(tc("call_9", path="b"), stop="toolUse"), r("call_9", t("ENOENT"), error=True)],
     "reply": {"text": "missing", "stopReason": "length", "usage": {"output": 4096}}},
    {"name": "failed-replies-dropped", "same": True,
     "messages": [u("q"), a(t("partial"), stop="error", errorMessage="boom"), a(stop="aborted"), u("again")],
     "reply": "answer"},
    {"name": "foreign-history", "tools": [READ],
     "messages": [u("q"), a({"type": "thinking", "thinking": "hidden why", "thinkingSignature": "sig"},
                            t("visible"), tc("call|item/1+x", path="z"), stop="toolUse"),
                  r("call|item/1+x"), u("next")],
     "reply": {"thinking": "plan", "thinkingSignature": "s-9", "text": "ok"}},
    {"name": "no-tools-with-history", "same": True,
     "messages": [u("q"), a(tc("call_3", path="a"), stop="toolUse"), r("call_3"), u("go on")], "reply": "fine"},
    {"name": "surrogates-and-unicode", "messages": [u("caf\u00e9 \ud83d\ude00 lone\ud800!")], "reply": "\u00e9t\u00e9"},
    {"name": "empty-system", "system": "", "messages": [u("x")], "reply": "y"},
    {"name": "same-model-thinking", "same": True,
     "messages": [u("q"), a({"type": "thinking", "thinking": "t1", "thinkingSignature": "reasoning_content"},
                            {"type": "thinking", "thinking": " "}, t("ans")), u("more")],
     "reply": {"thinking": "deeper", "thinkingSignature": "sig-2", "text": "more"}},
    {"name": "same-model-redacted", "same": True,
     "messages": [u("q"), a({"type": "thinking", "thinking": "[x]", "thinkingSignature": "OPAQUE", "redacted": True},
                            t("ans")), u("more")], "reply": "ok"},
    {"name": "reasoning-model", "reasoning": True, "messages": [u("think hard")],
     "options": {"openai-completions": {"reasoningEffort": "high"},
                 "anthropic-messages": {"thinkingEnabled": True, "thinkingBudgetTokens": 2048}},
     "reply": {"thinking": "hmm", "thinkingSignature": "sig-r", "text": "42", "usage": {"input": 10, "output": 300}}},
    {"name": "reasoning-model-off", "reasoning": True, "messages": [u("quick")],
     "options": {"anthropic-messages": {"thinkingEnabled": False}}, "reply": "fast"},
]


NODE_SCRIPT = r"""
import { pathToFileURL } from "node:url";
const root = process.env.PI_AI_DIST;
const apis = {
  "openai-completions": await import(pathToFileURL(root + "/api/openai-completions.js").href),
  "anthropic-messages": await import(pathToFileURL(root + "/api/anthropic-messages.js").href),
};
const cases = JSON.parse(await new Promise((ok) => { let s = ""; process.stdin.on("data", (d) => (s += d)); process.stdin.on("end", () => ok(s)); }));
const out = [];
for (const c of cases) {
  const m = { ...c.model, baseUrl: c.model.api === "openai-completions" ? process.env.OPENAI_BASE : process.env.ANTHROPIC_BASE };
  const s = apis[m.api].stream(m, c.context, { apiKey: "test-key", maxTokens: c.maxTokens, cacheRetention: "none", maxRetries: 0, ...c.options });
  const message = await s.result();
  out.push(message);
}
process.stdout.write(JSON.stringify(out));
"""


def contexts(case: dict) -> list[dict]:
    out = []
    for api in ("openai-completions", "anthropic-messages"):
        target = model(api, reasoning=case.get("reasoning", False))
        messages = json.loads(json.dumps(case["messages"]))
        if case.get("same"):
            for m in messages:
                if m["role"] == "assistant":
                    m.update(api=target["api"], provider=target["provider"], model=target["id"])
        context = {"systemPrompt": case.get("system", "You are a test."), "messages": messages}
        if case.get("tools"):
            context["tools"] = case["tools"]
        out.append({"case": case["name"], "model": target, "context": context, "maxTokens": 1000,
                    "options": case.get("options", {}).get(api, {})})
    return out


def run(oracle_dir: Path) -> list[dict]:
    runs = [c for case in CASES for c in contexts(case)]
    replies = [case["reply"] for case in CASES for _ in range(2)]
    dist = oracle_dir / "node_modules" / "@earendil-works" / "pi-ai" / "dist"
    with LoopbackServer(replies) as server, tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "convert.mjs"
        script.write_text(NODE_SCRIPT, encoding="utf-8")
        env = {**os.environ, "PI_AI_DIST": str(dist), "OPENAI_BASE": server.openai_base_url,
               "ANTHROPIC_BASE": server.anthropic_base_url}
        proc = subprocess.run([str(oracle_dir / "oracle"), "--node", str(script)], input=json.dumps(runs),
                              capture_output=True, text=True, env=env, check=True)
        messages = json.loads(proc.stdout)
        received = list(server.received)
    assert len(received) == len(runs) == len(messages), proc.stderr[-2000:]
    vectors = []
    for run_, reply, got, message in zip(runs, replies, received, messages):
        message.pop("timestamp", None)
        vectors.append({**run_, "reply": reply, "body": got.body, "message": message})
    return vectors


def render(data) -> str:
    return json.dumps(data, ensure_ascii=True, indent=1) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oracle", default=os.environ.get("PI_ORACLE"), help="the pi oracle's directory")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    if not args.oracle:
        parser.error("give --oracle DIR or set PI_ORACLE")
    text = render(run(Path(args.oracle)))
    target = HERE / "convert_vectors.json"
    if args.check:
        same = target.read_text(encoding="utf-8") == text
        print("identical" if same else "differ")
        return 0 if same else 1
    target.write_text(text, encoding="utf-8")
    print(f"wrote {target.name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
