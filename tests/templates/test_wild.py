"""Real-world check: every file of ../shared/wild-templates through its own dialect.

* As pi reads it (every Markdown file, as if it were a pi template): load and six
  expansions equal pi 0.84.0's answers, recorded as digests by
  ``tests/data/wild/gen_pi_digests.py`` with the oracle (the files stay in ../shared).
* Through the dialect it was written for (``SOURCES.json``): the file gives a template,
  or a located warning saying why not; and each thing that tool does and we do not run
  (shell commands, file includes, steering keys, prices a ``$N`` would eat) is a finding
  on the line where it is written.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from pipeline.templates.discovery import load_sources, load_templates
from pipeline.templates.invoke import expand_input
from pipeline.templates.discovery import TemplateSource

REPO = Path(__file__).resolve().parents[2]
WILD = REPO.parent / "shared" / "wild-templates"
DIGESTS = REPO / "tests" / "data" / "wild" / "pi_digests.json"

pytestmark = pytest.mark.skipif(not (WILD / "SOURCES.json").is_file(),
                                reason=f"{WILD} is absent (the shared wild-templates corpus)")

DIALECT = {"pi": "pi", "claude": "claude-code", "opencode": "opencode", "codex": "codex", "gemini": "gemini"}
#: where each tool's command directory ends inside a repository path
ROOT_RE = re.compile(r"^(.*?(?:\.claude/commands|\.opencode/commands?|opencode/commands?|\.gemini/commands|"
                     r"\.codex/prompts|prompts))/")


def sources() -> list[dict]:
    if not (WILD / "SOURCES.json").is_file():
        return []
    return json.loads((WILD / "SOURCES.json").read_text(encoding="utf-8"))["files"]


def gen():  # the generator's own helpers, so both sides stage the files the same way
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_pi_digests", DIGESTS.parent / "gen_pi_digests.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_corpus_is_all_there():
    files = sources()
    assert len(files) >= 300 and all((WILD / s["file"]).is_file() for s in files)
    assert {s["dialect"] for s in files} == set(DIALECT)


def test_every_markdown_file_loads_and_expands_as_pi_does(tmp_path):
    g = gen()
    recorded = json.loads(DIGESTS.read_text(encoding="utf-8"))
    assert recorded["args"] == g.ARG_STRINGS
    files = g.markdown_files()
    assert set(recorded["files"]) == {s["file"] for s in files}
    differ = []
    for i, entry in enumerate(files):
        directory, name = g.stage(tmp_path, i, entry)
        loaded = load_templates([directory], include_defaults=False)
        view = [{"name": t.name, "description": t.description,
                 "argumentHint": list(t.argument_hint) if isinstance(t.argument_hint, tuple) else t.argument_hint,
                 "content": t.body} for t in loaded]
        ours = {"load": g.digest(view), "expand": [g.digest(expand_input(x, loaded)) for x in g.inputs(name)]}
        if ours != recorded["files"][entry["file"]]:
            differ.append(entry["file"])
    assert differ == []


def staged(tmp_path: Path, entry: dict) -> tuple[Path, Path]:
    """The file at its repository path under tmp_path; returns (its source root, the file)."""
    target = tmp_path / entry["path"]
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(WILD / entry["file"], target)
    m = ROOT_RE.match(entry["path"])
    root = tmp_path / m.group(1) if m and entry["dialect"] != "pi" else target.parent
    return root, target


SHELL_MD = re.compile(r"!`[^`\n]+`")
FILE_MD = re.compile(r"(?:^|[\s(])@(?:\.{0,2}/|[\w-]+/|[\w-]+\.(?:md|ts|js|py|json|toml|yaml|yml|txt|go|rs|tsx|sh))")
SHELL_GEMINI = re.compile(r"!\{")
FILE_GEMINI = re.compile(r"@\{[^}\n]+\}")
PRICE = re.compile(r"\$[0-9]+[.,][0-9]")


def expected_findings(entry: dict, text: str) -> set[tuple[str, int]]:
    """(code, line) of what the tool would do that is not run here, found independently."""
    dialect = entry["dialect"]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    out: set[tuple[str, int]] = set()
    if dialect == "gemini":
        patterns = {"template.dialect-shell": SHELL_GEMINI, "template.dialect-file": FILE_GEMINI}
        body_start = 0
        keys = [m for m in re.finditer(r"(?m)^([A-Za-z_][\w-]*)[ \t]*=", text)
                if m.group(1) not in ("prompt", "description")]
    else:
        patterns = {"template.dollar-amount": PRICE}
        if dialect in ("claude", "opencode"):
            patterns.update({"template.dialect-shell": SHELL_MD, "template.dialect-file": FILE_MD})
        end = text.find("\n---", 3) if text.startswith("---") else -1
        body_start = end + 4 if end != -1 else 0
        head = text[:body_start] if end != -1 else ""
        keys = [m for m in re.finditer(r"(?m)^([A-Za-z_][\w-]*)[ \t]*:", head)
                if m.group(1) not in ("description", "argument-hint")] if dialect != "pi" else []
    for code, rx in patterns.items():
        for m in rx.finditer(text, body_start):
            start = m.start() + (1 if code == "template.dialect-file" and text[m.start()] != "@" else 0)
            if code == "template.dollar-amount" and dialect == "codex" and not re.match(r"\$[1-9][.,]", text[start:]):
                continue
            out.add((code, text.count("\n", 0, start) + 1))
    for m in keys:
        out.add(("template.dialect-key", text.count("\n", 0, m.start()) + 1))
    return out


@pytest.mark.parametrize("entry", sources() or [pytest.param(None, id="corpus-absent")],
                         ids=lambda s: s["file"][6:60] if s else "corpus-absent")
def test_each_file_through_its_dialect(tmp_path, entry):
    root, target = staged(tmp_path, entry)
    loaded = load_sources([TemplateSource(root, "path", dialect=DIALECT[entry["dialect"]])])
    mine = [t for t in loaded if t.path == target]
    located = [p for p in loaded.problems if p.location and Path(p.location.file) == target]
    assert mine or located, "neither a template nor a reason"
    if not mine:
        assert all(p.severity == "warning" for p in located)
        return
    t = mine[0]
    found = {(p.code, p.location.line) for p in t.problems() if p.location}
    missing = expected_findings(entry, target.read_bytes().decode("utf-8", "replace")) - found
    assert missing == set(), f"not reported: {sorted(missing)}"
    if entry["dialect"] != "pi":
        text = target.read_text(encoding="utf-8", errors="replace")
        hint = re.search(r"(?m)^argument-hint:[ \t]*(\[.*?)[ \t]*$", text)
        if hint and text.startswith("---"):
            assert t.hint_text == hint.group(1)
        assert isinstance(t.invoke("alpha beta"), str)
