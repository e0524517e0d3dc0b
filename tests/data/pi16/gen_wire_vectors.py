"""Generate ``wire.json``: where pi-ai 1.6.0 puts a transcript's system messages on the wire.

Needs a set-up pi 1.6.0 oracle (``$PI16_ORACLE``, see ``pi16_oracle.py``); tests do not.

pi-ai 1.6.0's own ``openai-completions`` and ``anthropic-messages`` stream functions send each
transcript (pi 1.x's ``TranscriptContext``: a leading system message with sections and tool
declarations, later ones patching sections or tools, in place) to
:class:`pipeline.testing.loopback.LoopbackServer`; recorded is the request body each sent,
for a model with ``compat.supportsMidConvoSystemMessages`` true (later system messages sent
in place, framed as updates) and false (collapsed into one replayed leading prompt), and on
OpenAI also for a reasoning model with developer-role support (``developer`` messages).

The section texts are the cases' own; pi's only words in the bodies, the update framing
(``Updated system prompt section "x":`` / ``Removed …``), are masked as ``<UPD>`` / ``<REM>``
(what ``patches.json`` calls them).

    python tests/data/pi16/gen_wire_vectors.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from pi16_oracle import HERE, ORACLE_DIR, Oracle, write_json  # noqa: E402

from pipeline.testing.loopback import LoopbackServer  # noqa: E402

READ = {"name": "read", "description": "Read a file.",
        "parameters": {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}}
LS = {"name": "ls", "description": "List a directory.", "parameters": {"type": "object", "properties": {}}}
USAGE = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


def sys_msg(sections=None, content="", added=None, removed=None) -> dict:
    m: dict = {"role": "system", "content": content}
    if sections is not None:
        m["sections"] = sections
    m["timestamp"] = 1
    if added:
        m["toolsAdded"] = added
    if removed:
        m["toolsRemoved"] = [{"name": n} for n in removed]
    return m


def u(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}


def a(*content, stop="stop") -> dict:
    blocks = [{"type": "text", "text": c} if isinstance(c, str) else c for c in content]
    return {"role": "assistant", "content": blocks, "api": "API", "provider": "PROVIDER", "model": "MODEL",
            "usage": USAGE, "stopReason": stop, "timestamp": 2}


def call(id_: str, path: str) -> dict:
    return {"type": "toolCall", "id": id_, "name": "read", "arguments": {"path": path}}


def result(id_: str, text: str = "out") -> dict:
    return {"role": "toolResult", "toolCallId": id_, "toolName": "read", "content": [{"type": "text", "text": text}],
            "isError": False, "timestamp": 3}


LEAD = sys_msg({"preamble": "You help.", "tools": "<tools>\n- read\n</tools>", "cwd": "<cwd>\n/w\n</cwd>"},
               added=[READ])

CASES = [
    {"name": "patch-before-user", "messages": [LEAD, u("one"), a("a1"), sys_msg({"todo": "<todo>\nx\n</todo>"}), u("two")]},
    {"name": "change-and-remove", "messages": [
        LEAD, u("one"), a("a1"), sys_msg({"todo": "<todo>\nx\n</todo>"}), u("two"), a("a2"),
        sys_msg({"cwd": "<cwd>\n/w/sub\n</cwd>", "todo": None}), u("three")]},
    {"name": "tool-added", "messages": [
        LEAD, u("one"), a("a1"), sys_msg({"tools": "<tools>\n- read\n- ls\n</tools>"}, added=[LS]), u("two")]},
    {"name": "tool-removed", "messages": [
        LEAD, u("one"), a("a1"), sys_msg({"tools": "<tools>\n(none)\n</tools>"}, removed=["read"]), u("two")]},
    {"name": "patch-after-tool-result", "messages": [
        LEAD, u("read a"), a(call("call_1", "a"), stop="toolUse"), result("call_1"),
        sys_msg({"todo": "<todo>\nread\n</todo>"})]},
    {"name": "patch-between-call-and-result", "messages": [
        LEAD, u("read a"), a(call("call_1", "a"), stop="toolUse"), sys_msg({"todo": "<todo>\nheld\n</todo>"}),
        result("call_1"), a("done"), u("next")]},
    {"name": "patch-past-failed-reply", "messages": [
        LEAD, u("one"), a("partial", stop="error"), sys_msg({"todo": "<todo>\nx\n</todo>"}), u("two")]},
    {"name": "two-patches-in-a-row", "messages": [
        LEAD, u("one"), a("a1"), sys_msg({"todo": "<todo>\nx\n</todo>"}), sys_msg({"cwd": "<cwd>\n/v\n</cwd>"}),
        u("two")]},
    {"name": "no-leading-message", "messages": [  # a session from 0.84.0: the whole prompt mid-conversation
        u("one"), a("a1"), sys_msg(LEAD["sections"], added=[READ]), u("two")]},
    {"name": "content-and-sections", "messages": [
        sys_msg({"preamble": "You help."}, content="Base words."), u("one"), a("a1"),
        sys_msg({"preamble": "You help more."}, content="More words."), u("two")]},
]

MODELS = {
    "openai": {"id": "gpt-test", "provider": "local", "api": "openai-completions"},
    "openai-developer": {"id": "gpt-test", "provider": "local", "api": "openai-completions", "reasoning": True,
                         "compat": {"supportsDeveloperRole": True}},
    "anthropic": {"id": "claude-test", "provider": "anthropic", "api": "anthropic-messages"},
}

NODE_SCRIPT = r"""
import { pathToFileURL } from "node:url";
const root = process.env.PI_AI_DIST;
const apis = {
  "openai-completions": await import(pathToFileURL(root + "/api/openai-completions.js").href),
  "anthropic-messages": await import(pathToFileURL(root + "/api/anthropic-messages.js").href),
};
const runs = JSON.parse(await new Promise((ok) => { let s = ""; process.stdin.on("data", (d) => (s += d)); process.stdin.on("end", () => ok(s)); }));
for (const r of runs) {
  const m = { ...r.model, baseUrl: r.model.api === "openai-completions" ? process.env.OPENAI_BASE : process.env.ANTHROPIC_BASE };
  const s = apis[m.api].stream(m, { messages: r.messages }, { apiKey: "test-key", maxTokens: 1000, cacheRetention: "none", maxRetries: 0 });
  await s.result();
}
process.stdout.write("ok");
"""


def runs() -> list[dict]:
    out = []
    for case in CASES:
        for kind, spec in MODELS.items():
            for mid in (True, False):
                if kind == "openai-developer" and not mid:
                    continue
                compat = {**spec.get("compat", {}), "supportsMidConvoSystemMessages": mid}
                model = {**spec, "name": spec["id"], "reasoning": spec.get("reasoning", False), "input": ["text"],
                         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                         "contextWindow": 200000, "maxTokens": 4096, "compat": compat}
                out.append({"case": case["name"], "kind": kind, "mid": mid, "model": model, "messages": case["messages"]})
    return out


def update_words(oracle: Oracle) -> dict[str, str]:
    res = oracle.one({"op": "diff_system_prompt_sections", "previousSections": {"zz": "1"},
                      "currentSections": {"yy": "2"}})
    upd, rem = res["update"].split("\n\n2\n\n")
    return {"<UPD>": upd.split('"yy"')[0], "<REM>": rem.split('"zz"')[0]}


def mask(value, words: dict[str, str]):
    text = json.dumps(value)
    for token, sentence in words.items():
        text = text.replace(json.dumps(sentence)[1:-1], token)
    return json.loads(text)


def main() -> int:
    oracle = Oracle()
    words = update_words(oracle)
    oracle.close()
    items = runs()
    dist = ORACLE_DIR / "node_modules" / "@earendil-works" / "pi-ai" / "dist"
    with LoopbackServer(["ok"]) as server, tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "wire.mjs"
        script.write_text(NODE_SCRIPT, encoding="utf-8")
        env = {**os.environ, "PI_AI_DIST": str(dist), "OPENAI_BASE": server.openai_base_url,
               "ANTHROPIC_BASE": server.anthropic_base_url}
        proc = subprocess.run([str(ORACLE_DIR / "oracle"), "--node", str(script)], input=json.dumps(items),
                              capture_output=True, text=True, env=env, check=True)
        received = list(server.received)
    assert len(received) == len(items), proc.stderr[-2000:]
    vectors = []
    for item, got in zip(items, received):
        body = got.body
        sent = {"messages": body["messages"]} if item["model"]["api"] == "openai-completions" else \
            {"system": body.get("system"), "messages": body["messages"]}
        sent["tools"] = [t.get("name") or t["function"]["name"] for t in body.get("tools") or []]
        vectors.append({**item, "sent": mask(sent, words)})
    blob = json.dumps(vectors)
    assert all(json.dumps(w)[1:-1] not in blob for w in words.values()), "unmasked pi words"
    write_json(HERE / "wire.json", {"pi_version": "1.6.0", "generator": "tests/data/pi16/gen_wire_vectors.py",
                                    "update_masks": list(words), "vectors": vectors})
    return 0


if __name__ == "__main__":
    sys.exit(main())
