"""Generate ``tests/data/template_vectors.json`` from pi 0.84.0 itself (the oracle).

Every expected value in the vector file is pi's answer: the script builds random and
hand-picked inputs, sends them to the oracle (``./oracle --jsonl`` in ``$PI_ORACLE``,
default ``/tmp/oracle``) and stores the replies. The tests only read the JSON file;
they never need Node or the oracle.

    python tests/data/gen_template_vectors.py              # (re)write the vector file
    python tests/data/gen_template_vectors.py --check --seed 7 --count 400
        # fresh random cases (none of them in the vector file), compared with our
        # implementation; prints the mismatches and exits 1 if there are any

Sections: ``parse_args`` (parseCommandArgs), ``expand`` (substituteArgs with an args list
or an argument string), ``expand_input`` (expandPromptTemplate), ``angle`` (a body using
``$<...>`` forms, our own spelling, with pi's result for its ``${...}`` twin),
``frontmatter`` (parseFrontmatter) and ``load_templates`` (loadPromptTemplates on a
directory given explicitly, and the agent's own discovery of ``<agentDir>/prompts`` and
``<cwd>/.pi/prompts``, built from real files, symlinks included).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "template_vectors.json"
ORACLE_DIR = Path(os.environ.get("PI_ORACLE", "/tmp/oracle"))
FIXTURE_ROOT = "/tmp/ctxp-template-vectors"


# --- the oracle -----------------------------------------------------------------------------


class Oracle:
    """One long-running ``./oracle --jsonl`` process; ``ask`` sends a batch of requests."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            ["./oracle", "--jsonl"],
            cwd=ORACLE_DIR,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="surrogatepass",
        )

    def ask(self, requests: list[dict]) -> list[dict]:
        """Send the requests as one array; return their envelopes in order."""
        line = json.dumps(requests, ensure_ascii=True)
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        if isinstance(reply, dict):  # a failure of the whole batch
            raise RuntimeError(f"oracle: {reply}")
        return reply

    def results(self, requests: list[dict], chunk: int = 500) -> list[dict]:
        out: list[dict] = []
        for i in range(0, len(requests), chunk):
            out.extend(self.ask(requests[i : i + chunk]))
        return out

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


# --- random inputs ---------------------------------------------------------------------------

JS_SPACES = ["\t", "\n", "\x0b", "\x0c", "\r", " ", "\u00a0", "\u1680", "\u2000", "\u2003",
             "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff"]
NOT_SPACES = ["\u200b", "\u0085", "\x1c", "\x1f", "\u180e"]
WORDS = ["a", "b", "xy", "src/a.ts", "😀", "é", "日本", "0", "-1", "\\", "\\n", "$", "$1", "$@",
         "$ARGUMENTS", "${@:1}", "$&", "$$", "$`", "$'", "\\1", "x\u200by", "\ud83d"]

SOUP = ["$", "$", "$", "{", "}", "<", ">", "@", ":", "-", ":-", "0", "1", "2", "9", "12", "01",
        "00", "ARGUMENTS", "ARGS", "arguments", "Arguments", " ", "\t", "\n", "\r\n", "x", "abc",
        "😀", "é", "٣", "$$", "${", "$<", "${@:", "${1:-", "$@", "$1", "$ARGUMENTS", "${@", "@:",
        "99999999999999999999", "\\", "&", "`", "'", '"', "\u00a0", "\u2028", "=", "+", "?", "#"]


def rand_args(rng: random.Random) -> list[str]:
    n = rng.choice([0, 0, 1, 1, 2, 2, 3, 3, 4, 5, 12])
    pool = WORDS + ["", "", "x y", " ", "\n", "a\tb", "null", "undefined"]
    return [rng.choice(pool) if rng.random() < 0.8 else f"v{i}" for i in range(n)]


def rand_soup(rng: random.Random, max_pieces: int = 14) -> str:
    return "".join(rng.choice(SOUP) for _ in range(rng.randint(1, max_pieces)))


def rand_number(rng: random.Random) -> str:
    return rng.choice(["0", "1", "2", "3", "5", "9", "10", "12", "01", "002", "00",
                       "99999999999999999999", "9007199254740993", str(rng.randint(0, 30))])


def rand_default_text(rng: random.Random, closer: str = "}") -> str:
    pool = ["", "def", "none", "$2", "$@", "a b", "x\ny", ":-", "1", "-1", "${2", "😀", "$&",
            "<tag", "a>b" if closer == "}" else "a}b", "  ", "\t", "é"]
    return rng.choice(pool)


def rand_form(rng: random.Random) -> tuple[str, str | None]:
    """A valid placeholder: (braced spelling, angle spelling or None when it has none)."""
    kind = rng.randrange(6)
    if kind == 0:
        return f"${rand_number(rng)}", None
    if kind == 1:
        return rng.choice(["$@", "$ARGUMENTS"]), None
    target = rng.choice(["@", "ARGUMENTS", rand_number(rng), rand_number(rng)])
    if kind in (2, 3):
        text = rand_default_text(rng)
        braced = "${" + target + ":-" + text + "}"
        angle = "$<" + target + ":-" + text + ">" if ">" not in text and "}" not in text else None
        return braced, angle
    length = f":{rand_number(rng)}" if rng.random() < 0.5 else ""
    inner = f"@:{rand_number(rng)}{length}"
    return "${" + inner + "}", "$<" + inner + ">"


FILLER = ["", " ", "x", "Review ", "\n", " and ", "😀", "é", "[", "]", "(", ")", "\t", "text "]


def rand_structured(rng: random.Random) -> tuple[str, str]:
    """A body of valid forms and plain filler: (braced body, angle body)."""
    braced, angle = [], []
    for _ in range(rng.randint(1, 5)):
        fill = rng.choice(FILLER)
        b, a = rand_form(rng)
        braced += [fill, b]
        angle += [fill, a if a is not None and rng.random() < 0.8 else b]
    return "".join(braced), "".join(angle)


def rand_arg_string(rng: random.Random) -> str:
    pool = (["a", "bc", "😀", "$1", "\\", "é", "x"] + ['"', '"', "'", "'"]
            + JS_SPACES + NOT_SPACES + [" ", " ", " ", "\r\n"])
    return "".join(rng.choice(pool) for _ in range(rng.randint(0, 14)))


# --- sections --------------------------------------------------------------------------------


def parse_args_requests(rng: random.Random, n: int) -> list[dict]:
    return [{"op": "parse_args", "args": rand_arg_string(rng)} for _ in range(n)]


#: Our ``$<...>`` spelling (pi has none): soup bodies that contain one are drawn again;
#: angle forms are covered by the ``angle`` section against their braced twins.
ANGLE_FORM = re.compile(r"\$<(?:[0-9]+|@|ARGUMENTS):-[^>]*>|\$<@:[0-9]+(?::[0-9]+)?>")


def expand_requests(rng: random.Random, n: int) -> list[dict]:
    reqs = []
    for i in range(n):
        body = rand_soup(rng) if i % 2 == 0 else rand_structured(rng)[0]
        while ANGLE_FORM.search(body):
            body = rand_soup(rng)
        if i % 7 == 0:
            reqs.append({"op": "expand", "content": body, "argsString": rand_arg_string(rng)})
        else:
            reqs.append({"op": "expand", "content": body, "args": rand_args(rng)})
    return reqs


INVOKE_TEMPLATES = [
    {"name": "review", "content": "Review $1 focusing on ${@:2}. All: $@"},
    {"name": "t", "content": "[$1][$2]"},
    {"name": "n", "content": "\nbody $1\n"},
    {"name": "skill:nope", "content": "TPL($1)"},
    {"name": "a.b", "content": "dot ${1:-none}"},
    {"name": "😀", "content": "emoji $ARGUMENTS"},
    {"name": "t", "content": "second t $1"},
    {"name": "x\u200by", "content": "zwsp $1"},
    {"name": "Review", "content": "capital $1"},
]


def expand_input_requests(rng: random.Random, n: int) -> list[dict]:
    names = ["review", "t", "n", "skill:nope", "a.b", "😀", "x\u200by", "Review", "REVIEW",
             "unknown", "", "t/x", "review.md"]
    reqs = []
    for _ in range(n):
        lead = rng.choice(["/"] * 8 + [" /", "//", "x/", ""])
        sep = rng.choice(["", " ", "  ", "\t", "\n", "\u00a0", "\u0085", "\u200b", "\u3000", "\r\n"])
        text = lead + rng.choice(names) + sep + rand_arg_string(rng)
        reqs.append({"op": "expand_input", "templates": INVOKE_TEMPLATES, "input": text})
    return reqs


def angle_cases(rng: random.Random, n: int) -> list[dict]:
    cases = []
    while len(cases) < n:
        braced, angle = rand_structured(rng)
        if braced != angle:
            cases.append({"body": angle, "twin": braced, "args": rand_args(rng)})
    return cases


# --- template files --------------------------------------------------------------------------

YAML_SNIPPETS = [
    "description: Review code", 'description: "Quoted: yes"', "description: 'single'",
    "description: >\n  folded\n  text", "description: |\n  literal\n  block", "description: 123",
    "description: 0", "description: true", "description: false", "description: null",
    "description:", "description: ''", "description: [a, b]", "description: {a: 1}",
    "description: 2024-01-01", "description: 1.50", "description: 0x1F", "description: yes",
    'argument-hint: "<file>"', "argument-hint: <file> [focus...]", "argument-hint: 0",
    "argument-hint: ''", "argument-hint: [a]", "name: x\ndescription: both",
    "description: d\nargument-hint: h", "# only a comment", "", "just a scalar", "- a\n- b",
    "description: [unclosed", "description: {bad", "key: value\n  bad indent: x",
    "description: a\ndescription: b", "\tdescription: tab", "description: 'unterminated",
    ": 1", "? complex\n: key", "description: &a x\nargument-hint: *a", "description: !!str 5",
    "description: café ☕", "description: \"\\u00e9\\t\"", "description: ~",
    "description: -", "description: .inf", "description: 1e3", "description: 0o17",
    "description: \"😀\"", "description: Review: code", "%YAML 1.2\n---\ndescription: x",
    "description: x\t", "description:\tx", "description: a\tb", "description: x\t# c", "\t\ndescription: x",
    "description: a\x85b\u2028c\u2029", "description: nul\x00inside", "description: bell\x07",
    "description: 'multi\nline'", "description: 'multi\n  line'", " description: 'x\n y'",
    "description: |+\n  keep\n", "description: |-\n  strip", "1: a\ntrue: b", "<<: {a: 1}",
    "description: x\ndescription: y", "description: 99999999999999999999", "description: -0",
    "description: [1, [2, 3], null]", "description: .NaN", "argument-hint: -.inf",
]


def frontmatter_requests(rng: random.Random, n: int) -> list[dict]:
    reqs = []
    for snippet in YAML_SNIPPETS:
        reqs.append({"op": "frontmatter", "content": f"---\n{snippet}\n---\n\n  Body $1  \n"})
    bodies = ["", "Body", "\n\n  x  \n", "line1\r\nline2\r\n", "a\rb", "---\nmore", "\ufeffbom"]
    heads = ["---\n", "---\r\n", "---", "--- \n", "----\n", "---a: 1\n", "\ufeff---\n", "x---\n"]
    closes = ["\n---\n", "\n---", "\r\n---\r\n", "\n---rest\n", "\n----\n", "\n", "\n--\n"]
    while len(reqs) < n:
        content = (rng.choice(heads) + rng.choice(YAML_SNIPPETS) + rng.choice(closes)
                   + rng.choice(bodies))
        reqs.append({"op": "frontmatter", "content": content})
    return reqs


FILE_CONTENTS = [
    "\n\n  First line here  \nsecond\n", "---\ndescription: Review code\nargument-hint: \"<file>\"\n---\n\n  Body $1  \n\n",
    "x" * 61 + "\nmore", "y" * 60, "a" * 59 + "😀tail", "---\r\ndescription: CRLF\r\n---\r\nline1\r\nline2\r\n",
    "---\ndescription: x\nbody\n", "---\ndescription: glued\n---rest of line\nnext\n", "---\n---\nbody only\n",
    "---\ndescription: [unclosed\n---\nbody\n", "", "   \n\t\n", "\u00a0\u3000 x", "\u0085 y\nz",
    "---\ndescription: 0\n---\nfallback line\n", "---\n- a\n---\nlist fm\n", "é" * 70,
    "😀" * 31, "---\nargument-hint: <a> <b>\n---\nUse $1 and $2\n", "\r\rcr only\r",
    "---\ndescription: 123\nargument-hint: 7\n---\nnumbers\n", "---\ndescription: [a, b]\n---\nlist\n",
    "---\ndescription: true\n---\nbool\n", "---\ndescription: 1.50\nargument-hint: null\n---\nx\n",
    "---\ndescription: 2024-01-01\n---\ndate\n", "---\ndescription: {a: 1}\n---\nmap\n",
    "---\ndescription: a\ndescription: b\n---\ndup keys\n", "\ufeff---\ndescription: bom\n---\nx\n",
    "---\r\ndescription: |\r\n  block\r\n---\r\n\r\n body\r\n",
]


def _write_fixture(root: Path, files: list[dict]) -> None:
    for f in files:
        path = root / f["name"]
        if "symlink" in f:
            os.symlink(f["symlink"], path)
        elif "dir" in f:
            path.mkdir()
        else:
            path.write_bytes(f["content"].encode("utf-8", "surrogatepass") if "content" in f
                             else bytes.fromhex(f["hex"]))


def rand_file_set(rng: random.Random) -> list[dict]:
    names = ["a.md", "b.md", "Z.md", "_x.md", "é.md", "😀.md", "a.md.md", "UPPER.MD", "notes.txt",
             "spaced name.md", ".hidden.md", "node_modules", "10.md", "9.md", "～.md", ".md"]
    files = []
    for name in rng.sample(names, rng.randint(1, 6)):
        files.append({"name": name, "content": rng.choice(FILE_CONTENTS)})
    extras = [
        {"name": "broken.md", "symlink": "does-not-exist.md"},
        {"name": "link.md", "symlink": "target.txt"},
        {"name": "target.txt", "content": "linked body $1\n"},
        {"name": "dir.md", "dir": True},
        {"name": "latin1.md", "hex": "63616684e9202431ff0a"},
        {"name": "mem.md", "symlink": "/proc/self/mem"},
    ]
    for extra in rng.sample(extras, rng.randint(0, 3)):
        if extra["name"] == "link.md" and not any(f["name"] == "target.txt" for f in files):
            files.append(extras[2])
        if not any(f["name"] == extra["name"] for f in files):
            files.append(extra)
    return files


def load_templates_cases(oracle: Oracle, rng: random.Random, n: int) -> list[dict]:
    cases = []
    for i in range(n):
        files = rand_file_set(rng)
        root = Path(FIXTURE_ROOT) / f"dir{i}"
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        _write_fixture(root, files)
        [reply] = oracle.ask([{"op": "load_templates", "dir": str(root)}])
        cases.append({"files": files, "result": _strip_paths(reply, root)})
    return cases


def _strip_paths(reply: dict, root: Path) -> dict:
    if not reply["ok"]:
        return {"ok": False}
    out = []
    for t in reply["result"]:
        item = {k: t[k] for k in ("name", "description", "argumentHint", "content") if k in t}
        item["file"] = os.path.relpath(t["filePath"], root)
        out.append(item)
    return {"ok": True, "result": out}


DISCOVERY_SETS = [
    {"project": {"dup.md": "project version", "z.md": "z", ".hidden.md": "h"},
     "user": {"dup.md": "user version", "b.md": "b"}},
    {"project": {"a.md": "pa", "ign.md": "ignored", ".gitignore": "ign.md\n"},
     "user": {"a.md": "ua", "keep.md": "k", "drop.md": "d", ".ignore": "drop.md\n"}},
    {"project": {"x.md": "x", "node_modules": None, "y.txt": "y"},
     "user": {"skip-me.md": "s", "other.md": "o", ".fdignore": "skip-*.md\n"}},
    {"project": {"n1.md": "1", "n2.md": "2", ".gitignore": "*.md\n!n2.md\n"}, "user": {}},
    {"project": {}, "user": {"only.md": "---\ndescription: user only\n---\nbody $@"}},
    {"project": {"m.md": "m", ".gitignore": "# comment\n\n/m.md\n"}, "user": {"m.md": "um"}},
    # symlinks: a file reached twice by its real path is taken once, whatever its name
    {"project": {"a.md": "pa $1", "b.md": {"symlink": "a.md"}, "t.txt": "target $@",
                 "x.md": {"symlink": "../../../agent/prompts/y.md"}},
     "user": {"u.md": {"symlink": "../../proj/.pi/prompts/a.md"}, "c.md": {"symlink": "../../proj/.pi/prompts/t.txt"},
              "d.md": "d", "y.md": "user y"}},
]


def write_discovery_entry(path: Path, content) -> None:
    """A DISCOVERY_SETS value: None a directory, {"symlink": target} a link, else file text."""
    if content is None:
        path.mkdir()
    elif isinstance(content, dict):
        os.symlink(content["symlink"], path)
    else:
        path.write_text(content, encoding="utf-8")


def discovery_cases(oracle: Oracle) -> list[dict]:
    cases = []
    for i, spec in enumerate(DISCOVERY_SETS):
        base = Path(FIXTURE_ROOT) / f"disc{i}"
        shutil.rmtree(base, ignore_errors=True)
        dirs = {"project": base / "proj" / ".pi" / "prompts", "user": base / "agent" / "prompts"}
        for kind, files in spec.items():
            dirs[kind].mkdir(parents=True)
            for name, content in files.items():
                write_discovery_entry(dirs[kind] / name, content)
        [reply] = oracle.ask([{"op": "agent_system_prompt", "cwd": str(base / "proj"),
                               "agentDir": str(base / "agent"), "packageDir": "/opt/pi"}])
        prompts = reply["result"]["prompts"]
        got = [{"name": p["name"], "content": p["content"],
                "file": os.path.relpath(p["filePath"], base)} for p in prompts]
        cases.append({"project": spec["project"], "user": spec["user"], "result": got})
    return cases


# --- assembling ------------------------------------------------------------------------------


def _pair(requests: list[dict], replies: list[dict], keys: tuple[str, ...]) -> list[dict]:
    cases = []
    for req, rep in zip(requests, replies):
        case = {k: req[k] for k in keys if k in req}
        case.update({"ok": True, "result": rep["result"]} if rep["ok"] else {"ok": False})
        cases.append(case)
    return cases


def generate(seed: int, counts: dict[str, int]) -> dict:
    rng = random.Random(seed)
    oracle = Oracle()
    try:
        pa = parse_args_requests(rng, counts["parse_args"])
        ex = expand_requests(rng, counts["expand"])
        ei = expand_input_requests(rng, counts["expand_input"])
        fm = frontmatter_requests(rng, counts["frontmatter"])
        angle = angle_cases(rng, counts["angle"])
        twins = [{"op": "expand", "content": c["twin"], "args": c["args"]} for c in angle]
        replies = oracle.results(pa + ex + ei + fm + twins)
        cut = [len(pa), len(ex), len(ei), len(fm), len(twins)]
        parts, start = [], 0
        for size in cut:
            parts.append(replies[start : start + size])
            start += size
        for case, rep in zip(angle, parts[4]):
            case["result"] = rep["result"]
        return {
            "meta": {"pi": "0.84.0", "seed": seed, "generator": "tests/data/gen_template_vectors.py"},
            "parse_args": _pair(pa, parts[0], ("args",)),
            "expand": _pair(ex, parts[1], ("content", "args", "argsString")),
            "expand_input": _pair(ei, parts[2], ("input",)),
            "expand_input_templates": INVOKE_TEMPLATES,
            "frontmatter": _pair(fm, parts[3], ("content",)),
            "angle": angle,
            "load_templates": load_templates_cases(oracle, rng, counts["load_templates"]),
            "discovery": discovery_cases(oracle),
        }
    finally:
        oracle.close()
        shutil.rmtree(FIXTURE_ROOT, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=20240084)
    ap.add_argument("--count", type=int, default=0, help="scale: cases per section (default: the committed sizes)")
    ap.add_argument("--check", action="store_true", help="compare fresh cases with our implementation")
    opts = ap.parse_args(argv)
    counts = {"parse_args": 700, "expand": 1400, "expand_input": 400, "frontmatter": 200,
              "angle": 300, "load_templates": 40}
    if opts.count:
        counts = {k: max(1, opts.count * v // 1400) for k, v in counts.items()}
    data = generate(opts.seed, counts)
    if opts.check:
        return check(data)
    OUT.write_text(dump(data), encoding="utf-8")
    print(f"wrote {OUT}: " + ", ".join(f"{k} {len(v)}" for k, v in data.items() if isinstance(v, list)))
    return 0


def dump(data: dict) -> str:
    """JSON with one case per line (readable diffs), ASCII only (lone surrogates escaped)."""
    lines = ["{"]
    items = list(data.items())
    for i, (key, value) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        if isinstance(value, list) and key != "expand_input_templates":
            body = ",\n".join(json.dumps(v, ensure_ascii=True) for v in value)
            lines.append(f"{json.dumps(key)}: [\n{body}\n]{comma}")
        else:
            lines.append(f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=True)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


# --- --check: fresh cases against our implementation -----------------------------------------


def _committed_keys() -> set[str]:
    if not OUT.exists():
        return set()
    data = json.loads(OUT.read_text(encoding="utf-8"))
    return {json.dumps([k, c], sort_keys=True) for k, v in data.items() if isinstance(v, list)
            for c in v}


def check(data: dict) -> int:
    """Run the vector tests on the fresh cases that are not in the committed file."""
    committed = _committed_keys()
    fresh = {k: ([c for c in v if json.dumps([k, c], sort_keys=True) not in committed]
                 if isinstance(v, list) and k != "expand_input_templates" else v)
             for k, v in data.items()}
    counts = {k: len(v) for k, v in fresh.items() if isinstance(v, list)}
    print("fresh cases:", ", ".join(f"{k} {n}" for k, n in counts.items()))
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as f:
        f.write(dump(fresh))
    env = dict(os.environ, TEMPLATE_VECTORS=f.name)
    test = HERE.parent / "templates" / "test_template_vectors.py"
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
                          cwd=HERE.parent.parent, env=env)
    os.unlink(f.name)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
