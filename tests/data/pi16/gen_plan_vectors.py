"""Generate ``plans_projection.json``: pi 1.6.0's ``prepareCompaction`` on sessions built for
the rules the shared sessions do not reach (README, "Plans on the projection"): context
edits (omissions, replacements, the recovery suffix), older compactions inside the kept
range, usage recorded before an edit or a compaction, system-message entries, and the last
cut point when the budget is reached after it. Each case is a spec in the notation of
``tests/pi16/planspec.py`` (the test rebuilds the entries from it) and a keep-recent budget;
hand-written cases first, then seeded random ones.

Needs a set-up pi 1.6.0 oracle (``$PI16_ORACLE``, see ``pi16_oracle.py``); tests do not.
The results hold ids, roles, timestamps, counts, file names and our own filler text only,
so there is no pi sentence to mask. ``cut_points``: pi 1.6's plain ``findCutPoint`` on the raw
path of the same sessions (those without system-message entries), which also takes the last
cut point when the budget is reached after it.

    python tests/data/pi16/gen_plan_vectors.py
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "pi16"))

from pi16_oracle import HERE, Oracle, write_json  # noqa: E402
from planspec import plan_entries  # noqa: E402

SEED = 1516
RANDOM_CASES = 160
#: the second seeded set: recorded prompts (whole, with tools, patches), compactions with
#: ``systemMessage`` snapshots, branch summaries and context edits mixed in every session
RICH_SEED = 1616
RICH_CASES = 200
KEYS = ("firstKeptEntryId", "firstKeptEntryIndex", "isSplitTurn", "tokensBefore", "messagesToSummarizeCount",
        "messagesToSummarizeRoles", "messagesToSummarizeTimestamps", "turnPrefixMessagesCount",
        "turnPrefixMessagesRoles", "turnPrefixMessagesTimestamps", "fileOps", "previousSummary")

#: (what it shows, spec, keep budgets)
HAND = [
    ("omitted failed reply after the last input: recovery moves the cut on", "U10 A10 U10 A10! X3", (0, 5, 10, 25)),
    ("recovery with the retry already answered: no move", "U10 A10 U10 A10! X3 A10", (0, 5, 15, 30)),
    ("omitted reply, an edit replaces an entry outside the suffix: no move", "U10 A10 U10 A10! X3 R1:2", (0, 5, 10)),
    ("omitted reply and its replacement edit inside the suffix", "U10 A10 U10 A10! X3 R3:2", (0, 5, 10)),
    ("metadata after the omitted reply", "U10 A10 U10 A10! X3 MC TL LB", (0, 5, 10, 25)),
    ("an omitted user message is no recovery", "U10 A10 U10 X2", (0, 5, 15)),
    ("budget not reached: no recovery", "U10 A10 U10 A10! X3", (1000,)),
    ("replaced contents count in the budget", "U10 A10 T40 R2:1 A10 U10 A10", (0, 10, 20, 30, 60)),
    ("replacement blocks give the file lists", "U10 A10#a T10 RB1:5 A10$b U10 A10", (0, 10, 30)),
    ("replacement string on a user message", "U10 A10 U10 R0:30 A10", (0, 10, 20, 40)),
    ("replacement on a custom message entry", "U10 CM10 A10 R1:1 U10 A10", (0, 10, 20)),
    ("the last edit of a target wins", "U10 A10 U10 A10 R1:30 R1:1 X1", (0, 10, 25)),
    ("trailing tool results over the budget: the last cut point", "U10 A10 T100", (5, 50, 99)),
    ("trailing tool results over the budget, two calls", "U10 A10 T10 A10 T200 T200", (50, 300)),
    ("after a compaction: its summary no longer counts", "U10 A10 U10 A10 C50:0:2 U10 A10", (0, 10, 20, 30, 60, 100)),
    ("two compactions, the older inside the kept range", "U10 A10 U10 A10 C20:0:2 U10 A10 C30:0:4 U10 A10",
     (0, 10, 20, 40, 80)),
    ("kept id not on the path", "U10 A10 C20:0:99 U10 A10 U10 A10", (0, 10, 30)),
    ("edit before the compaction is outside the projection", "U10 A10 X1 U10 A10 C20:0:1 U10 A10", (0, 10, 40)),
    ("edit after the compaction aims at a summarized entry", "U10 A10 U10 A10 C20:0:2 R0:5 U10 A10", (0, 10, 40)),
    ("usage before the newest edit: estimated again", "U10 A10@900 U10 A10@1200 R0:2 U10", (0, 10, 30)),
    ("usage after the newest edit: anchored", "U10 A10@900 R0:2 U10 A10@1200 U10", (0, 10, 30)),
    ("usage kept from before the compaction", "U10 A10@900 U10 A10@1500 C20:0:2 U10", (0, 10, 30)),
    ("usage after the compaction", "U10 A10@900 U10 A10 C20:0:2 U10 A10@2000 U10", (0, 10, 30)),
    ("system message entries are never cut and never summarized", "S U10 A10 S U10 A10", (0, 10, 20, 40)),
    ("system message entry in the kept range of a compaction", "S U10 A10 S U10 A10 C20:0:3 U10 A10", (0, 10, 40)),
    ("system messages in the estimate after an edit", "S U10 A10@500 S R1:3 U10 A10", (0, 10, 30)),
    ("bash, custom and branch summaries around an edit", "U10 B10 CU10 BS10 A10 X4 U10 A10", (0, 10, 20, 45)),
    ("everything omitted", "U10 A10 X0 X1", (0, 5)),
    ("retain-none compaction: its own id is the kept boundary", "U10 A10 U10 A10 C20:0:4 U10 A10", (0, 10, 20, 40)),
    ("usage entries show nothing", "U10 A10 US U10 US A10 X5", (0, 5, 10, 30)),
    ("system message with tools, then a patch", "ST U10 A10 SP U10 A10", (0, 10, 20, 60)),
    ("system patch after the last usage", "ST U10 A10@700 SP U10", (0, 10, 30)),
    ("compaction with a system snapshot", "ST U10 A10 U10 A10 CS20:0:3 U10 A10", (0, 10, 20, 40)),
    ("system snapshot and later patch, usage before the compaction", "ST U10 A10@800 U10 CS20:0:3 SP U10 A10",
     (0, 10, 40)),
]

_FILLER = ("U", "A", "A", "T", "U", "A", "T", "B", "CU", "CM", "BS", "MC", "TL", "LB", "CE")


def random_spec(rng: random.Random) -> str:
    tokens: list[str] = []
    messages: list[int] = []
    for index in range(rng.randint(3, 22)):
        roll = rng.random()
        if messages and roll < 0.12:
            tokens.append(f"X{rng.choice(messages)}")
        elif messages and roll < 0.2:
            target = rng.choice(messages)
            tokens.append(f"R{target}:{rng.randint(0, 30)}" if rng.random() < 0.7 else f"RB{target}:{rng.randint(0, 9)}")
        elif index > 2 and roll < 0.26:
            tokens.append(f"C{rng.randint(1, 40)}:0:{rng.randint(0, index - 1)}")
        elif roll < 0.29:
            tokens.append("S")
        else:
            kind = rng.choice(_FILLER)
            size = rng.choice((1, 5, 10, 20, 40, 80))
            if kind in ("U", "A", "T", "B", "CU", "CM", "BS"):
                token = f"{kind}{size}"
                if kind == "A":
                    token += "".join(part for part, p in ((f"@{rng.randint(50, 3000)}", 0.3), ("!", 0.15),
                                                            (f"#f{index}", 0.2), (f"$g{index}", 0.1)) if rng.random() < p)
                if kind in ("U", "A", "T", "CU", "CM"):
                    messages.append(index)
                tokens.append(token)
            else:
                tokens.append(kind)
    if tokens[-1].startswith("C") and not tokens[-1].startswith(("CU", "CM", "CE")):
        tokens.append("U5")
    return " ".join(tokens)


_RICH = ("U", "A", "A", "A", "T", "T", "U", "BS", "B", "CU", "CM", "MC", "US")


def rich_spec(rng: random.Random) -> str:
    """A session as pi 1.x writes one: the prompt recorded first, patches, compactions with
    their snapshot, branch summaries, context edits (omissions and replacements)."""
    tokens: list[str] = [rng.choice(("S", "ST"))]
    messages: list[int] = []
    for index in range(1, rng.randint(4, 28)):
        roll = rng.random()
        if messages and roll < 0.1:
            tokens.append(f"X{rng.choice(messages)}")
        elif messages and roll < 0.17:
            target = rng.choice(messages)
            tokens.append(f"R{target}:{rng.randint(0, 40)}" if rng.random() < 0.6 else f"RB{target}:{rng.randint(0, 9)}")
        elif index > 3 and roll < 0.25:
            kind = "CS" if rng.random() < 0.75 else "C"
            tokens.append(f"{kind}{rng.randint(1, 60)}:0:{rng.randint(0, index - 1)}")
        elif roll < 0.3:
            tokens.append(rng.choice(("S", "SP", "ST")))
        else:
            kind = rng.choice(_RICH)
            size = rng.choice((1, 5, 10, 20, 40, 80, 160))
            if kind in ("U", "A", "T", "B", "CU", "CM", "BS"):
                token = f"{kind}{size}"
                if kind == "A":
                    token += "".join(part for part, p in ((f"@{rng.randint(50, 4000)}", 0.35), ("!", 0.12),
                                                            (f"#f{index}", 0.2), (f"$g{index}", 0.1)) if rng.random() < p)
                if kind in ("U", "A", "T", "CU", "CM"):
                    messages.append(index)
                tokens.append(token)
            else:
                tokens.append(kind)
    if tokens[-1].startswith("C") and not tokens[-1].startswith(("CU", "CM")):
        tokens.append("U5")
    return " ".join(tokens)


def _has_system(spec: str) -> bool:
    """System messages (pi 1.6's plain cut counts them, our path view as 0.84 does not)."""
    return any(t in ("S", "ST", "SP") or t.startswith("CS") for t in spec.split())


def cases() -> list[dict]:
    out = [{"what": what, "spec": spec, "keep": keep} for what, spec, keeps in HAND for keep in keeps]
    rng = random.Random(SEED)
    for n in range(RANDOM_CASES):
        out.append({"what": f"random #{n}", "spec": random_spec(rng), "keep": rng.choice((0, 5, 10, 20, 40, 80, 150))})
    rng = random.Random(RICH_SEED)
    for n in range(RICH_CASES):
        out.append({"what": f"rich #{n}", "spec": rich_spec(rng),
                    "keep": rng.choice((0, 5, 10, 20, 40, 80, 150, 300, 600))})
    return out


def main() -> int:
    oracle = Oracle()
    todo = cases()
    requests = [{"op": "prepare_compaction", "entries": plan_entries(c["spec"]),
                 "settings": {"keepRecentTokens": c["keep"], "reserveTokens": 16384}} for c in todo]
    for case, result in zip(todo, oracle.results(requests)):
        case["pi16"] = None if result is None else {k: result.get(k) for k in KEYS}
    cuts = [{"spec": c["spec"], "keep": c["keep"]} for c in todo if not _has_system(c["spec"])]
    requests = [{"op": "find_cut_point", "entries": plan_entries(c["spec"]), "keepRecentTokens": c["keep"]} for c in cuts]
    for case, result in zip(cuts, oracle.results(requests)):
        case["pi16"] = result
    oracle.close()
    doc = {"pi_version": "1.6.0", "generator": "tests/data/pi16/gen_plan_vectors.py", "seed": SEED, "rich_seed": RICH_SEED,
           "notation": "tests/pi16/planspec.py", "cases": todo, "cut_points": cuts}
    write_json(HERE / "plans_projection.json", doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
