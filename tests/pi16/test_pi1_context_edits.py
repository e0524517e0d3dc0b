"""Context edits with a replacement against pi 1.6.0 (``tests/data/pi16/edits.json``,
``gen_edit_vectors.py``): every kind of target entry with every kind of replacement.

* written as pi writes them: our ``SessionFile.append_context_edit`` on pi's own file of the
  steps before the edit refuses exactly the edits ``appendContextEdit`` refuses (a located
  ``session.bad-context-edit`` / ``session.no-entry`` problem, no traceback) and writes the
  same ``targetId`` and ``replacement`` (a string on an assistant or tool-result target
  becomes one text block);
* read as pi reads them: our projection of pi's edited file and of ours gives
  ``build_context``'s agent messages (roles and contents);
* the runtime: ``Conversation.edit_context`` under ``builtin:pi-1`` writes the entry and the
  next request's context is the edited projection.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.errors import SessionError
from pipeline.session import SessionFile
from pipeline.session.snapshot import projected_messages
from pipeline.model.run_plan import RunPlan

ROOT = Path(__file__).resolve().parents[2]
DATA = json.loads((ROOT / "tests" / "data" / "pi16" / "edits.json").read_text(encoding="utf-8"))
CASES = DATA["cases"]


def _open(tmp: Path, name: str) -> SessionFile:
    path = tmp / f"{name}.jsonl"
    path.write_text(DATA["base_jsonl"][name], encoding="utf-8")
    return SessionFile.open(path)


def _view(messages) -> list[dict]:
    return [{k: m.raw[k] for k in ("role", "content", "summary", "command") if k in m.raw} for m in messages]


def test_the_cases_cover_targets_and_replacements() -> None:
    refused = [c for c in CASES if c["written"] is None]
    normalized = [c for c in CASES if c["written"] and c["written"]["replacement"] != c["replacement"]]
    assert len(CASES) >= 300 and 100 <= len(refused) < len(CASES) - 100 and len(normalized) >= 20
    assert {json.dumps(c["replacement"]) for c in refused} >= {"{}", '{"content": 5}', '"a bare string"'}


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['session']}/{c['target']}/{json.dumps(c['replacement'])[:30]}")
def test_written_and_read_as_pi(case: dict, tmp_path: Path) -> None:
    session = _open(tmp_path, case["session"])
    target = DATA["base_ids"][case["session"]][case["target"]]
    if target is None:  # a step that appends nothing (a branch move) has no id
        assert case["written"] is None
        return
    if case["written"] is None:
        with pytest.raises(SessionError) as refused:
            session.append_context_edit(target, case["replacement"])
        [problem] = refused.value.problems
        assert problem.code in ("session.bad-context-edit", "session.no-entry") and problem.location is not None
        assert SessionFile.open(session.path).entries[-1].raw["type"] != "context_edit"
        return
    entry = session.append_context_edit(target, case["replacement"])
    assert {"targetId": entry.raw["targetId"], "replacement": entry.raw["replacement"]} == case["written"]
    assert _view(projected_messages(SessionFile.open(session.path).path_to())) == case["context"]


def test_pis_file_read_as_pi_reads_it(tmp_path: Path) -> None:
    """pi's edited file itself (its last line is the edit; rebuilt from ours: same fields)."""
    checked = 0
    for case in CASES:
        if not case["written"]:
            continue
        lines = DATA["base_jsonl"][case["session"]].splitlines()
        parent = json.loads(lines[-1])["id"]
        edit = {"type": "context_edit", "id": "ffffffff", "parentId": parent, "timestamp": "2026-06-01T11:00:00.000Z",
                **case["written"]}
        path = tmp_path / f"pi{checked}.jsonl"
        path.write_text("\n".join([*lines, json.dumps(edit)]) + "\n", encoding="utf-8")
        assert _view(projected_messages(SessionFile.open(path).path_to())) == case["context"], case
        checked += 1
    assert checked >= 100


def test_the_runtime_edits_the_context(tmp_path: Path) -> None:
    from pipeline import compile_profile
    from pipeline.runtime.conversation import Conversation
    from pipeline.runtime.host import ModelInfo

    case = next(c for c in CASES if c["session"] == "base" and c["target"] == 5 and c["replacement"] == {"content": "shorter"})
    session = _open(tmp_path, "base")
    conv = Conversation(RunPlan.of(compile_profile("builtin:pi-1").profile), session, cwd=str(tmp_path),
                        model=ModelInfo(id="m", provider="anthropic", context_window=200000))
    before = json.dumps(conv.next_request().__dict__, default=str)
    entry = conv.edit_context(DATA["base_ids"]["base"][5], {"content": "shorter"})
    assert entry.raw["replacement"] == case["written"]["replacement"]
    after = json.dumps(conv.next_request().__dict__, default=str)
    assert "answer one" in before and "answer one" not in after and "shorter" in after
