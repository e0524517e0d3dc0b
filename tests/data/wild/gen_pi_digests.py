"""Record pi 0.84.0's answers for the real template files in ../shared/wild-templates.

    python tests/data/wild/gen_pi_digests.py ORACLE [--check]

For every Markdown file listed in ../shared/wild-templates/SOURCES.json, the file is
copied as bytes into a fresh directory as ``<name>.md`` and given to the pi oracle:
``load_templates`` on that directory, then ``expand_input`` of ``/name ARGS`` for the
argument strings in ``ARG_STRINGS`` with the templates pi loaded. Only SHA-256 digests
of pi's answers are written (``pi_digests.json``), never the files' text: the files
are third-party and stay in ../shared. tests/templates/test_wild.py recomputes the same
views with pipeline.templates and compares digests, without Node. ``--check`` compares
instead of writing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
WILD = HERE.parents[2].parent / "shared" / "wild-templates"
OUT = HERE / "pi_digests.json"

ARG_STRINGS = ["", "src/app.py", "alpha beta gamma", "\"error handling\" 'two words' plain \"it's ok\"",
               "'$1' \"${2:-x}\" $ARGUMENTS ${@:2} tail", "a1 a2 a3 a4 a5 a6 a7 a8 a9 a10 a11 a12"]


def digest(value) -> str:
    import hashlib

    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def markdown_files() -> list[dict]:
    sources = json.loads((WILD / "SOURCES.json").read_text(encoding="utf-8"))["files"]
    return [s for s in sources if s["path"].endswith(".md")]


def stage(tmp: Path, index: int, entry: dict) -> tuple[Path, str]:
    """The file as ``<name>.md`` alone in a fresh directory; returns (directory, name)."""
    name = Path(entry["path"]).name[:-3]
    directory = tmp / f"{index:04d}"
    directory.mkdir()
    (directory / f"{name}.md").write_bytes((WILD / entry["file"]).read_bytes())
    return directory, name


def inputs(name: str) -> list[str]:
    return [f"/{name}" + (f" {a}" if a else "") for a in ARG_STRINGS]


def load_view(templates: list[dict]) -> list[dict]:
    return [{"name": t.get("name"), "description": t.get("description"), "argumentHint": t.get("argumentHint"),
             "content": t.get("content")} for t in templates]


def oracle(path: str, requests: list) -> list:
    proc = subprocess.run([path], input=json.dumps(requests), capture_output=True, text=True)
    return json.loads(proc.stdout)


def generate(oracle_path: str) -> dict:
    files = markdown_files()
    tmp = Path(tempfile.mkdtemp(prefix="wild-digests-"))
    try:
        staged = [stage(tmp, i, s) for i, s in enumerate(files)]
        loaded = oracle(oracle_path, [{"op": "load_templates", "dir": str(d)} for d, _ in staged])
        requests = []
        for (d, name), answer in zip(staged, loaded):
            templates = [{"name": t["name"], "description": t.get("description", ""), "content": t["content"]}
                         for t in answer["result"]]
            requests += [{"op": "expand_input", "templates": templates, "input": i} for i in inputs(name)]
        expanded = oracle(oracle_path, requests)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out, n = {}, len(ARG_STRINGS)
    for k, (entry, answer) in enumerate(zip(files, loaded)):
        rows = expanded[k * n:(k + 1) * n]
        out[entry["file"]] = {"load": digest(load_view(answer["result"])),
                              "expand": [digest(r["result"]) for r in rows]}
    return {"pi": "0.84.0", "args": ARG_STRINGS, "files": out}


def main() -> int:
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    data = generate(args[0])
    if "--check" in args:
        same = json.loads(OUT.read_text(encoding="utf-8")) == data
        print("same" if same else "different")
        return 0 if same else 1
    OUT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {len(data['files'])} digests to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
