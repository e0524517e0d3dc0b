"""Generate ``loop/``: the agent-loop scenarios of ``tests/data/agent_loop`` (pi 0.84.0's)
run again through pi 1.6.0's own ``AgentSession`` (``agent_request``), plus a few where
compaction, section changes and retries meet.

Needs a set-up pi 1.6.0 oracle (``$PI16_ORACLE``, see ``pi16_oracle.py``); tests do not.
The scenarios, fixture project, scripted replies, sessions and pinned clock are the 0.84
generator's (``tests/data/agent_loop/gen_agent_loop_vectors.py``, imported), so the two
sets differ only by pi's version. One ``<name>.json`` per scenario:

* ``steps``: per run, the oracle ``request`` (as in the 0.84 files), every captured model
  ``request`` (agent turns: ``systemPrompt`` = pi-ai's replay of all system messages,
  ``systemSections``, ``messages`` = the transcript after the leading system message with
  later system messages reduced as in ``agent.json``, ``tools`` as name + parameter schema
  without descriptions, ``midSystemMessages``; summary calls: the serialized
  ``conversation`` / ``previous-summary``), pi's compaction / retry ``events`` and the
  ``newEntries`` (recorded system messages and a compaction's ``systemMessage`` reduced the
  same way; ``context_edit`` entries as written).

pi's sentences are masked: the system prompt with ``agent.json``'s masks (``<PRE>``,
``<SNIP_read>``...), the compaction-summary prefix as ``[pi: compaction summary prefix]``,
pi's stand-in for a missing history summary as ``[pi: no history]``, and pi's compaction
failure sentence as a hash; a final scan fails the generator if a
prompt sentence is left.

    python tests/data/pi16/gen_loop_vectors.py [--only NAME ...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "agent_loop"))
sys.path.insert(0, str(HERE.parents[1] / "pi16"))

import gen_agent_loop_vectors as v084  # noqa: E402
from gen_agent_vectors import AgentMasks, Reducer  # noqa: E402
from pi16_oracle import ORACLE_DIR, Oracle, write_json  # noqa: E402
from pi1_shapes import system_chars  # noqa: E402

OUT = HERE / "loop"
SUMMARY_MASK = "[pi: compaction summary prefix]"
BRANCH_MASK = "[pi: branch summary prefix]"
NO_HISTORY_MASK = "[pi: no history]"


def no_history_sentence() -> str:
    """pi's stand-in for the history summary of a split turn without history, read from its
    own compaction module (it is no exported constant)."""
    source = ORACLE_DIR / "node_modules/@earendil-works/pi-coding-agent/dist/core/compaction/compaction.js"
    [sentence] = set(re.findall(r'previousSummary \?\? "([^"]+)"', source.read_text(encoding="utf-8")))
    return sentence
BIG, QUICK = v084.BIG, v084.QUICK_RETRY
tools, call, err = v084.tools, v084.call, v084.err

#: Where 1.x's own rules meet: compaction with a recorded prompt (the snapshot), section
#: patches around a compaction, retries that leave context edits behind.
EXTRA: list[dict] = [
    {"name": "pi1-threshold-compaction-then-section", "categories": ["threshold-compaction", "multi-turn"],
     "input": ["one", "two"],
     "hooks": [{"sections": {"reminder": "Stay on task."}, "onCalls": [2]}],
     "about": "a 0.84 session compacts after turn one (its entry carries the prompt); turn two patches a section",
     "agent": [{"text": "first answer", "usage": BIG}, "second answer"]},
    {"name": "pi1-section-then-threshold-compaction", "categories": ["threshold-compaction", "multi-turn"],
     "input": ["one", "two", "three"],
     "hooks": [{"sections": {"reminder": "R"}, "onCalls": [1, 2]}],
     "about": "a section recorded on turn one, compaction after turn two, the section removed on turn three",
     "agent": ["a1", {"text": "a2", "usage": BIG}, "a3"]},
    {"name": "pi1-retry-then-section", "categories": ["transient-retry", "multi-turn"], "session": None,
     "input": ["one", "two"], "pi": QUICK, "hooks": [{"sections": {"todo": "- [ ] x"}, "onCalls": [2]}],
     "about": "a 503 on turn one is retried (a context edit omits it); turn two adds a section",
     "agent": [err("503 service unavailable"), "ok", "fine"]},
    {"name": "pi1-retries-exhausted-fresh", "categories": ["transient-retry"], "session": None,
     "pi": {"retry": {"baseDelayMs": 1, "maxRetries": 2}},
     "about": "every attempt fails on a fresh session: two context edits, the last error stays",
     "agent": [err("overloaded_error: Overloaded")]},
    {"name": "pi1-overflow-recover-section", "categories": ["overflow-recovery"],
     "hooks": [{"sections": {"reminder": "R"}}],
     "about": "an overflow on a 0.84 session whose prompt is recorded mid-conversation: omitted, compacted, retried",
     "agent": [v084.OVERFLOW, "recovered"]},
    {"name": "pi1-retry-then-compaction", "categories": ["transient-retry", "threshold-compaction"],
     "session": None, "pi": QUICK,
     "about": "a retried 529, then a reply over the threshold: the estimate follows the context edit",
     "agent": [err("529 overloaded"), {"text": "big", "usage": BIG}]},
]


#: 1.x session files as a scenario's ``session`` (relative to ``tests/data/sessions/real``,
#: where both the 0.84 generator and the replaying test look).
PI16_FILE = "../../pi16/sessions/"
_READS = [call("read", path="notes.txt"), call("read", path="src/app.py")]
_TEXT = "Explain the design once more, in full detail, section by section. " * 12


def _overflow(session: str | None, keep: int, tail: str, *, leaf: int | None = None, error: dict | None = None,
              hooks: list | None = None) -> dict:
    """One overflow-recovery scenario: a run on ``session`` whose ``tail`` (``text``: the
    overflow on the first request of a long question; ``tools``: after two tool rounds;
    ``both``: a text answer, then tools, then the overflow in a second prompt) ends in a
    context-overflow error; pi omits the failed reply (a context edit), compacts with
    ``keepRecentTokens`` = ``keep`` and retries."""
    overflow = error or v084.OVERFLOW
    label = (session or "fresh").replace(PI16_FILE, "pi16-")
    name = f"pi1-ovf-{label}{'' if leaf is None else f'@{leaf}'}-{tail}-k{keep}"
    scenario: dict = {"name": name, "categories": ["overflow-recovery"], "session": session,
                      "settings": {"keepRecentTokens": keep},
                      "about": f"overflow recovery ({tail} tail, keepRecentTokens {keep}) on "
                               f"{'a fresh session' if session is None else session}"}
    if leaf is not None:
        scenario["leaf"] = leaf
    if hooks:
        scenario["hooks"] = hooks
    if session and session.startswith(PI16_FILE):  # pi wrote that file at the pinned time: a day later
        scenario["now"] = "2026-08-21T10:00:00Z"
    if tail == "text":
        scenario.update(input=_TEXT, agent=[overflow, "recovered " * 20])
    elif tail == "tools":
        scenario.update(agent=[tools(*_READS), tools(call("read", path="notes.txt")), overflow, "recovered"])
    else:
        scenario.update(input=["first " + _TEXT, "then the tools"],
                        agent=["long answer " * 80, tools(*_READS), overflow, "recovered"])
    return scenario


#: pi 1.6's overflow recovery end to end (issue 22): the context edit on the failed reply,
#: the cut on the projection, the turn-prefix summary, the retried request; 0.84 files, 1.x
#: files and fresh sessions, text- and tool-heavy tails, several budgets. The 1.x file is
#: pi's own (``pi-compacted``, prompt masked): a file our runtime wrote records our wording,
#: so pi would patch every section of it and the two recorded patches cannot be compared.
OVERFLOWS: list[dict] = [
    _overflow("long-coding", 100, "text"),
    _overflow("long-coding", 2000, "tools"),
    _overflow("long-coding", 8000, "text"),
    _overflow("long-coding", 20000, "tools"),
    _overflow("long-coding", 4000, "both", leaf=120),
    _overflow("multi-compaction", 500, "text"),
    _overflow("multi-compaction", 3000, "tools", error=err("context_length_exceeded")),
    _overflow("multi-compaction", 12000, "both"),
    _overflow("compacted-branched", 1000, "tools"),
    _overflow("compacted-branched", 6000, "text", error=v084.OVERFLOW_OPENAI),
    _overflow("compacted-branched", 2000, "both", leaf=150),
    _overflow("short-chat", 50, "tools"),
    _overflow("short-chat", 400, "both", hooks=[{"sections": {"reminder": "Stay on task."}}]),
    _overflow(None, 100, "tools"),
    _overflow(None, 1000, "both"),
    _overflow(PI16_FILE + "pi-compacted", 100, "text"),
    _overflow(PI16_FILE + "pi-compacted", 1500, "tools"),
    _overflow(PI16_FILE + "pi-compacted", 400, "both"),
    _overflow(PI16_FILE + "pi-compacted", 40, "tools", hooks=[{"sections": {"todo": "- [ ] y"}}]),
    _overflow("long-coding", 500, "both"),
    _overflow("multi-compaction", 100, "tools", leaf=200),
    _overflow("compacted-branched", 15000, "tools"),
    _overflow(None, 20, "text"),
    _overflow("long-coding", 1000, "tools", leaf=200),
    _overflow("compacted-branched", 300, "text"),
    _overflow("short-chat", 10, "text", error=v084.OVERFLOW_OPENAI),
]
EXTRA += OVERFLOWS



def _split_turn(name: str, about: str, **more: Any) -> dict:
    """Issue 34: an overflow (400) on the first request of a prompt on the long 0.84.0 file,
    pi's default budget, a model that reads system messages mid-conversation. The whole
    prompt is recorded right before the question and counts toward ``keepRecentTokens``, so
    its size decides where the cut falls (inside an old turn: a full summary, a turn-prefix
    summary, then the retry)."""
    return {"name": name, "categories": ["overflow-recovery", "session-file"], "about": about,
            "session": "long-coding", "settings": {"keepRecentTokens": 20000},
            "model": {"compat": {"supportsMidConvoSystemMessages": True}},
            "input": "Add a --version flag to the CLI.", "agent": [v084.OVERFLOW_OPENAI, "Added --version."],
            "summary": ["## Goal\nMaintain the CLI.\n\n## Progress\nAll tests pass.",
                        "## Original Request\nRead files."], **more}


EXTRA += [
    _split_turn("pi1-overflow-split-turn-midconv", "the four default tools: the retry keeps 202 messages"),
    _split_turn("pi1-overflow-split-turn-midconv-read", "only the read tool: a smaller recorded prompt, "
                "so the cut falls later and the retry keeps more", tools=["read"]),
]


def mid_conversation(request: dict) -> bool:
    """Whether the scenario's model reads system messages mid-conversation (pi-ai's compat flag)."""
    return bool(((request.get("model") or {}).get("compat") or {}).get("supportsMidConvoSystemMessages"))


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def strip_descriptions(schema: Any) -> Any:
    return v084.strip_descriptions(schema)


class LoopReducer:
    """pi 1.6's captured requests and entries, masked."""

    def __init__(self, oracle: Oracle, masks: AgentMasks, summary_prefix: str, branch_prefix: str) -> None:
        self.red, self.masks = Reducer(oracle, masks), masks
        self.prefixes = {summary_prefix: SUMMARY_MASK, branch_prefix: BRANCH_MASK, no_history_sentence(): NO_HISTORY_MASK}

    def text(self, value: Any) -> Any:
        """Plain messages keep their shape; pi's compaction- and branch-summary sentences are masked."""
        text = json.dumps(value)
        for sentence, mask in self.prefixes.items():
            text = text.replace(json.dumps(sentence)[1:-1], mask)
        return json.loads(text)

    def message(self, m: dict) -> dict:
        return self.red.message(m) if m.get("role") == "system" else self.text(m)

    def request(self, r: dict) -> dict:
        if r["kind"] == "summary":
            return {"kind": "summary", "messages": [self.text(self.summary_message(m)) for m in r["messages"]]}
        leading = {} if "transcript" not in r else {  # models reading system messages in place
            "leadingSystem": bool(r["transcript"]) and r["transcript"][0].get("role") == "system"}
        return {
            **leading,
            "kind": "agent", "midSystemMessages": r["midSystemMessages"],
            "systemPrompt": self.masks.mask(r["systemPrompt"]),
            "systemSections": self.masks.mask(r["systemSections"]),
            "systemSectionOrder": list(r["systemSections"] or []),
            "messages": [self.message(m) for m in r["messages"]],
            "tools": [{"name": t["name"], "parameters": strip_descriptions(t.get("parameters"))} for t in r["tools"]],
        }

    @staticmethod
    def summary_message(m: dict) -> dict:
        """The serialized conversation (``<conversation>`` tags, or 1.x's turn-prefix
        ``# Conversation`` heading) and previous summary; the instructions as a sha256."""
        [out] = v084.mask_summary_messages([m])
        text = "".join(b.get("text", "") for b in m["content"] if b.get("type") == "text")
        head = re.match(r"# Conversation\n(.*?)\n\n# Instructions\n", text, re.S)
        if "conversation" not in out and head:
            out = {**out, "conversation": head.group(1), "heading": True,
                   "instructionsSha256": sha(text[head.end():])}
        return out

    def entry(self, e: dict) -> dict:
        if e["type"] == "message" and e["message"].get("role") == "system":
            return {**e, "message": self.red.message(e["message"]), "systemChars": system_chars(e["message"])}
        if e["type"] == "compaction" and isinstance(e.get("systemMessage"), dict):
            return {**self.text({k: v for k, v in e.items() if k != "systemMessage"}),
                    "systemMessage": self.red.message(e["systemMessage"])}
        return self.text(e)

    def event(self, e: dict) -> dict:
        if e.get("type") == "compaction_end" and isinstance(e.get("errorMessage"), str):
            return {**e, "errorMessage": "sha256:" + sha(e["errorMessage"])}
        return self.text(e)


def _no_system(line: str) -> str:
    """An entry with its system message (or compaction snapshot) emptied: no text, no tools."""
    e = json.loads(line)
    if e.get("type") == "message" and e["message"].get("role") == "system":
        e["message"] = {"role": "system", "content": "", "timestamp": e["message"].get("timestamp")}
    if e.get("type") == "compaction" and isinstance(e.get("systemMessage"), dict):
        e["systemMessage"] = {"role": "system", "content": "", "timestamp": e["systemMessage"].get("timestamp")}
    return json.dumps(e, ensure_ascii=False)


def system_share(lines: list[str], compaction: dict, settings: dict) -> int:
    """How much of a compaction's ``tokensBefore`` the recorded system prompt makes up: pi's
    ``prepareCompaction`` at the compaction's parent, minus the same with every system
    message emptied. (Our prompt is in our own words, so only the rest can be compared.)"""
    def ask(text_lines: list[str]) -> dict:
        return {"op": "prepare_compaction", "jsonl": "\n".join(text_lines) + "\n", "leafId": compaction["parentId"],
                "settings": settings}
    full, bare = v084.oracle(ORACLE_DIR, [ask(lines), ask([lines[0], *map(_no_system, lines[1:])])])
    if full["tokensBefore"] != compaction["tokensBefore"]:
        print(f"  tokensBefore {compaction['tokensBefore']} not re-derived ({full['tokensBefore']})", file=sys.stderr)
        return None
    return full["tokensBefore"] - (bare["tokensBefore"] if bare else 0)  # nothing to compact without it


def run_scenario(red: LoopReducer, scenario: dict) -> dict:
    name = scenario["name"]
    shutil.rmtree(f"{v084.BASE_DIR}/{name}", ignore_errors=True)
    session = scenario.get("session", "short-chat")
    lines = v084.session_lines(session) if session else None
    leaf = json.loads(lines[scenario["leaf"]])["id"] if session and "leaf" in scenario else None
    steps, in_memory = [], session is None
    for index, spec in enumerate(v084.steps_of(scenario)):
        req = v084.base_request(name, spec)
        if "summary" in spec:  # the scenario's own summarizer replies
            req["responses"]["summary"] = spec["summary"]
        if mid_conversation(req):  # the verbatim transcript shows whether a system message leads it
            req["fullTranscript"] = True
        if "now" in scenario:  # a clock after the file's own entries
            req["now"] = scenario["now"]
        if index == 0:
            req["writeFiles"] = v084.fixture_files(name)
        if lines is not None:
            req["jsonl"] = "\n".join(lines) + "\n"
            if leaf and index == 0:
                req["leafId"] = leaf
        result = v084.run_request(ORACLE_DIR, req, scenario.get("realClock", False))
        request = {k: v for k, v in req.items() if k not in ("jsonl", "writeFiles", "op", "packageDir")}
        if index == 0:
            request["session"] = {"file": f"{session}.jsonl", "leafId": leaf} if session else None
            request["writeFiles"] = {k.removeprefix(req["cwd"] + "/"): t for k, t in req.get("writeFiles", {}).items()}
        else:
            request["session"] = "previous step"
        after = v084.next_session(lines, result, in_memory)
        entries = [red.entry(e) for e in result["newEntries"]]
        for entry in entries:
            if entry["type"] == "compaction":
                entry["tokensBeforeSystem"] = system_share(after, entry, req["settings"])
        steps.append({"request": request, "requests": [red.request(r) for r in result["requests"]],
                      "events": [red.event(e) for e in result["events"]], "newEntries": entries})
        lines = after
        in_memory = False
    return {"name": name, "categories": scenario["categories"], "about": scenario["about"],
            "session": {"file": f"{session}.jsonl", "leafId": leaf} if session else None,
            "realClock": bool(scenario.get("realClock")), "steps": steps}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="scenario names")
    args = parser.parse_args()
    oracle = Oracle()
    masks = AgentMasks(oracle)
    constants = oracle.one({"op": "constants"})
    prefix, branch = (constants[k][:constants[k].index("<summary>")]  # pi's sentence; the tag stays
                      for k in ("COMPACTION_SUMMARY_PREFIX", "BRANCH_SUMMARY_PREFIX"))
    red = LoopReducer(oracle, masks, prefix, branch)
    OUT.mkdir(exist_ok=True)
    names = []
    for scenario in [*v084.SCENARIOS, *EXTRA]:
        names.append(scenario["name"])
        if args.only and scenario["name"] not in args.only:
            continue
        doc = run_scenario(red, scenario)
        masks.check(doc)
        for sentence in (prefix, branch, no_history_sentence()):
            assert sentence not in json.dumps(doc, ensure_ascii=False)
        write_json(OUT / f"{scenario['name']}.json", doc)
    oracle.close()
    write_json(OUT / "manifest.json", {"pi_version": "1.6.0", "generator": "tests/data/pi16/gen_loop_vectors.py",
                                       "masks": list(masks.sentences), "update_masks": list(masks.update_words),
                                       "scenarios": names, "extra": [s["name"] for s in EXTRA],
                                       "notExpressible": v084.NOT_EXPRESSIBLE})
    return 0


if __name__ == "__main__":
    sys.exit(main())
