"""Generated pi sessions with planted facts, for ``pipeline eval`` and ``pipeline replay``.

A generated session is a coding conversation in **segments** (one per compaction the
evaluation makes): each turn is a user request, an assistant reply with a ``read``,
``edit``, ``write`` or ``bash`` tool call (with usage that grows with the context), the
tool result (a few kilobytes), and the assistant's closing text. Facts are planted in user
messages and tool results: paths, ids, numbers and constraints, each a unique token (so
"recalled" means "the exact text is still in the context"). Deterministic per seed.

The files are pi's JSONL (version 3): a header, then one entry a line, each the child of
the one before. ``NAME.facts.json`` beside each session lists its facts (``kind``,
``value``, ``segment``, ``where``).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

FACT_KINDS = ("path", "id", "number", "constraint")
_WORDS = ("cache parser router schema worker queue client token budget retry index build module").split()
_TOOLS = ("read", "edit", "write", "bash")


@dataclass(frozen=True)
class Fact:
    """One planted fact: its kind, the exact text, the segment and the role of the message holding it."""

    kind: str
    value: str
    segment: int
    where: str

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "value": self.value, "segment": self.segment, "where": self.where}


@dataclass
class _Writer:
    rng: random.Random
    now: datetime
    lines: list[str] = field(default_factory=list)
    leaf: str | None = None
    tokens: int = 0

    def entry(self, message: dict) -> None:
        self.now += timedelta(seconds=self.rng.randint(1, 30))
        entry_id = "%08x" % self.rng.getrandbits(32)
        message["timestamp"] = int(self.now.timestamp() * 1000)
        stamp = self.now.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        self.lines.append(json.dumps({"type": "message", "id": entry_id, "parentId": self.leaf, "timestamp": stamp,
                                      "message": message}, ensure_ascii=False))
        self.leaf = entry_id
        self.tokens += sum(len(json.dumps(c)) for c in message.get("content", [])) // 4


def _fact_value(rng: random.Random, kind: str, n: int) -> str:
    if kind == "path":
        return f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}_{n}{rng.randrange(100, 999)}.py"
    if kind == "id":
        return f"TICKET-{rng.randrange(10**5, 10**6)}{chr(65 + n % 26)}"
    if kind == "number":
        return str(rng.randrange(10**6, 10**7))
    return f"never-touch-{rng.choice(_WORDS)}-{rng.randrange(1000, 9999)}"


def _usage(tokens: int) -> dict:
    return {"input": tokens, "output": 200, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens + 200,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


def _turn(w: _Writer, rng: random.Random, segment: int, n: int, result_chars: int, facts: list[Fact]) -> None:
    kind = FACT_KINDS[n % len(FACT_KINDS)]
    value = _fact_value(rng, kind, n)
    tool = _TOOLS[n % len(_TOOLS)]
    path = value if kind == "path" else f"src/{rng.choice(_WORDS)}_{n}.py"
    in_tool = n % 2 == 1 and kind != "path"
    ask = f"Step {n}: look at {path} and keep going." if in_tool else f"Step {n}: remember {value}. Work on {path}."
    facts.append(Fact(kind, value, segment, "toolResult" if in_tool else "user"))
    w.entry({"role": "user", "content": [{"type": "text", "text": ask}]})
    call_id = f"call_{n}"
    args = {"command": f"grep -rn {rng.choice(_WORDS)} src"} if tool == "bash" else {"path": path}
    if tool in ("edit", "write"):
        args.update({"oldText": "a", "newText": "b"} if tool == "edit" else {"content": "pass\n"})
    w.entry({"role": "assistant", "content": [{"type": "toolCall", "id": call_id, "name": tool, "arguments": args}],
             "provider": "generated", "model": "generated-1", "usage": _usage(w.tokens), "stopReason": "toolUse"})
    filler = " ".join(rng.choice(_WORDS) for _ in range(result_chars // 7))
    body = (f"value {value} found. " if in_tool else "") + filler
    w.entry({"role": "toolResult", "toolCallId": call_id, "toolName": tool, "isError": False,
             "content": [{"type": "text", "text": body}]})
    w.entry({"role": "assistant", "content": [{"type": "text", "text": f"Done with step {n}."}],
             "provider": "generated", "model": "generated-1", "usage": _usage(w.tokens), "stopReason": "stop"})


def header_line(rng: random.Random, start: datetime, cwd: str) -> str:
    stamp = start.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    session_id = "%08x-%04x-7%03x-8%03x-%012x" % (rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(12),
                                                  rng.getrandbits(12), rng.getrandbits(48))
    return json.dumps({"type": "session", "version": 3, "id": session_id, "timestamp": stamp, "cwd": cwd})


@dataclass(frozen=True)
class Generated:
    """A generated conversation: its header line, the lines of each segment, the facts planted."""

    header: str
    segments: tuple[tuple[str, ...], ...]
    facts: tuple[Fact, ...]

    def write(self, path: Path, segments: int | None = None) -> Path:
        """Write the header and the first ``segments`` segments (all by default), and the facts beside it."""
        chosen = self.segments[: segments or len(self.segments)]
        lines = [self.header] + [line for seg in chosen for line in seg]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        facts = [f.to_json() for f in self.facts if f.segment < len(chosen)]
        facts_path(path).write_text(json.dumps({"facts": facts}, indent=1) + "\n", encoding="utf-8")
        return path


def facts_path(session: Path) -> Path:
    return session.with_name(session.name.removesuffix(".jsonl") + ".facts.json")


def generate(seed: int, *, segments: int = 5, turns: int = 12, result_chars: int = 8000) -> Generated:
    """A conversation of ``segments`` × ``turns`` turns with one fact planted per turn."""
    rng = random.Random(seed)
    start = datetime(2026, 6, 1, tzinfo=timezone.utc) + timedelta(minutes=seed)
    w = _Writer(rng, start)
    header = header_line(rng, start, "/work/generated")
    facts: list[Fact] = []
    done: list[tuple[str, ...]] = []
    for segment in range(segments):
        mark = len(w.lines)
        for i in range(turns):
            _turn(w, rng, segment, segment * turns + i, result_chars, facts)
        done.append(tuple(w.lines[mark:]))
    return Generated(header, tuple(done), tuple(facts))


def write_corpus(folder: Path, count: int, *, seed: int = 1, **sizes) -> list[Path]:
    """``count`` generated sessions ``gen-0000.jsonl``… in ``folder`` (with their facts files)."""
    folder.mkdir(parents=True, exist_ok=True)
    return [generate(seed + i, **sizes).write(folder / f"gen-{i:04d}.jsonl") for i in range(count)]
