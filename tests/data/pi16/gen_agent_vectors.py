"""Generate ``agent.json``: pi 1.6.0's request stream (``agent_request``: ``AgentSession.prompt``
end to end against a capture model) on scenarios where the system-prompt sections change.

Needs a set-up pi 1.6.0 oracle (``$PI16_ORACLE``, see ``pi16_oracle.py``); tests do not.

* ``mid_run``: one session, several prompts; an inline ``before_agent_start`` extension
  adds, changes or removes custom sections, overrides a built-in section, adds a rule, or
  forces the whole prompt, on some calls only;
* ``resume``: a session written by pi 1.6.0 (``phase_one``) is resumed after the project
  changed (context file edited or added, tool set changed, append prompt added, skill
  added, nothing changed); and a session written by 0.84.0 (no recorded system message);
* each captured request is kept as: ``systemPrompt`` (every system message replayed: what a
  model without mid-conversation system messages is sent), ``systemSections``, the
  ``messages`` after the leading system message (later system messages in place, with their
  ``sections``, pi-ai's ``update`` framing of them and tool names), the tool names, and
  ``midSystemMessages``.

pi's sentences (prompt, built-in tool snippets and guidelines) are masked; tool
descriptions and parameter schemas are reduced to tool names.

    python tests/data/pi16/gen_agent_vectors.py
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "pi16"))

from pi16_oracle import HERE, PACKAGE_DIR, Oracle, PromptMasks, write_json  # noqa: E402
from pi1_shapes import flat_content  # noqa: E402

ROOT = HERE.parents[2]
FIX = str(Path(tempfile.gettempdir()) / "ctxp-pi16-agent")  # fixture files the oracle writes
CWD = f"{FIX}/proj"
NOW = "2026-08-20T10:00:00Z"
FILES = {f"{CWD}/AGENTS.md": "Use tabs.\nRun the tests before committing.\n"}


class AgentMasks(PromptMasks):
    """Prompt masks plus the built-in tools' snippets and guidelines (``<SNIP_read>``, ``<GL_edit_1>``)."""

    def __init__(self, oracle: Oracle) -> None:
        super().__init__(oracle)
        defs = oracle.one({"op": "tool_defs", "cwd": CWD})
        extra: dict[str, str] = {}
        for name, d in defs.items():
            if d.get("promptSnippet"):
                extra[f"<SNIP_{name}>"] = d["promptSnippet"]
            for i, g in enumerate(d.get("promptGuidelines") or []):
                if g not in extra.values():
                    extra[f"<GL_{name}_{i}>"] = g
        self.sentences = dict(sorted({**self.sentences, **extra}.items(), key=lambda kv: -len(kv[1])))


def render_update(oracle: Oracle, patch: dict) -> str:
    """pi-ai's renderSystemMessageUpdate of a recorded patch, through the diff op: removed names
    get a previous value, the others are new, so pi's diff gives the same patch back."""
    previous = {name: "x" for name, value in patch.items() if value is None}
    current = {name: value for name, value in patch.items() if value is not None}
    res = oracle.one({"op": "diff_system_prompt_sections", "previousSections": previous, "currentSections": current})
    assert list(res["patch"].items()) == list(patch.items()), (res["patch"], patch)
    return res["update"]


class Reducer:
    def __init__(self, oracle: Oracle, masks: AgentMasks) -> None:
        self.oracle, self.masks = oracle, masks

    def message(self, m: dict) -> dict:
        if m["role"] == "system":
            out: dict[str, Any] = {"role": "system", "content": self.masks.mask(m.get("content", ""))}
            if m.get("sections"):
                out["sections"] = self.masks.mask(m["sections"])
                out["sectionOrder"] = list(m["sections"])
                out["update"] = self.masks.mask_update(render_update(self.oracle, m["sections"]))
            for key in ("toolsAdded", "toolsRemoved"):
                if key in m:
                    out[key] = [t["name"] for t in m[key]]
            return out
        return {"role": m["role"], "text": flat_content(m.get("content"))}

    def request(self, call: dict) -> dict:
        return {
            "kind": call["kind"],
            "midSystemMessages": call["midSystemMessages"],
            "systemPrompt": self.masks.mask(call["systemPrompt"]),
            "systemSections": self.masks.mask(call["systemSections"]),
            "systemSectionOrder": list(call["systemSections"] or []),
            "tools": [t["name"] for t in call["tools"]],
            "messages": [self.message(m) for m in call["messages"]],
        }

    def entry(self, e: dict) -> dict:
        if e["type"] == "message":
            return {"type": "message", **self.message(e["message"])}
        return {k: v for k, v in e.items() if k in ("type", "thinkingLevel", "provider", "modelId", "targetId", "replacement")}

    def run(self, name: str, req: dict, res: dict) -> dict:
        view = {k: v for k, v in req.items() if k not in ("op", "agentDir", "now", "packageDir", "jsonl", "newEntriesOnly")}
        if "sessionFile" in view:
            view["sessionFile"] = str(Path(view["sessionFile"]).relative_to(ROOT))
        return {"name": name, "request": view, "requests": [self.request(c) for c in res["requests"]],
                "newEntries": [self.entry(e) for e in res["newEntries"]]}


def base(**extra: Any) -> dict:
    return {"op": "agent_request", "cwd": CWD, "agentDir": f"{FIX}/agent", "now": NOW, "packageDir": PACKAGE_DIR,
            "writeFiles": dict(FILES), **extra}


MID_RUN = {
    "section_added_then_removed": base(input=["one", "two", "three"],
                                       beforeAgentStart=[{"sections": {"reminder": "Stay on task."}, "onCalls": [2]}]),
    "section_changes_every_turn": base(input=["one", "two", "three"], beforeAgentStart=[
        {"sections": {"reminder": "v1"}, "onCalls": [1]}, {"sections": {"reminder": "v2"}, "onCalls": [2]},
        {"sections": {"reminder": "v3"}, "onCalls": [3]}]),
    "section_kept_same": base(input=["one", "two"], beforeAgentStart=[{"sections": {"reminder": "same"}}]),
    "rule_added_on_turn_two": base(input=["one", "two", "three"],
                                   beforeAgentStart=[{"promptGuidelines": ["Answer in French."], "onCalls": [2]}]),
    "builtin_section_overridden": base(input=["one", "two"],
                                       beforeAgentStart=[{"sections": {"cwd": "somewhere else"}, "onCalls": [2]}]),
    "two_sections_remove_readd": base(input=["one", "two", "three"], beforeAgentStart=[
        {"sections": {"alpha": "A", "beta": "B"}, "onCalls": [1]},
        {"sections": {"alpha": None, "beta": "B"}, "onCalls": [2]},
        {"sections": {"alpha": "A", "beta": "B"}, "onCalls": [3]}]),
    "forced_prompt_on_turn_two": base(input=["one", "two", "three"],
                                      beforeAgentStart=[{"systemPrompt": "FORCED PROMPT", "onCalls": [2]}]),
    "custom_prompt_section_added": base(input=["one", "two"], systemPrompt="OWN PROMPT",
                                        beforeAgentStart=[{"sections": {"todo": "- [ ] x"}, "onCalls": [2]}]),
    "tool_round_trip_with_section": base(input=["read it", "again"], tools=["read"],
                                         writeFiles={**FILES, f"{CWD}/a.txt": "hello\n"},
                                         responses=[{"toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}]},
                                                    "done", "ok"],
                                         beforeAgentStart=[{"sections": {"reminder": "R"}, "onCalls": [2]}]),
}

PHASE_ONE = base(input=["first"], tools=["read", "bash"])
RESUME = {
    "unchanged": {"tools": ["read", "bash"]},
    "context_file_edited": {"tools": ["read", "bash"],
                            "writeFiles": {f"{CWD}/AGENTS.md": "Use spaces.\nRun the tests before committing.\n"}},
    "context_file_added_cwd_moved": {"tools": ["read", "bash"], "cwd": f"{CWD}/sub",
                                     "writeFiles": {**FILES, f"{CWD}/sub/AGENTS.md": "Sub rules.\n"}},
    "tool_added": {"tools": ["read", "bash", "grep"]},
    "tool_removed": {"tools": ["read"]},
    "append_prompt_added": {"tools": ["read", "bash"], "appendSystemPrompt": "Be brief."},
    "skill_added": {"tools": ["read", "bash"], "writeFiles": {
        **FILES, f"{CWD}/.pi/skills/pdf/SKILL.md": "---\nname: pdf\ndescription: Extract text from PDF files\n---\nRun it.\n"}},
}


def fresh(oracle: Oracle, requests: list[dict]) -> list[Any]:
    """Each request on a fixture tree of its own: the files a request writes stay on disk, and
    a later run would see them (a skill written by one scenario shown to all that follow)."""
    out = []
    for request in requests:
        shutil.rmtree(FIX, ignore_errors=True)
        out.append(oracle.one(request))
    return out


def header() -> str:
    return json.dumps({"type": "session", "version": 3, "id": "019a0000-0000-7000-8000-0000000000aa",
                       "timestamp": "2026-08-20T09:00:00.000Z", "cwd": CWD})


def main() -> int:
    oracle = Oracle()
    masks = AgentMasks(oracle)
    red = Reducer(oracle, masks)
    out: dict[str, Any] = {"pi_version": "1.6.0", "generator": "tests/data/pi16/gen_agent_vectors.py",
                           "masks": list(masks.sentences), "update_masks": list(masks.update_words),
                           "fixture_root": FIX}
    reqs = [dict(r, newEntriesOnly=True) for r in MID_RUN.values()]
    out["mid_run"] = [red.run(n, q, r) for n, q, r in zip(MID_RUN, reqs, fresh(oracle, reqs))]
    [first] = fresh(oracle, [PHASE_ONE])
    jsonl = "\n".join([header(), *(json.dumps(e) for e in first["sessionEntries"])]) + "\n"
    out["phase_one"] = {"request": {k: v for k, v in PHASE_ONE.items() if k in ("cwd", "input", "tools", "writeFiles")},
                        "entries": [red.entry(e) for e in first["sessionEntries"]]}
    resumes = [(name, base(input=["second"], jsonl=jsonl, newEntriesOnly=True, **change)) for name, change in RESUME.items()]
    short = ROOT / "tests" / "data" / "sessions" / "real" / "short-chat.jsonl"
    resumes.append(("session_from_084_with_section", base(
        input=["second", "third"], sessionFile=str(short), newEntriesOnly=True,
        beforeAgentStart=[{"sections": {"reminder": "R"}, "onCalls": [2]}])))
    results = fresh(oracle, [r for _, r in resumes])
    out["resume"] = [red.run(n, q, r) for (n, q), r in zip(resumes, results)]
    oracle.close()
    masks.check(out)
    write_json(HERE / "agent.json", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
