"""Generate ``sections.json`` and ``patches.json`` from pi 1.6.0's own system-prompt code.

Needs a set-up pi 1.6.0 oracle (``$PI16_ORACLE``, see ``pi16_oracle.py``); tests do not.

* ``sections.json``: ``system_prompt`` (``buildSystemPromptState`` + ``buildSystemPrompt``) on
  generated option sets: pi's section order, every section's text and the joined prompt;
  plus custom section names pi rejects.
* ``patches.json``: ``diff_system_prompt_sections`` on pairs of option sets (one or more
  mutations of a generated set): the patch, its mid-conversation rendering and the prompt
  a model without mid-conversation system messages gets (the replay), beside the fresh one.

Inputs are generated in "masked space": a text may be a mask token (``<G_CONCISE>``) that
stands for one of pi's sentences. Masks are replaced by pi's sentences before a request
and pi's sentences by masks in every reply, so no pi sentence is written. Seeded: re-running
gives identical files.

    python tests/data/pi16/gen_prompt_vectors.py [--seed 16] [--count 340] [--pairs 160]
"""

from __future__ import annotations

import argparse
import copy
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pi16_oracle import HERE, PACKAGE_DIR, Oracle, PromptMasks, sp, write_json  # noqa: E402

BUILTINS = ("read", "bash", "edit", "write", "grep", "find", "ls", "powershell")
UNKNOWN = ("mytool", "deploy", "db_query", "ünïcode", "web-fetch")
RULE_MASKS = ("<G_BASH>", "<G_CONCISE>", "<G_PATHS>", "<G_PS>")
WORDS = ("alpha beta gamma run tests before commit keep imports sorted prefer small diffs use tabs "
         "never force-push document public functions check the changelog").split()
ODD = ("&", "<", ">", '"', "'", "<b>", "${cwd}", "$1", "\\", "C:\\tmp", "naïve", "日本語", "😀",
       "\u00a0", "\t", "</rules>", "<cwd>", "\n\n", "  ")
CWDS = ("/w", "/", "/home/u/proj", "/home/dev/my repo", "/tmp/a&b/<c>", "C:\\Users\\me\\proj",
        "D:\\", "\\\\server\\share\\repo", "C:/mixed\\slashes/x", "/data/日本語/src", "relative/dir")
SECTION_NAMES = ("reminder", "mcp_servers", "a", "x-y_z9", "todo", "z", "notes", "b2")
BUILTIN_NAMES = ("tools", "rules", "docs", "addendum", "project_context", "skills", "cwd")
BAD_NAMES = ("preamble", "Preamble", "1abc", "_x", "-x", "a b", "", "A", "x.y", "ü", "ab!", "rules ",
             "tOOls", "9", "a\nb")


def phrase(rng: random.Random, odd: float = 0.25) -> str:
    return " ".join(rng.choice(ODD) if rng.random() < odd else rng.choice(WORDS) for _ in range(rng.randint(1, 6)))


def guideline(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.15:
        return rng.choice(("", " ", "  ")) + rng.choice(RULE_MASKS) + rng.choice(("", " ", "\n"))
    if r < 0.25:
        return rng.choice(("", " ", "\n", "\t "))
    return rng.choice(("", "", " ", "\n")) + phrase(rng, 0.1) + rng.choice(("", "", " "))


def gen_tools(rng: random.Random) -> list[str] | None:
    r = rng.random()
    if r < 0.2:
        return None
    if r < 0.27:
        return []
    chosen = rng.sample(BUILTINS + UNKNOWN, rng.randint(1, 6))
    if rng.random() < 0.08:
        chosen.append(rng.choice(chosen))
    return chosen


def gen_files(rng: random.Random) -> list[dict]:
    if rng.random() < 0.45:
        return []
    roots = ("/home/u", "/home/u/proj", "C:\\work\\proj", "/a b/<x>&\"y\"", "/日本")
    out = []
    for _ in range(rng.randint(1, 3)):
        root = rng.choice(roots)
        content = "\n".join(phrase(rng) for _ in range(rng.randint(0, 3))) + rng.choice(("", "", "\n", "\n\n"))
        out.append({"path": root + ("\\" if root.startswith("C:") else "/") + rng.choice(("AGENTS.md", "CLAUDE.md")),
                    "content": content})
    return out


def gen_skills(rng: random.Random) -> list[dict]:
    if rng.random() < 0.4:
        return []
    names = ("pdf", "git-o'clock", "a&b", "<x>", "日本語", "deploy", "q\"uote")
    out = []
    for _ in range(rng.randint(1, 3)):
        name = rng.choice(names)
        base = rng.choice(("/s/", "/home/u/.pi/agent/skills/", "/p&q/<r>/"))
        skill = {"name": name, "description": phrase(rng, 0.4), "filePath": f"{base}{name}/SKILL.md",
                 "baseDir": f"{base}{name}"}
        if rng.random() < 0.25:
            skill["disableModelInvocation"] = True
        out.append(skill)
    return out


def gen_sections(rng: random.Random) -> dict:
    if rng.random() < 0.55:
        return {}
    out = {}
    for _ in range(rng.randint(1, 3)):
        name = rng.choice(BUILTIN_NAMES) if rng.random() < 0.2 else rng.choice(SECTION_NAMES)
        out[name] = rng.choice(("", phrase(rng), phrase(rng) + "\n" + phrase(rng), " "))
    return out


def gen_options(rng: random.Random) -> dict:
    opts: dict = {"cwd": rng.choice(CWDS)}
    tools = gen_tools(rng)
    if tools is not None:
        opts["selectedTools"] = tools
    named = list(dict.fromkeys((tools if tools is not None else ["read", "bash", "edit", "write"])
                               + rng.sample(BUILTINS + UNKNOWN, 2)))
    if rng.random() < 0.2:
        opts["hiddenTools"] = rng.sample(named, rng.randint(1, min(2, len(named))))
    snippets = {n: rng.choice(("", phrase(rng, 0.15), phrase(rng, 0.15), "a  b\nc")) for n in named if rng.random() < 0.75}
    if snippets:
        opts["toolSnippets"] = snippets
    guidelines = {n: [guideline(rng) for _ in range(rng.randint(1, 3))] for n in named if rng.random() < 0.35}
    if guidelines:
        opts["toolGuidelines"] = guidelines
    if rng.random() < 0.45:
        opts["promptGuidelines"] = [guideline(rng) for _ in range(rng.randint(1, 4))]
    r = rng.random()
    if r < 0.3:
        opts["customPrompt"] = rng.choice(("", " ", "\n")) if r < 0.08 else "\n".join(phrase(rng) for _ in range(rng.randint(1, 3)))
    if rng.random() < 0.35:
        opts["appendSystemPrompt"] = rng.choice(("", phrase(rng), phrase(rng) + "\n\n" + phrase(rng), "<G_CONCISE>"))
    for key, value in (("contextFiles", gen_files(rng)), ("skills", gen_skills(rng)), ("sections", gen_sections(rng))):
        if value:
            opts[key] = value
    if rng.random() < 0.03:
        opts["forceSystemPrompt"] = rng.choice(("", "FORCED " + phrase(rng)))
    return opts


def fixed_options() -> list[dict]:
    """Hand-picked shapes: every section, each reader for skills, overrides of built-in names."""
    skill = {"name": "pdf", "description": "Use <pdf> & \"x\"", "filePath": "/s/pdf/SKILL.md", "baseDir": "/s/pdf"}
    files = [{"path": "/a/AGENTS.md", "content": "G1\n"}, {"path": "/repo/AGENTS.md", "content": "P1"}]
    return [
        {"cwd": "/w"},
        {"cwd": "/home/u/proj"},
        {"cwd": "/w", "selectedTools": ["read", "bash"], "toolSnippets": {"read": "S_read", "bash": "S_bash"},
         "appendSystemPrompt": "APPEND", "contextFiles": files, "skills": [skill], "sections": {"reminder": "R"}},
        {"cwd": "/w", "customPrompt": "CUSTOM", "appendSystemPrompt": "APPEND", "contextFiles": files, "skills": [skill]},
        {"cwd": "/w", "customPrompt": "CUSTOM", "sections": {"rules": "late rules", "tools": "late tools"}},
        {"cwd": "/w", "sections": {"cwd": "replaced cwd", "tools": "replaced tools", "zeta": "Z", "alpha": "A"}},
        {"cwd": "/w", "sections": {"empty": "", "space": " "}},
        {"cwd": "/w", "selectedTools": ["bash"], "skills": [skill]},
        {"cwd": "/w", "selectedTools": ["edit"], "skills": [skill]},
        {"cwd": "/w", "selectedTools": ["read", "edit"], "hiddenTools": ["read"], "skills": [skill]},
        {"cwd": "/w", "selectedTools": ["bash", "read"], "hiddenTools": ["bash"], "skills": [skill]},
        {"cwd": "/w", "selectedTools": ["powershell", "bash"]},
        {"cwd": "/w", "selectedTools": ["powershell", "grep"]},
        {"cwd": "/w", "selectedTools": ["bash"], "hiddenTools": ["bash"]},
        {"cwd": "/w", "selectedTools": ["bash", "grep"], "promptGuidelines": ["  <G_CONCISE> ", "X", "X", " ", "<G_BASH>"]},
        {"cwd": "/w", "selectedTools": ["read", "bash"], "toolGuidelines": {"bash": ["B1", "<G_PATHS>"], "read": ["R1"], "write": ["W1"]},
         "promptGuidelines": ["B1", "P1"]},
        {"cwd": "C:\\work\\proj", "contextFiles": [{"path": "C:\\repo\\AGENTS.md", "content": "line \"q\" <x>\n"}]},
        {"cwd": "/w", "customPrompt": "  "},
        {"cwd": "/w", "customPrompt": ""},
        {"cwd": "/w", "forceSystemPrompt": "FORCED", "sections": {"reminder": "R"}},
        {"cwd": "/w", "forceSystemPrompt": ""},
        {"cwd": ""},
    ]


# --------------------------------------------------------------------------- patches


def mutate(rng: random.Random, opts: dict) -> tuple[dict, list[str]]:
    cur = copy.deepcopy(opts)
    done = []
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
        kind = rng.choice(("cwd", "append", "files", "skills", "tools", "hidden", "guidelines", "section_add",
                           "section_change", "section_remove", "custom_prompt", "builtin_override", "none"))
        done.append(kind)
        if kind == "cwd":
            cur["cwd"] = rng.choice([c for c in CWDS if c != cur["cwd"]])
        elif kind == "append":
            cur["appendSystemPrompt"] = "" if cur.get("appendSystemPrompt") else phrase(rng)
        elif kind == "files":
            cur["contextFiles"] = [] if cur.get("contextFiles") and rng.random() < 0.5 else gen_files(random.Random(rng.random())) or [{"path": "/p/AGENTS.md", "content": "new"}]
        elif kind == "skills":
            cur["skills"] = [] if cur.get("skills") and rng.random() < 0.5 else gen_skills(random.Random(rng.random())) or [{"name": "k", "description": "d", "filePath": "/k/SKILL.md", "baseDir": "/k"}]
        elif kind == "tools":
            tools = list(cur.get("selectedTools", ["read", "bash", "edit", "write"]))
            if tools and rng.random() < 0.5:
                tools.remove(rng.choice(tools))
            else:
                tools.append(rng.choice(BUILTINS + UNKNOWN))
                cur.setdefault("toolSnippets", {}).setdefault(tools[-1], phrase(rng, 0.1))
            cur["selectedTools"] = tools
        elif kind == "hidden":
            tools = cur.get("selectedTools", ["read", "bash", "edit", "write"]) or ["read"]
            cur["hiddenTools"] = [] if cur.get("hiddenTools") else [rng.choice(tools)]
        elif kind == "guidelines":
            cur["promptGuidelines"] = list(cur.get("promptGuidelines", [])) + [guideline(rng)]
        elif kind == "section_add":
            cur["sections"] = {**cur.get("sections", {}), rng.choice(SECTION_NAMES): phrase(rng)}
        elif kind == "section_change" and cur.get("sections"):
            name = rng.choice(list(cur["sections"]))
            cur["sections"] = {**cur["sections"], name: rng.choice(("", phrase(rng)))}
        elif kind == "section_remove" and cur.get("sections"):
            name = rng.choice(list(cur["sections"]))
            cur["sections"] = {k: v for k, v in cur["sections"].items() if k != name}
        elif kind == "custom_prompt":
            if cur.get("customPrompt"):
                del cur["customPrompt"]
            else:
                cur["customPrompt"] = phrase(rng)
        elif kind == "builtin_override":
            cur["sections"] = {**cur.get("sections", {}), rng.choice(BUILTIN_NAMES): phrase(rng)}
    return cur, done


def fixed_pairs() -> list[tuple[dict, dict, list[str]]]:
    base = {"cwd": "/w", "selectedTools": ["read", "bash"], "toolSnippets": {"read": "S_read"}}
    return [
        (base, base, ["none"]),
        (base, {**base, "cwd": "/w2"}, ["cwd"]),
        (base, {**base, "cwd": "/w2", "appendSystemPrompt": "APPEND", "sections": {"reminder": "R"},
                "contextFiles": [{"path": "/w2/AGENTS.md", "content": "Use tabs."}]}, ["cwd", "append", "files", "section_add"]),
        ({**base, "sections": {"reminder": "R"}}, base, ["section_remove"]),
        ({**base, "sections": {"reminder": "R"}}, {**base, "sections": {"reminder": ""}}, ["section_change"]),
        (base, {**base, "customPrompt": "CUSTOM"}, ["custom_prompt"]),
        ({**base, "customPrompt": "CUSTOM"}, base, ["custom_prompt"]),
        (base, {**base, "selectedTools": ["read"]}, ["tools"]),
        (base, {**base, "selectedTools": ["read", "bash", "grep"]}, ["tools"]),
        (base, {**base, "hiddenTools": ["read"]}, ["hidden"]),
        ({**base, "skills": [{"name": "k", "description": "d", "filePath": "/k/SKILL.md", "baseDir": "/k"}]},
         {**base, "selectedTools": ["edit"], "skills": [{"name": "k", "description": "d", "filePath": "/k/SKILL.md", "baseDir": "/k"}]},
         ["tools", "skills"]),
        (base, {**base, "sections": {"cwd": "elsewhere"}}, ["builtin_override"]),
    ]


def diff_request(prev: dict, cur: dict) -> dict:
    return {"op": "diff_system_prompt_sections", "packageDir": PACKAGE_DIR, "previous": prev, "current": cur}


# --------------------------------------------------------------------------- main


def section_vectors(oracle: Oracle, masks: PromptMasks, options: list[dict]) -> list[dict]:
    results = oracle.results([sp(masks.unmask(o)) for o in options])
    out = []
    for i, (opts, res) in enumerate(zip(options, results)):
        vec = {"id": f"s{i:03d}", "options": opts, "order": res["order"], "sections": masks.mask(res["sections"]),
               "prompt": masks.mask(res["prompt"])}
        if res["sections"] is None:  # a forced prompt: no sections, the text is the content
            vec["content"] = masks.mask(res.get("content", ""))
        out.append(vec)
    return out


def rejected_names(oracle: Oracle) -> list[dict]:
    names = list(BAD_NAMES) + ["ok_name", "a-", "z9", "mcp_servers"]
    envs = oracle.envelopes([{"op": "system_prompt_sections", "packageDir": PACKAGE_DIR,
                              "options": {"cwd": "/w", "sections": {n: "x"}}} for n in names])
    return [{"name": n, "accepted": e["ok"]} for n, e in zip(names, envs)]


def patch_vectors(oracle: Oracle, masks: PromptMasks, pairs: list[tuple[dict, dict, list[str]]]) -> list[dict]:
    results = oracle.results([diff_request(masks.unmask(p), masks.unmask(c)) for p, c, _ in pairs])
    out = []
    for i, ((prev, cur, kinds), res) in enumerate(zip(pairs, results)):
        out.append({
            "id": f"p{i:03d}", "mutations": kinds, "previous": prev, "current": cur,
            "previous_order": list(res["previousSections"]), "current_order": list(res["currentSections"]),
            "previous_sections": masks.mask(res["previousSections"]),
            "current_sections": masks.mask(res["currentSections"]),
            "patch": masks.mask(res["patch"]),
            "patch_order": list(res["patch"]) if res["patch"] else [],
            "update": masks.mask_update(res["update"]),
            "replayed_prompt": masks.mask(res["replayedPrompt"]),
            "fresh_prompt": masks.mask(res["freshPrompt"]),
            "replay_matches_fresh": res["replayMatchesFresh"],
        })
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--count", type=int, default=340)
    parser.add_argument("--pairs", type=int, default=160)
    args = parser.parse_args(argv)
    oracle = Oracle()
    masks = PromptMasks(oracle)
    rng = random.Random(args.seed)
    options = fixed_options() + [gen_options(rng) for _ in range(args.count)]
    common = {"pi_version": "1.6.0", "package_dir": PACKAGE_DIR, "masks": list(masks.sentences)}
    sections = {**common, "op": "system_prompt",
                "generator": f"tests/data/pi16/gen_prompt_vectors.py --seed {args.seed} --count {args.count} --pairs {args.pairs}",
                "vectors": section_vectors(oracle, masks, options), "section_names": rejected_names(oracle)}
    prng = random.Random(args.seed + 1)
    pairs = fixed_pairs()
    while len(pairs) < len(fixed_pairs()) + args.pairs:
        prev = gen_options(prng)
        if "forceSystemPrompt" in prev:
            continue
        pairs.append((prev, *mutate(prng, prev)))
    patches = {**common, "update_masks": list(masks.update_words), "op": "diff_system_prompt_sections",
               "generator": sections["generator"], "vectors": patch_vectors(oracle, masks, pairs)}
    oracle.close()
    for name, doc in (("sections.json", sections), ("patches.json", patches)):
        masks.check(doc)
        write_json(HERE / name, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
