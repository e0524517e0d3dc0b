"""The example compaction policy end to end against a real HTTP server on 127.0.0.1.

configs/examples/compaction-policy.yaml declares a trigger, the hybrid strategy, pins, a
per-model override and summary validity; here it validates, masks, and summarizes through
the OpenAI client talking to the loopback server, whose first answer is cut off.
"""

from __future__ import annotations

import json

from pipeline import compile_profile
from pipeline.compaction.driver import compact
from pipeline.session import SessionFile
from pipeline.session.masks import MASK_TYPE
from pipeline.testing.loopback import LoopbackServer

from .conftest import ROOT
from .test_policy import GOOD, LONG, _with_cwd

POLICY = ROOT / "configs" / "examples" / "compaction-policy.yaml"


def _pipeline(server: LoopbackServer):
    return compile_profile(POLICY, {"summarizer.provider": "openai", "summarizer.model": "m",
                                    "summarizer.base_url": server.openai_base_url,
                                    "summarizer.api_key_env": "LOOPBACK_KEY"})


def test_the_policy_validates_without_warnings():
    assert compile_profile(POLICY).warnings == ()


def test_hybrid_with_pins_and_a_cut_off_first_answer(copy_session, tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPBACK_KEY", "k-loopback")
    (tmp_path / "CONVENTIONS.md").write_text("tabs, not spaces\n", encoding="utf-8")
    path = copy_session(LONG)
    session = _with_cwd(SessionFile.open(path), tmp_path)
    with LoopbackServer([{"text": "## Goal\n- half a summ", "stopReason": "length"}, GOOD, "prefix"]) as server:
        pipeline = _pipeline(server)
        done = compact(session, pipeline.profile, pipeline.summary_client(), window=30000)
        bodies = server.bodies
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[-2:]]
    assert [line["type"] for line in lines] == ["custom", "compaction"]
    assert lines[0]["customType"] == MASK_TYPE and done.mask_entry.id == lines[0]["id"]
    summary = lines[1]["summary"]
    assert summary.startswith("<pinned>\nI just cloned this repo.") and "tabs, not spaces" in summary
    assert "## Goal\n- x" in summary and "half a summ" not in summary
    assert [o.verdict for o in done.result.outcomes] == ["length", "valid", "valid"]
    users = [b["messages"][1]["content"] for b in bodies]
    assert users[1].endswith("Your previous answer could not be used (length). Answer with the summary only, "
                             "complete and within the budget.")
    assert all("do not repeat them:\n<pinned>" in u for u in users)
    assert {b.get("reasoning_effort") for b in bodies[:2]} == {"low"}


def test_the_small_models_override_masks_only(copy_session):
    path = copy_session(LONG)
    profile = compile_profile(POLICY).profile
    settings = profile.compaction.for_model("ollama", "qwen3-coder:30b")
    assert (settings.strategy, settings.keep_recent_tokens, settings.threshold(32768)) == (
        "mask_tool_results", 6000, 24768)
    assert profile.compaction.for_model("ollama", "other").strategy == "hybrid"
    done = compact(SessionFile.open(path), profile, None, provider="ollama", model="qwen3-coder:30b")
    assert done.entry is None and len(done.mask.placeholders) > 28  # a smaller kept window masks more
