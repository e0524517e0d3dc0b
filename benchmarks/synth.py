"""Large synthetic pi sessions (JSONL, session version 3) for the benchmarks, without Node.

The same shape as the pi oracle's ``synth_session`` op (which writes through pi's own
SessionManager): per user turn a user message (sometimes two text blocks), 1-6 assistant
messages with thinking, text and tool calls (read/edit/write/bash/grep, sometimes
parallel) and usage that grows with the context, one tool result per call (a few bytes
up to ~24 KB, ~4 % errors), occasional user bash executions, model and thinking-level
changes, labels and a session name. Deterministic per seed; not byte-identical to pi's.

    python benchmarks/synth.py OUT.jsonl [--entries 100000] [--seed 4242]
"""

from __future__ import annotations

import argparse
import base64
import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

WORDS = ("the cache layer request handler returns token user session config value parser error retry "
         "timeout budget queue worker schema field index build test module import export client server "
         "payload header route middleware deploy metric log trace span commit branch merge").split()
FILES = ["src/server.ts", "src/routes/users.ts", "src/db/pool.ts", "package.json", "README.md", "test/api.test.ts",
         "src/lib/cache.ts", "scripts/check.js", "src/config.ts", "docs/api.md"]
MODELS = [("anthropic", "claude-sonnet-4-6"), ("anthropic", "claude-opus-4-7"), ("openai", "gpt-5.4"),
          ("google", "gemini-3.1-pro-preview")]
B62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


class _Writer:
    """Appends entries as pi's SessionManager does: one JSON object a line, parent = previous."""

    def __init__(self, out, rng: random.Random, start: datetime):
        self.out, self.rng, self.now = out, rng, start
        self.leaf: str | None = None
        self.count = 0

    def tick(self, ms: int) -> None:
        self.now += timedelta(milliseconds=ms)

    def stamp(self) -> str:
        return self.now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.now.microsecond // 1000:03d}Z"

    def millis(self) -> int:
        return int(self.now.timestamp() * 1000)

    def append(self, kind: str, **fields) -> str:
        entry_id = f"{self.rng.getrandbits(32):08x}"
        entry = {"type": kind, "id": entry_id, "parentId": self.leaf, "timestamp": self.stamp(), **fields}
        self.out.write(json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n")
        self.leaf = entry_id
        self.count += 1
        return entry_id


class _Text:
    def __init__(self, rng: random.Random):
        self.rng = rng

    def words(self, n: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def sentence(self, n: int) -> str:
        s = self.words(n)
        return s[0].upper() + s[1:] + "."

    def para(self, sentences: int) -> str:
        return " ".join(self.sentence(self.rng.randint(6, 18)) for _ in range(sentences))

    def code(self, lines: int) -> str:
        r = self.rng
        return "\n".join(f"{chr(9) * r.randint(0, 3)}{r.choice(['const', 'let', 'return', 'if (', 'await', '//'])} "
                         f"{self.words(r.randint(2, 7)).replace(' ', r.choice('_. '))}{r.choice([';', ' {', '', ');'])}"
                         f" // {i + 1}" for i in range(lines))

    def size_class(self) -> int:
        x, r = self.rng.random(), self.rng
        return r.randint(10, 200) if x < 0.35 else r.randint(200, 2000) if x < 0.75 else \
            r.randint(2000, 8000) if x < 0.95 else r.randint(8000, 24000)

    def of_size(self, n: int) -> str:
        s = ""
        while len(s) < n:
            s += self.code(self.rng.randint(3, 12)) + "\n"
        return s[:n]

    def rid(self, prefix: str, n: int) -> str:
        return prefix + "".join(self.rng.choice(B62) for _ in range(n))


def write_session(path: Path, entries: int, seed: int = 4242) -> dict:
    """Write ``entries`` entries (plus the header) to ``path``; returns counts by kind."""
    rng = random.Random(seed)
    start = datetime(2026, 7, 1, 8, 0, tzinfo=timezone.utc)
    with open(path, "w", encoding="utf-8") as out:
        header = {"type": "session", "version": 3, "id": f"01960000-0000-7000-8000-{seed:012x}",
                  "timestamp": "2026-07-01T08:00:00.000Z", "cwd": "/home/dev/projects/acme-api"}
        out.write(json.dumps(header, separators=(",", ":")) + "\n")
        w, t = _Writer(out, rng, start), _Text(rng)
        _Session(w, t, entries).run()
    return {"entries": w.count, "bytes": path.stat().st_size}


class _Session:
    def __init__(self, w: _Writer, t: _Text, target: int):
        self.w, self.t, self.target, self.rng = w, t, target, t.rng
        self.ctx = 3000
        self.provider, self.model = MODELS[0]

    def run(self) -> None:
        w = self.w
        w.append("model_change", provider=self.provider, modelId=self.model)
        w.append("thinking_level_change", thinkingLevel="medium")
        while w.count < self.target:
            w.tick(self.rng.randint(20000, 400000))
            r = self.rng.random()
            if r < 0.01:
                self.provider, self.model = self.rng.choice(MODELS)
                w.append("model_change", provider=self.provider, modelId=self.model)
            elif r < 0.02:
                w.append("thinking_level_change", thinkingLevel=self.rng.choice(["off", "minimal", "low", "high"]))
            elif r < 0.035:
                self._bash()
            else:
                self._turn()

    def _message(self, message: dict) -> str:
        return self.w.append("message", message={**message, "timestamp": self.w.millis()})

    def _bash(self) -> None:
        r = self.rng
        extra = {"excludeFromContext": True} if r.random() < 0.15 else {}
        self._message({"role": "bashExecution", "command": r.choice(["git status", "npm test", "ls -la src"]),
                       "output": self.t.of_size(self.t.size_class()), "exitCode": 1 if r.random() < 0.2 else 0,
                       "cancelled": False, "truncated": False, **extra})

    def _turn(self) -> None:
        r, t, w = self.rng, self.t, self.w
        content = [{"type": "text", "text": t.para(r.randint(1, 4))}]
        if r.random() < 0.1:
            content.append({"type": "text", "text": t.para(1)})
        self._message({"role": "user", "content": content})
        self.ctx += r.randint(30, 300)
        steps = r.randint(1, 6)
        for step in range(steps):
            if w.count >= self.target:
                break
            w.tick(r.randint(1500, 30000))
            calls = self._assistant(last=step == steps - 1)
            for call in calls:
                if w.count >= self.target:
                    break
                self._tool_result(call)
        if r.random() < 0.005 and w.count < self.target:
            w.append("label", targetId=w.leaf, label=f"checkpoint {w.count}")
        if w.count == 3 or (r.random() < 0.0005 and w.count < self.target):
            w.append("session_info", name="synthetic session")
        if self.ctx > 150000:
            self.ctx = r.randint(20000, 60000)

    def _assistant(self, last: bool) -> list[dict]:
        r, t = self.rng, self.t
        content: list[dict] = []
        if r.random() < 0.8:
            signature = base64.b64encode(t.rid("", 96).encode()).decode()
            content.append({"type": "thinking", "thinking": t.para(r.randint(1, 5)), "thinkingSignature": signature})
        if last or r.random() < 0.5:
            content.append({"type": "text", "text": t.para(r.randint(1, 8)) if last else t.sentence(r.randint(5, 14))})
        calls = [] if last else [self._call() for _ in range(r.randint(2, 4) if r.random() < 0.2 else 1)]
        content += calls
        out_tokens = len(json.dumps(content)) // 4 + r.randint(0, 60)
        self._message({"role": "assistant", "content": content, "api": "anthropic-messages", "provider": self.provider,
                       "model": self.model, "responseId": t.rid("msg_01", 24), "usage": self._usage(out_tokens),
                       "stopReason": "toolUse" if calls else "stop"})
        self.ctx += out_tokens
        return calls

    def _call(self) -> dict:
        r, t = self.rng, self.t
        tool, path = r.choice(["read", "read", "bash", "edit", "write", "grep"]), r.choice(FILES)
        args = {"read": {"path": path}, "bash": {"command": "npm test"}, "grep": {"pattern": r.choice(WORDS), "path": "src"},
                "edit": {"path": path, "edits": [{"oldText": t.code(2), "newText": t.code(3)}]},
                "write": {"path": path, "content": t.of_size(t.size_class())}}[tool]
        return {"type": "toolCall", "id": t.rid("toolu_01", 22), "name": tool, "arguments": args}

    def _usage(self, out_tokens: int) -> dict:
        r = self.rng
        cache_read = max(0, self.ctx - r.randint(50, 2000))
        inp = r.randint(1, 40)
        cache_write = max(0, self.ctx - cache_read - inp)
        cost = {"input": inp * 3 / 1e6, "output": out_tokens * 15 / 1e6, "cacheRead": cache_read * 0.3 / 1e6,
                "cacheWrite": cache_write * 3.75 / 1e6}
        cost["total"] = sum(cost.values())
        return {"input": inp, "output": out_tokens, "cacheRead": cache_read, "cacheWrite": cache_write,
                "totalTokens": inp + out_tokens + cache_read + cache_write, "cost": cost}

    def _tool_result(self, call: dict) -> None:
        r, t = self.rng, self.t
        self.w.tick(r.randint(50, 4000))
        error = r.random() < 0.04
        name = call["name"]
        text = (f"Error: {t.sentence(r.randint(4, 12))}" if error
                else f"Successfully replaced 1 block(s) in {call['arguments']['path']}." if name == "edit"
                else f"Successfully wrote {len(call['arguments']['content'])} bytes" if name == "write"
                else t.of_size(t.size_class()))
        self._message({"role": "toolResult", "toolCallId": call["id"], "toolName": name,
                       "content": [{"type": "text", "text": text}], "isError": error})
        self.ctx += len(text) // 4


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=4242)
    args = parser.parse_args()
    print(json.dumps(write_session(args.out, args.entries, args.seed)))


if __name__ == "__main__":
    main()
