"""The agent loop runs the profile's compaction strategy (masking, hybrid) against the loopback server."""

from __future__ import annotations

import json

from pipeline import compile_profile
from pipeline.runtime.conversation import Conversation
from pipeline.runtime.host import ModelInfo
from pipeline.runtime.loop import Agent, model_client
from pipeline.runtime.tools import builtin_tools
from pipeline.runtime import events as ev
from pipeline.session import SessionFile
from pipeline.session.masks import MASK_TYPE
from pipeline.testing.loopback import LoopbackServer
from pipeline.model.run_plan import RunPlan

MODEL = ModelInfo(id="m", provider="local", context_window=4000, max_tokens=1000)


def _profile(**more):
    overrides = {"compaction.keep_recent_tokens": 50, "compaction.reserve_tokens": 1000, **more}
    return compile_profile("default", overrides=overrides).profile


def _run(tmp_path, profile, script, model=MODEL):
    (tmp_path / "a.txt").write_text("line of the file\n" * 500, encoding="utf-8")  # ~2100 tokens
    session = SessionFile.create(tmp_path / "s.jsonl", cwd=str(tmp_path))
    events: list = []
    conv = Conversation(RunPlan.of(profile), session, model=model, tools=builtin_tools(["read"], tmp_path, RunPlan.of(profile)),
                        cwd=str(tmp_path))
    with LoopbackServer(script) as server:
        client = model_client(RunPlan.of(profile), model, base_url=server.openai_base_url, env={"OPENAI_API_KEY": "k"})
        agent = Agent(conv, client, listener=events.append)
        agent.run("read a.txt please")
        agent.run("and now?")
        bodies = server.bodies
    lines = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text(encoding="utf-8").splitlines()]
    return events, bodies, lines


SCRIPT = [{"toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}]},
          {"text": "read it", "usage": {"input": 3500}}, "fine"]


def test_threshold_masks_old_tool_results_and_the_next_request_shows_the_placeholder(tmp_path):
    events, bodies, lines = _run(tmp_path, _profile(**{"compaction.strategy": "mask_tool_results"}), SCRIPT)
    masks = [line for line in lines if line.get("customType") == MASK_TYPE]
    assert len(masks) == 1 and not any(line["type"] == "compaction" for line in lines)
    ends = [e for e in events if isinstance(e, ev.CompactionEnd)]
    assert len(ends) == 1 and ends[0].entry_id == masks[0]["id"] and ends[0].error is None
    assert ends[0].tokens_after < ends[0].tokens_before
    last = bodies[-1]["messages"]
    tool = [m for m in last if m["role"] == "tool"]
    assert len(tool) == 1 and "left out to save room" in json.dumps(tool[0]) and "line of the file" not in json.dumps(tool[0])
    assert len(bodies) == 3  # no summary call: masking needs no model


def test_hybrid_summarizes_when_masking_is_not_enough(tmp_path):
    profile = _profile(**{"compaction.strategy": "hybrid", "compaction.trigger": {"tokens": 100}})
    events, bodies, lines = _run(tmp_path, profile, SCRIPT)
    kinds = [line["type"] for line in lines]
    assert "custom" in kinds and "compaction" in kinds and kinds.index("custom") < kinds.index("compaction")
    assert any(isinstance(e, ev.CompactionEnd) and e.entry_id == lines[kinds.index("compaction")]["id"]
               for e in events)


def test_a_models_override_picks_its_strategy_in_the_loop(tmp_path):
    profile = compile_profile("default", overrides={
        "compaction.keep_recent_tokens": 50, "compaction.reserve_tokens": 1000,
        "compaction.model_overrides": {"local/m": {"strategy": "mask_tool_results"}}}).profile
    _, _, lines = _run(tmp_path, profile, SCRIPT)
    assert any(line.get("customType") == MASK_TYPE for line in lines)
    elsewhere = tmp_path / "other-model"
    elsewhere.mkdir()
    _, _, other = _run(elsewhere, profile, SCRIPT, ModelInfo(id="n", provider="local", context_window=4000,
                                                             max_tokens=1000))
    assert not any(line.get("customType") == MASK_TYPE for line in other)
