"""``pipeline context`` under a profile that records the system prompt (``builtin:pi-1``)
against pi 1.6.0's ``build_context`` (``tests/data/pi16/context.json``,
``gen_context_vectors.py``): pi 1.x's projection, the recorded system messages and a
compaction's ``systemMessage`` snapshot included as ``system`` messages, context edits
applied; the JSON says so (``"projection": "pi-1"``). Under ``builtin:default`` the command
is unchanged (no system message, no ``projection`` key, 0.84's context).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline import compile_profile
from pipeline.cli import main

ROOT = Path(__file__).resolve().parents[2]
DATA = json.loads((ROOT / "tests" / "data" / "pi16" / "context.json").read_text(encoding="utf-8"))
EDITS = json.loads((ROOT / "tests" / "data" / "pi16" / "edits.json").read_text(encoding="utf-8"))
PROJECTION = compile_profile("builtin:pi-1").profile.summary.projection


def _file(case: dict, tmp: Path) -> Path:
    if not case["file"].startswith("edits:"):
        return ROOT / case["file"]
    _, session, index = case["file"].split(":")
    written = EDITS["cases"][int(index)]["written"]
    lines = EDITS["base_jsonl"][session].splitlines()
    edit = {"type": "context_edit", "id": "ffffffff", "parentId": json.loads(lines[-1])["id"],
            "timestamp": "2026-06-01T11:00:00.000Z", **written}
    path = tmp / "edited.jsonl"
    path.write_text("\n".join([*lines, json.dumps(edit)]) + "\n", encoding="utf-8")
    return path


def _context(capsys, path: Path, *argv: str) -> dict:
    assert main(["context", str(path), "--format", "json", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def _masked(messages: list) -> list:
    text = json.dumps(messages, ensure_ascii=False)
    for words, mask in ((PROJECTION.compaction.open.render(), "[pi: compaction summary prefix]<summary>\n"),
                        (PROJECTION.branch.open.render(), "[pi: branch summary prefix]<summary>\n")):
        text = text.replace(json.dumps(words, ensure_ascii=False)[1:-1], json.dumps(mask)[1:-1])
    return json.loads(text)


def test_the_cases() -> None:
    cases = DATA["cases"]
    system = [c for c in cases if any(m["role"] == "system" for m in c["messages"])]
    assert len(cases) >= 50 and len(system) >= 10 and sum(c["file"].startswith("edits:") for c in cases) >= 20


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda c: f"{c['file']}@{c['leafId']}")
def test_context_under_pi1_is_pi16s(capsys, tmp_path: Path, case: dict) -> None:
    leaf = ("--leaf", case["leafId"]) if case["leafId"] else ()
    ours = _context(capsys, _file(case, tmp_path), "--profile", "builtin:pi-1", *leaf)
    assert ours["projection"] == "pi-1"
    mine, pi = _masked(ours["messages"]), case["messages"]
    first = next((i for i, (a, b) in enumerate(zip(mine, pi)) if a != b), min(len(mine), len(pi)))
    assert mine == pi, f"first differing message {first} ({len(mine)} ours, {len(pi)} pi's)"


@pytest.mark.parametrize("case", [c for c in DATA["cases"] if any(m["role"] == "system" for m in c["messages"])][:6],
                         ids=lambda c: f"{c['file']}@{c['leafId']}")
def test_the_default_profile_is_unchanged(capsys, tmp_path: Path, case: dict) -> None:
    leaf = ("--leaf", case["leafId"]) if case["leafId"] else ()
    path = _file(case, tmp_path)
    ours = _context(capsys, path, *leaf)
    assert "projection" not in ours and all(m["role"] != "system" for m in ours["messages"])
    from pipeline.session import ContextTexts, SessionFile, build_context

    session = SessionFile.open(path)
    expected = build_context(session, ContextTexts.from_profile(compile_profile("default").profile),
                             case["leafId"] or session.leaf_id)
    assert ours["messages"] == [m.raw for m in expected.messages]


def test_text_output_shows_the_system_messages(capsys) -> None:
    path = ROOT / "tests" / "data" / "pi16" / "sessions" / "pi-compacted.jsonl"
    assert main(["context", str(path), "--profile", "builtin:pi-1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("── system ──\n[section preamble]\n") and out.count("── system ──") == 2
    assert main(["context", str(path)]) == 0
    assert "── system ──" not in capsys.readouterr().out
