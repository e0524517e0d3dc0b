"""Generate tests/data/system_prompt_vectors.json from pi 0.84.0's own buildSystemPrompt.

Needs the oracle (``/tmp/oracle`` by default); the tests that read the vectors do not.

Every context is generated in "masked space": the inputs use our MASK tokens (``<GC>``...)
where a test wants pi's fixed sentences (a guideline equal to a fixed rule). Before a
request goes to the oracle the masks are replaced by pi's sentences; pi's output then gets
the sentences replaced by the masks again. pi's sentences are learned at run time from two
requests with known inputs and are never written to the committed file.

    python tests/data/gen_system_prompt_vectors.py                 # write the vectors (seed 84)
    python tests/data/gen_system_prompt_vectors.py --verify 400    # fresh, unseen contexts:
                                                                   # compare our render, write nothing
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.prompt import ContextFile, RenderContext, Skill  # noqa: E402

PACKAGE_DIR = "/opt/pi"
MASKS = ("<DOCS>", "<SKI>", "<ID>", "<OT>", "<PCI>", "<GB>", "<GC>", "<GP>", "<CWD>")
BUILTINS = ("read", "bash", "edit", "write", "grep", "find", "ls")
UNKNOWN = ("mytool", "deploy", "db_query", "ünïcode", "web-fetch", "todo")

WORDS = (
    "alpha beta gamma delta run tests before commit keep imports sorted prefer small diffs "
    "use tabs never force-push document public functions check the changelog"
).split()
ODD = (
    "&", "<", ">", '"', "'", "&amp;", "<b>", "${cwd}", "$${", "$1", "$@", "\\", "C:\\tmp",
    "naïve", "日本語", "😀", "Ω", "\u00a0", "\u3000", "\ufeff", "\t", "—", "`code`", "</project_context>",
)
CWDS = (
    "/w", "/", "/home/u/proj", "/home/dev/my repo", "/srv/ünï/projekt", "/tmp/a&b/<c>",
    "C:\\Users\\me\\proj", "C:\\work\\proj", "D:\\", "\\\\server\\share\\repo", "C:/mixed\\slashes/x",
    "/data/日本語/src", "~/relative", "relative/dir",
)


# --------------------------------------------------------------------------- random inputs


def phrase(rng: random.Random, odd: float = 0.3) -> str:
    n = rng.randint(1, 7)
    parts = [rng.choice(ODD) if rng.random() < odd else rng.choice(WORDS) for _ in range(n)]
    return " ".join(parts)


def spaced(rng: random.Random, text: str) -> str:
    pads = ("", "", " ", "  ", "\t", "\n", " \n ", "\u00a0", "\u3000")
    return rng.choice(pads) + text + rng.choice(pads)


def gen_guideline(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.15:
        return spaced(rng, rng.choice(("<GB>", "<GC>", "<GP>")))
    if r < 0.25:
        return rng.choice(("", " ", "\n", "\t \u00a0"))
    return spaced(rng, phrase(rng, 0.15))


def gen_snippet(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.1:
        return rng.choice(("", "   ", "\n"))
    if r < 0.3:
        return phrase(rng).replace(" ", rng.choice(("  ", "\n", "\r\n", " \t ", "\u00a0")), 2)
    return phrase(rng, 0.2)


def gen_tools(rng: random.Random) -> tuple[str, ...] | None:
    r = rng.random()
    if r < 0.2:
        return None
    if r < 0.28:
        return ()
    pool = list(BUILTINS) + list(UNKNOWN)
    chosen = rng.sample(pool, rng.randint(1, 6))
    if rng.random() < 0.1:
        chosen.append(rng.choice(chosen))  # a duplicate
    return tuple(chosen)


def gen_tool_texts(rng: random.Random, tools: tuple[str, ...] | None):
    names = list(tools if tools is not None else ("read", "bash", "edit", "write"))
    names += rng.sample(list(BUILTINS + UNKNOWN), 2)  # some for unselected tools
    snippets, guidelines = {}, {}
    for name in dict.fromkeys(names):
        if rng.random() < 0.7:
            snippets[name] = gen_snippet(rng)
        if rng.random() < 0.4:
            gl = [gen_guideline(rng) for _ in range(rng.randint(1, 4))]
            if rng.random() < 0.3:
                gl.append(rng.choice(gl))
            guidelines[name] = tuple(gl)
    return snippets, guidelines


def gen_custom(rng: random.Random) -> str | None:
    r = rng.random()
    if r < 0.55:
        return None
    return rng.choice(("", " ", "  ", "\n", "\t")) if r < 0.7 else "\n".join(phrase(rng) for _ in range(rng.randint(1, 3)))


def gen_appends(rng: random.Random) -> tuple[str, ...]:
    r = rng.random()
    if r < 0.5:
        return ()
    if r < 0.6:
        return ("",)
    return tuple(rng.choice(("", phrase(rng), phrase(rng) + "\n", "<GC>")) for _ in range(rng.randint(1, 3)))


def gen_files(rng: random.Random) -> tuple[ContextFile, ...]:
    if rng.random() < 0.4:
        return ()
    roots = ("/home/u", "/home/u/proj", "/home/u/proj/pkg", "C:\\work\\proj", "/a b/<x>&\"y\"", "/日本")
    names = ("AGENTS.md", "CLAUDE.md", "AGENTS.override.md", "AGENTS.MD", "CLAUDE.MD")
    out = []
    for _ in range(rng.randint(1, 4)):
        root = rng.choice(roots)
        sep = "\\" if root.startswith("C:") else "/"
        content = "\n".join(phrase(rng) for _ in range(rng.randint(0, 3)))
        content += rng.choice(("", "", "\n", "\n\n", "\r\n"))
        out.append(ContextFile(root + sep + rng.choice(names), content))
    return tuple(out)


def gen_skills(rng: random.Random) -> tuple[Skill, ...]:
    if rng.random() < 0.35:
        return ()
    names = ("pdf", "git-o'clock", "a&b", "<x>", "日本語", "deploy", "q\"uote", "emoji-😀")
    out = []
    for _ in range(rng.randint(1, 4)):
        name = rng.choice(names)
        base = rng.choice(("/s/", "/home/u/.pi/agent/skills/", "C:\\skills\\", "/p&q/<r>/"))
        sep = "\\" if base.startswith("C:") else "/"
        path = base + name + sep + "SKILL.md"
        out.append(Skill(name, phrase(rng, 0.4), path, path.rsplit(sep, 1)[0], rng.random() < 0.25))
    return tuple(out)


def gen_context(rng: random.Random) -> RenderContext:
    tools = gen_tools(rng)
    snippets, guidelines = gen_tool_texts(rng, tools)
    caller = tuple(gen_guideline(rng) for _ in range(rng.choice((0, 0, 1, 2, 4))))
    return RenderContext(
        cwd=rng.choice(CWDS),
        tools=tools,
        tool_snippets=snippets,
        tool_guidelines=guidelines,
        guidelines=caller,
        custom_prompt=gen_custom(rng),
        append_prompts=gen_appends(rng),
        context_files=gen_files(rng),
        skills=gen_skills(rng),
    )


def fixed_contexts() -> list[RenderContext]:
    """The shapes of docs/pi-rules.md#system-prompt-shapes (S1-S12), so every one of them is in the file."""
    pdf = Skill("pdf", "Use <pdf> & \"x\" 'y'", "/s/pdf/SKILL.md", "/s/pdf")
    hidden = Skill("hidden", "never", "/s/h/SKILL.md", "/s/h", True)
    four = {t: f"S_{t}" for t in ("read", "bash", "edit", "write")}
    files = (ContextFile("/a/AGENTS.md", "G1\n"), ContextFile("/repo/AGENTS.md", "P1"))
    return [
        RenderContext(cwd="/w"),
        RenderContext(cwd="/w", tools=tuple(four), tool_snippets=four, guidelines=tuple(f"g{i}" for i in range(1, 8))),
        RenderContext(cwd="/w", tools=("read", "mytool", "grep"), tool_snippets={"read": "S_read", "grep": "S_grep"}),
        RenderContext(cwd="/w", tools=("bash", "grep"), tool_snippets={"bash": "S_bash"}),
        RenderContext(cwd="/w", tools=("bash",), guidelines=("  <GC>  ", "X", "X", " ", "<GB>", "Y ")),
        RenderContext(cwd="/w", tools=(), skills=(pdf,)),
        RenderContext(cwd="/w", tools=("read",), skills=(pdf, hidden)),
        RenderContext(cwd="/w", tools=("bash",), skills=(pdf,)),
        RenderContext(cwd="/w", tools=("read",), skills=(hidden,)),
        RenderContext(cwd="C:\\work\\proj", custom_prompt="CUSTOM", append_prompts=("APPEND",), context_files=files, skills=(pdf,)),
        RenderContext(cwd="/w", custom_prompt="CUSTOM", tools=("bash",), skills=(pdf,)),
        RenderContext(cwd="/w", custom_prompt="CUSTOM", tools=(), skills=(pdf,)),
        RenderContext(cwd="/w", custom_prompt="", append_prompts=("",), tools=("read",)),
        RenderContext(cwd="/w", context_files=(ContextFile("C:\\repo\\AGENTS.md", 'line "q" <x>\n'),)),
        RenderContext(cwd="/", custom_prompt="Just this."),
        RenderContext(cwd="/w", custom_prompt="  "),
        RenderContext(cwd="/w", context_files=files),
    ]


# --------------------------------------------------------------------------- oracle


class Oracle:
    def __init__(self, oracle_dir: Path) -> None:
        self.dir = oracle_dir

    def run(self, requests: list[dict]) -> list:
        lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in requests)
        done = subprocess.run(
            [str(self.dir / "oracle"), "--jsonl"], input=lines.encode(), capture_output=True, check=True
        )
        replies = [json.loads(line) for line in done.stdout.decode().splitlines() if line.strip()]
        bad = [r for r in replies if not r.get("ok")]
        if bad or len(replies) != len(requests):
            raise SystemExit(f"oracle failed: {bad[:1] or 'reply count mismatch'}")
        return [r["result"] for r in replies]

    def normalize_snippets(self, snippets: list[str]) -> list:
        script = HERE / "pi_snippets.mjs"
        done = subprocess.run(
            [str(self.dir / "oracle"), "--run", str(script), str(self.dir)],
            input=json.dumps(snippets).encode(),
            capture_output=True,
            check=True,
        )
        return json.loads(done.stdout)


def learn_sentences(oracle: Oracle) -> dict[str, str]:
    """pi's fixed sentences, cut out of two outputs with known inputs."""
    skill = {"name": "n", "description": "d", "filePath": "/f", "baseDir": "/"}
    base = {"cwd": "/w", "selectedTools": ["bash"]}
    plain, extra = oracle.run(
        [
            {"op": "system_prompt", "packageDir": PACKAGE_DIR, "options": base},
            {"op": "system_prompt", "packageDir": PACKAGE_DIR, "options": {
                "cwd": "/w", "customPrompt": "C", "contextFiles": [{"path": "p", "content": "c"}], "skills": [skill]}},
        ]
    )
    ident, tools, other, rules, tail = plain.split("\n\n")
    assert tools == "Available tools:\n(none)", tools
    gb, gc, gp = (line[2:] for line in rules.split("\n")[1:])
    docs, cwd_line = tail.rsplit("\n", 1)
    pci = extra.split("<project_context>\n\n", 1)[1].split("\n\n", 1)[0]
    ski = extra.split("</project_context>\n\n\n", 1)[1].split("\n\n<available_skills>", 1)[0]
    found = {"<DOCS>": docs, "<SKI>": ski, "<ID>": ident, "<OT>": other, "<PCI>": pci,
             "<GB>": gb, "<GC>": gc, "<GP>": gp, "<CWD>": cwd_line[: -len("/w")]}
    _check_sentences(found)
    return found


def _check_sentences(found: dict[str, str]) -> None:
    for mask, sentence in found.items():
        assert sentence and mask not in sentence, mask
        for other, text in found.items():
            if other != mask and len(text) < len(sentence):
                assert text not in sentence, (other, mask)


def unmask(text: str, sentences: dict[str, str]) -> str:
    for mask, sentence in sentences.items():
        text = text.replace(mask, sentence)
    return text


def mask(text: str, sentences: dict[str, str]) -> str:
    for m, sentence in sentences.items():  # longest blocks first (dict order)
        text = text.replace(sentence, m)
    return text


def oracle_request(ctx: RenderContext, sentences: dict[str, str], snippets: dict[str, str]) -> dict:
    """What pi's AgentSession would pass to buildSystemPrompt for this context."""
    tools = ctx.tools if ctx.tools is not None else ("read", "bash", "edit", "write")
    guidelines = [g for t in tools for g in ctx.tool_guidelines.get(t, ())] + list(ctx.guidelines)
    options: dict = {
        "cwd": ctx.cwd,
        "toolSnippets": snippets,
        "promptGuidelines": [unmask(g, sentences) for g in guidelines],
        "contextFiles": [{"path": f.path, "content": unmask(f.content, sentences)} for f in ctx.context_files],
        "skills": [
            {"name": s.name, "description": s.description, "filePath": s.file_path, "baseDir": s.base_dir,
             "disableModelInvocation": s.disable_model_invocation}
            for s in ctx.skills
        ],
    }
    if ctx.tools is not None:
        options["selectedTools"] = list(ctx.tools)
    if ctx.custom_prompt is not None:
        options["customPrompt"] = unmask(ctx.custom_prompt, sentences)
    if ctx.append_prompts:
        options["appendSystemPrompt"] = unmask("\n\n".join(ctx.append_prompts), sentences)
    return {"op": "system_prompt", "packageDir": PACKAGE_DIR, "options": options}


def expected_outputs(oracle: Oracle, contexts: list[RenderContext]) -> list[str]:
    sentences = learn_sentences(oracle)
    raw = [s for ctx in contexts for s in ctx.tool_snippets.values()]
    normalized = dict(zip(raw, oracle.normalize_snippets(raw)))
    requests = []
    for ctx in contexts:
        snippets = {k: normalized[v] for k, v in ctx.tool_snippets.items() if normalized[v] is not None}
        requests.append(oracle_request(ctx, sentences, snippets))
    return [mask(out, sentences) for out in oracle.run(requests)]


# --------------------------------------------------------------------------- main


def contexts_for(seed: int, count: int) -> list[RenderContext]:
    rng = random.Random(seed)
    return [gen_context(rng) for _ in range(count)]


def verify(oracle: Oracle, seed: int, count: int) -> int:
    from pipeline.compiler import compile_profile
    from pipeline.prompt import render_system_prompt

    pipeline = compile_profile(ROOT / "tests/prompt/pi_shaped.yaml").profile
    contexts = contexts_for(seed, count)
    bad = [
        (i, ctx)
        for i, (ctx, want) in enumerate(zip(contexts, expected_outputs(oracle, contexts)))
        if render_system_prompt(pipeline, ctx) != want
    ]
    print(f"verified {count} fresh contexts (seed {seed}): {count - len(bad)} identical, {len(bad)} different")
    for i, ctx in bad[:3]:
        print(f"  #{i}: {json.dumps(ctx.to_json(), ensure_ascii=False)[:400]}")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--oracle", type=Path, default=Path("/tmp/oracle"))
    parser.add_argument("--seed", type=int, default=84)
    parser.add_argument("--count", type=int, default=360, help="random contexts (plus the fixed shapes)")
    parser.add_argument("--out", type=Path, default=HERE / "system_prompt_vectors.json")
    parser.add_argument("--verify", type=int, metavar="N", help="check N fresh contexts instead of writing")
    args = parser.parse_args(argv)
    oracle = Oracle(args.oracle)
    if args.verify:
        seed = args.seed if args.seed != 84 else random.SystemRandom().randrange(10**6, 10**9)
        return verify(oracle, seed, args.verify)
    contexts = fixed_contexts() + contexts_for(args.seed, args.count)
    outputs = expected_outputs(oracle, contexts)
    doc = {
        "pi_version": "0.84.0",
        "op": "system_prompt",
        "package_dir": PACKAGE_DIR,
        "profile": "tests/prompt/pi_shaped.yaml",
        "masks": list(MASKS),
        "generator": f"tests/data/gen_system_prompt_vectors.py --seed {args.seed} --count {args.count}",
        "vectors": [{"context": c.to_json(), "expected": o} for c, o in zip(contexts, outputs)],
    }
    args.out.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(contexts)} vectors to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
