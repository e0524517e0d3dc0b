"""The committed agent-loop vectors (``tests/data/agent_loop``): well-formed, consistent, covering every category.

The vectors record pi 0.84.0's own agent loop (see the README there); the differential test
of our runtime replays them. Here: each file parses, its entries form one parent chain that
continues the session (or the previous step), every captured request is a real message list
that our converters accept, the events agree with the entries, and the manifest's categories
are all covered (or listed as not expressible, with a reason).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.llm.convert import ConvertTexts, TargetModel, to_anthropic_messages, to_openai_chat
from pipeline.session import MessageEntry, SessionFile, parse_entry, parse_message

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "agent_loop"
SESSIONS = ROOT / "tests" / "data" / "sessions" / "real"
MANIFEST = json.loads((DATA / "manifest.json").read_text(encoding="utf-8"))
FILES = sorted(p for p in DATA.glob("*.json") if p.name != "manifest.json")
VECTORS = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in FILES}
EVENT_TYPES = {"compaction_start", "compaction_end", "auto_retry_start", "auto_retry_end",
               "summarization_retry_scheduled", "summarization_retry_attempt_start", "summarization_retry_finished"}
TEXTS = ConvertTexts(orphan_tool_result="(none)", user_image_omitted="(img)", tool_image_omitted="(img)",
                     tool_image_only="(img)", empty_tool_output="(empty)", tool_images_intro="(images)")


def test_manifest_lists_exactly_the_files():
    assert set(MANIFEST["scenarios"]) == set(VECTORS)
    assert len(VECTORS) >= 40


def test_every_category_is_covered_or_explained():
    covered = {c for cats in MANIFEST["scenarios"].values() for c in cats}
    categories = set(MANIFEST["categories"])
    assert covered <= categories
    missing = categories - covered
    assert missing == set(MANIFEST["notExpressible"])
    assert all(len(reason) > 40 for reason in MANIFEST["notExpressible"].values())
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    assert all(f"`{name}`" in readme for name in VECTORS), "every scenario is described in the README"
    assert all(f"`{name}`" in readme for name in MANIFEST["notExpressible"])


def test_files_stay_small():
    assert sum(p.stat().st_size for p in DATA.glob("*.json")) < 3_000_000


def _session_entries(vector: dict) -> list:
    session = vector["session"]
    if session is None:
        return []
    entries = list(SessionFile.open(SESSIONS / session["file"]).entries)
    if session["leafId"]:
        by_id = {e.id: e for e in entries}
        chain, cur = [], by_id[session["leafId"]]
        while cur is not None:
            chain.append(cur)
            cur = by_id.get(cur.parent_id)
        return chain[::-1]
    return entries


@pytest.mark.parametrize("name", sorted(VECTORS))
def test_vector_is_well_formed(name):
    vector = VECTORS[name]
    assert vector["name"] == name and vector["categories"] == MANIFEST["scenarios"][name]
    assert vector["about"] and vector["steps"]
    known = {e.id for e in _session_entries(vector)}
    leaf = _session_entries(vector)[-1].id if vector["session"] else None
    for index, step in enumerate(vector["steps"]):
        request = step["request"]
        assert request["input"] and request["responses"]["agent"]
        assert (request["session"] == "previous step") == (index > 0)
        entries = [parse_entry(raw) for raw in step["newEntries"]]
        for entry in entries:  # one chain, continuing the session / the previous step
            assert entry.parent_id == leaf and entry.id not in known
            known.add(entry.id)
            leaf = entry.id
        _check_requests(step)
        _check_events(step, entries)


def _check_requests(step: dict) -> None:
    assert step["requests"], "every run sends at least one request"
    for captured in step["requests"]:
        assert captured["kind"] in ("agent", "summary")
        if captured["kind"] == "summary":
            assert captured["messages"] and "conversation" in captured["messages"][0]
            assert len(captured["systemPromptSha256"]) == 64
            continue
        prompt = captured["systemPrompt"]
        assert set(prompt) in ({"base"}, {"text"})
        if "base" in prompt:
            assert prompt["base"] == step["basePrompt"]["sha256"]
        messages = [parse_message(m) for m in captured["messages"]]
        assert {m.role for m in messages} <= {"user", "assistant", "toolResult"}
        assert [t["name"] for t in captured["tools"]] == step["basePrompt"]["activeTools"]
        _converts(captured)


def _converts(captured: dict) -> None:
    """Our converters take every message list pi sent (the runtime's differential test compares them)."""
    model = TargetModel(id=captured["model"]["id"], provider=captured["model"]["provider"],
                        api=captured["model"]["api"])
    tools = [{"name": t["name"], "description": "", "parameters": t["parameters"]} for t in captured["tools"]]
    results = sum(m["role"] == "toolResult" for m in captured["messages"])
    body = to_openai_chat(captured["messages"], system_prompt="s", tools=tools, model=model, texts=TEXTS)
    assert sum(m["role"] == "tool" for m in body["messages"]) >= results
    body = to_anthropic_messages(captured["messages"], system_prompt="s", tools=tools, model=model, texts=TEXTS)
    assert sum(b.get("type") == "tool_result" for m in body["messages"] if isinstance(m["content"], list)
               for b in m["content"]) >= results


def _check_events(step: dict, entries: list) -> None:
    events = step["events"]
    assert {e["type"] for e in events} <= EVENT_TYPES
    compactions = [e for e in entries if e.type == "compaction"]
    ends = [e for e in events if e["type"] == "compaction_end" and e.get("result")]
    assert [e["result"]["firstKeptEntryId"] for e in ends] == [c.first_kept_entry_id for c in compactions]
    assert [e["result"]["tokensBefore"] for e in ends] == [c.tokens_before for c in compactions]
    starts = [e for e in events if e["type"] == "compaction_start"]
    assert len(starts) == len([e for e in events if e["type"] == "compaction_end" and "errorMessage" not in e])
    retries = [e for e in events if e["type"] == "auto_retry_start"]
    failed = [e for e in entries if isinstance(e, MessageEntry) and e.message.role == "assistant"
              and e.message.stop_reason == "error"]
    assert len(retries) <= len(failed)


def _events(category: str) -> list:
    return [e for name, cats in MANIFEST["scenarios"].items() if category in cats
            for step in VECTORS[name]["steps"] for e in step["events"]]


def test_categories_show_what_they_claim():
    assert any(e["type"] == "compaction_start" and e["reason"] == "overflow" for e in _events("overflow-recovery"))
    assert any(e["type"] == "compaction_end" and e.get("errorMessage") for e in _events("overflow-twice"))
    assert any(e["type"] == "compaction_start" and e["reason"] == "threshold" for e in _events("threshold-compaction"))
    retry = _events("transient-retry")
    assert {(e["type"], e.get("success")) for e in retry if e["type"] == "auto_retry_end"} == {
        ("auto_retry_end", True), ("auto_retry_end", False)}
    overrides = [r["systemPrompt"] for name, cats in MANIFEST["scenarios"].items() if "per-turn-override" in cats
                 for step in VECTORS[name]["steps"] for r in step["requests"] if r["kind"] == "agent"]
    assert any("text" in p for p in overrides) and any("base" in p for p in overrides)
    changed = VECTORS["tools-changed"]["steps"]
    assert changed[0]["basePrompt"]["activeTools"] != changed[1]["basePrompt"]["activeTools"]
    assert changed[0]["basePrompt"]["sha256"] != changed[1]["basePrompt"]["sha256"]
