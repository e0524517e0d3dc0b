"""Every ```python block of README.md and docs/*.md runs as written, from the root of a clone.

Each block runs once, in a directory that stands for a fresh clone (every top-level entry of
the repository linked into it, so a file a block creates lands there and not in the
checkout). A block that talks to a model is preceded by the marker

    <!-- doc-test: loopback ["first reply", {"toolCalls": [...]}, ...] -->

(the replies, JSON, for pipeline.testing.loopback.LoopbackServer); the block then runs
with `LLM_BASE_URL` pointing at that server. A block written for another repository (a
team's own tests) names the files it expects there, copied from this one before it runs:

    <!-- doc-test: files {"profiles/team.yaml": "configs/examples/team.yaml"} -->
 The checks below add what a block's reader is
promised beyond "it runs" (its output, the session it wrote).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any, Callable

import pytest

from pipeline.session import MessageEntry, SessionFile
from pipeline.testing.loopback import LoopbackServer

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"(?:<!-- doc-test: (?P<marker>.*?) -->\n)?```python\n(?P<body>.*?)```", re.S)


class Block:
    def __init__(self, doc: Path, line: int, section: str, marker: str | None, body: str) -> None:
        self.doc, self.line, self.section, self.body = doc, line, section, body
        self.replies: list[Any] | None = None
        self.files: dict[str, str] = {}
        if marker is not None:
            kind, _, value = marker.partition(" ")
            assert kind in ("loopback", "files"), f"{doc.name}:{line}: unknown doc-test marker {marker!r}"
            if kind == "loopback":
                self.replies = json.loads(value)
            else:
                self.files = json.loads(value)

    @property
    def id(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def blocks() -> list[Block]:
    out = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            line = text.count("\n", 0, match.start("body"))
            sections = re.findall(r"^## (.+)$", text[: match.start()], re.M)
            out.append(Block(doc, line, sections[-1] if sections else "", match["marker"], match["body"]))
    return out


BLOCKS = blocks()


def test_the_blocks_are_found_and_every_marker_is_on_a_python_block():
    assert len(BLOCKS) >= 11
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        markers = len(re.findall(r"^<!-- doc-test:", text, re.M))
        assert markers == sum(1 for b in BLOCKS if b.doc == doc and (b.replies is not None or b.files)), doc.name


def clone(tmp_path: Path) -> Path:
    root = tmp_path / "clone"
    root.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in {".git", ".venv", "build"} and not entry.name.endswith(".egg-info"):
            if entry.is_dir():
                (root / entry.name).symlink_to(entry, target_is_directory=True)
            else:  # a copy: a tool of the runtime reads no file through a link leading outside its cwd
                shutil.copyfile(entry, root / entry.name)
    return root


def messages(path: Path) -> list[str]:
    session = SessionFile.open(path)
    assert session.problems == []
    return [e.message.role for e in session.path_to() if isinstance(e, MessageEntry)]


# --- what each block promises beyond running --------------------------------------------


def check_readme(ns: dict, out: str, root: Path, bodies: list) -> None:
    prompt = ns["prompt"]
    assert "\n- read: " in prompt and "\n- bash: " in prompt and "(none)" not in prompt
    assert out == prompt + "\n"
    assert ns["text"] == "/review a.py 'be strict'"  # no /review template in /repo
    assert ns["plan"].settings.keep_recent_tokens == 8000


def check_compaction(ns: dict, out: str, root: Path, bodies: list) -> None:
    from pipeline.compaction.plan import CompactionPlan

    assert isinstance(ns["plan"], CompactionPlan)
    assert SessionFile.open(root / "chat.jsonl").entries[-1].type == "compaction"


def check_runtime(ns: dict, out: str, root: Path, bodies: list) -> None:
    lines = out.splitlines()
    assert lines[-1] == "It reads its README."
    assert lines[:3] == ["run_start", "request", "reply"] and "tool_end" in lines
    assert bodies[1]["messages"][-1]["content"] == (ROOT / "README.md").read_text(encoding="utf-8")
    assert messages(root / "chat.jsonl") == ["user", "assistant", "toolResult", "assistant"]


def check_framework(ns: dict, out: str, root: Path, bodies: list) -> None:
    if "agent" not in ns:  # the summary client for create(client=...): it calls nothing when made
        assert callable(getattr(ns["client"], "complete", None)) and bodies == [] and out == ""
        return
    assert out.splitlines() == ["It compiles context profiles.", "With pytest."]
    assert len(bodies) == 2 and bodies[1]["messages"][-1]["content"] == "And how is it tested?"
    assert [m["role"] for m in bodies[1]["messages"]][1:] == ["user", "assistant", "user"]
    assert messages(root / "chat.jsonl") == ["user", "assistant", "user", "assistant"]


def check_sessions(ns: dict, out: str, root: Path, bodies: list) -> None:
    if "old" in ns:
        assert "cannot append to a version-1 session file" in out
        assert SessionFile.open(root / "v1-migrated.jsonl").entries[-1].type == "custom"
    else:
        assert messages(root / "chat.jsonl")[-1] == "user"


def check_testing(ns: dict, out: str, root: Path, bodies: list) -> None:
    marks = ns["test_prompt"].pytestmark
    assert [len(m.args[1]) for m in marks if m.name == "parametrize"] == [2]  # 1 profile x 2 scenarios


CHECKS: dict[str, Callable[[dict, str, Path, list], None]] = {
    "README.md": check_readme,
    "docs/compaction.md": check_compaction,
    "docs/runtime.md": check_runtime,
    "docs/integrations.md": check_framework,
    "docs/sessions.md": check_sessions,
    "docs/testing.md": check_testing,
}


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.id)
def test_the_block_runs_as_written(block: Block, tmp_path, monkeypatch, capsys):
    root = clone(tmp_path)
    monkeypatch.chdir(root)
    for name, source in block.files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / source, root / name)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))  # no templates of the machine's own
    before = {p: p.read_bytes() for p in (ROOT / "tests" / "data" / "sessions").rglob("*.jsonl")}
    namespace: dict = {"__name__": "__doc_example__"}
    code = compile("\n" * block.line + block.body, str(block.doc), "exec")
    bodies: list = []
    if block.replies is None:
        exec(code, namespace)
    else:
        with LoopbackServer(block.replies) as server:
            monkeypatch.setenv("LLM_BASE_URL", server.openai_base_url)
            monkeypatch.setenv("OPENAI_API_KEY", "local")  # "any value will do" for a server that checks none
            exec(code, namespace)
            bodies = server.bodies
        assert len(bodies) == len(block.replies)
    out = capsys.readouterr().out
    check = CHECKS.get(str(block.doc.relative_to(ROOT)))
    if check is not None:
        check(namespace, out, root, bodies)
    assert {p: p.read_bytes() for p in before} == before  # the shipped samples are left as they were
