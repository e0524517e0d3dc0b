"""Issue 22, item 6: a compaction's ``tokens_after`` under ``builtin:pi-1`` is pi 1.6.0's
``estimatedTokensAfter`` (``tests/data/pi16/tokens_after.json``, from pi's own
``AgentSession.compact`` through the oracle: ``gen_tokens_after_vectors.py``).

pi 1.6.0 estimates the context after a compaction as the sum of its ``estimateTokens`` over
the messages of the session's projection: no usage anchors it; the compaction's snapshot of
the recorded system prompt and every recorded system message after it count (content,
section texts, the JSON of the added tools), context edits applied. pi 0.84.0 counts a
system message as 0, so the rule shows on every vector whose branch records the prompt.

* on pi's own result: the compaction entry pi wrote (its snapshot, cut and the length of
  its summary) on the same file gives, through our projection, pi's number; our snapshot
  of the branch is pi's;
* end to end: :class:`~pipeline.runtime.conversation.Conversation` compacting the same file under
  ``builtin:pi-1`` cuts where pi cut, and reports pi's number, less the summary's share
  (our summary holds our words, pi's its own, so the summaries' lengths differ).
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

from pipeline import compile_profile
from pipeline.compaction.tokens import estimate_tokens, tokens_after_compaction
from pipeline.runtime import events as ev
from pipeline.runtime.conversation import Conversation
from pipeline.runtime.host import ModelInfo
from pipeline.session import CompactionEntry, SessionFile
from pipeline.session.projection import project_path
from pipeline.session.snapshot import system_snapshot
from pipeline.model.run_plan import RunPlan

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(HERE)]

from pi1_derive import derive  # noqa: E402


def _compaction_helpers():
    """tests/compaction/conftest.py by its path: the name ``conftest`` is every folder's."""
    spec = importlib.util.spec_from_file_location("_compaction_conftest", ROOT / "tests" / "compaction" / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


ScriptedClient = _compaction_helpers().ScriptedClient

DOC = json.loads((ROOT / "tests" / "data" / "pi16" / "tokens_after.json").read_text(encoding="utf-8"))
VECTORS = DOC["vectors"]
NOW_ISO = "2026-11-25T12:00:00.000Z"
PI1 = compile_profile("builtin:pi-1").profile


def _session(vector: dict, tmp_path: Path) -> SessionFile:
    text = (ROOT / vector["file"]).read_text(encoding="utf-8")
    path = tmp_path / "session.jsonl"
    path.write_text(text if vector["variant"] is None else derive(text, vector["variant"]), encoding="utf-8")
    session = SessionFile.open(path)
    if vector["leafId"] is not None:
        session.branch(vector["leafId"])
    return session


def _settings(vector: dict):
    return PI1.compaction.model_copy(update={"keep_recent_tokens": vector["settings"]["keepRecentTokens"]})


def _id(vector: dict) -> str:
    return f"{Path(vector['file']).stem}-{vector['variant'] or 'as-is'}-{vector['leafId'] or 'leaf'}-{vector['settings']['keepRecentTokens']}"


def test_the_vectors_cover_the_rule():
    """Enough vectors, most with a recorded prompt on the branch, where 0.84.0's count differs."""
    assert len(VECTORS) >= 60 and DOC["pi_version"] == "1.6.0"
    with_prompt = [v for v in VECTORS if v["pi"]["systemMessage"] is not None]
    assert len(with_prompt) >= 30
    assert {v["variant"] for v in with_prompt} >= {"systems", "systems-edits"}


@pytest.mark.parametrize("vector", VECTORS, ids=_id)
def test_pi_compaction_entry_gives_pi_estimate(vector, tmp_path):
    session = _session(vector, tmp_path)
    path = session.path_to()
    pi = vector["pi"]
    assert system_snapshot(path, NOW_ISO) == pi["systemMessage"], "the compaction's snapshot of the recorded prompt"
    entry = CompactionEntry.create(
        id="c0000001", parent_id=path[-1].id, timestamp=NOW_ISO, summary="s" * pi["summaryChars"],
        first_kept_entry_id=pi["firstKeptEntryId"], tokens_before=pi["tokensBefore"], system_message=pi["systemMessage"],
    )
    messages = [m for item in project_path([*path, entry]) for m in item.messages]
    settings = _settings(vector)
    assert tokens_after_compaction(messages, settings) == pi["estimatedTokensAfter"]
    if pi["systemMessage"] is not None:  # the part 0.84.0's count leaves out
        assert sum(estimate_tokens(m, settings) for m in messages) < pi["estimatedTokensAfter"]


@pytest.mark.parametrize("vector", VECTORS, ids=_id)
def test_conversation_reports_pi_estimate(vector, tmp_path):
    session = _session(vector, tmp_path)
    profile = PI1.model_copy(update={"compaction": _settings(vector)})
    events: list = []
    conv = Conversation(RunPlan.of(profile), session, model=ModelInfo(id="m", provider="p", context_window=200_000),
                        cwd=str(tmp_path), summarizer=ScriptedClient(list(vector["responses"])),
                        listener=events.append, clock=lambda: 1_795_000_000_000.0)
    conv.compact()
    [end] = [e for e in events if isinstance(e, ev.CompactionEnd)]
    pi = vector["pi"]
    assert end.first_kept_entry_id == pi["firstKeptEntryId"], "the cut"
    ours = session.get(end.entry_id)
    share = lambda chars: math.ceil(chars / profile.compaction.chars_per_token)  # noqa: E731
    summary = len(ours.summary.encode("utf-16-le")) // 2
    assert end.tokens_after - share(summary) == pi["estimatedTokensAfter"] - share(pi["summaryChars"])
