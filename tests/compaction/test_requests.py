"""Summary requests equal pi's byte for byte when the profile carries pi's structure.

The vectors are pi's captured requests with every pi sentence replaced by a mask; the
test profile ``pi_masked.yaml`` carries the same masks, so equality here means our
requests are pi's requests, wording aside.
"""

from __future__ import annotations

import pytest

from pipeline.compaction.branch import BranchEntries, branch_entries, summarize_branch
from pipeline.compaction.engine import compact_session
from pipeline.compaction.plan import CompactionPlan, plan_compaction
from pipeline.compaction.requests import RequestContext, history_request
from pipeline.compaction.summarize import plan_calls, summarize_plan
from pipeline.compaction.summary_schema import render_schema
from pipeline.llm.types import REASONING_LEVELS
from pipeline.model.summary import SchemaFormat, SchemaItem, SchemaSection
from pipeline.session import ContextTexts, SessionFile, convert_to_llm, parse_entry, parse_message

from .conftest import ROOT, ScriptedClient, completion, masked_profile, vectors

PI_KIND = {"history": "history", "turn_prefix": "turnPrefix"}


def _ctx(request: dict, reserve: int) -> RequestContext:
    """The request context pi's capture model implies (model maxTokens 32000, no reasoning by default)."""
    profile = masked_profile()
    model = {"reasoning": False, "maxTokens": 32000, **request.get("model", {})}
    level = request.get("thinkingLevel")
    reasoning = level if model["reasoning"] and level in REASONING_LEVELS else None
    settings = profile.compaction.model_copy(update={"reserve_tokens": reserve})
    return RequestContext(profile.summary, settings, max_output_tokens=model["maxTokens"], reasoning=reasoning)


def _captured(request) -> dict:
    return {
        "systemPrompt": request.system_prompt,
        "userText": request.user_text,
        "maxTokens": request.max_tokens,
        "reasoning": request.reasoning,
        "cacheRetention": "none",  # every summary call is a fresh, uncached request (the clients send no cache hints)
    }


def _path(case: dict) -> list:
    if case["session"]:
        return SessionFile.open(ROOT / case["session"]).path_to()
    return [parse_entry(raw) for raw in case["request"]["entries"]]


def _responses(case: dict) -> list:
    return [completion(r["text"], r.get("usage")) for r in case["responses"]]


def _plan(case: dict) -> CompactionPlan:
    settings = case["request"].get("settings", {})
    reserve = settings.get("reserveTokens", 16384)
    compaction = masked_profile().compaction.model_copy(
        update={"keep_recent_tokens": settings.get("keepRecentTokens", 20000), "reserve_tokens": reserve}
    )
    plan = plan_compaction(_path(case), compaction)
    assert isinstance(plan, CompactionPlan)
    return plan


def _case_id(case: dict) -> str:
    return (case["session"] or "entries").rsplit("/", 1)[-1] + "/" + str(case["request"].get("settings"))


@pytest.mark.parametrize("case", vectors("requests")["summary_request"], ids=_case_id)
def test_compaction_requests_equal_pi(case):
    plan = _plan(case)
    ctx = _ctx(case["request"], plan.settings.reserve_tokens)
    texts = ContextTexts.from_profile(masked_profile())
    calls = plan_calls(plan, ctx, texts, case["request"].get("customInstructions"))
    assert [PI_KIND[c.request.kind] for c in calls] == [c["kind"] for c in case["calls"]]
    for call, expected in zip(calls, case["calls"]):
        assert _captured(call.request) == {k: v for k, v in expected.items() if k != "kind"}


@pytest.mark.parametrize("case", vectors("requests")["summary_request"], ids=_case_id)
def test_compaction_result_equals_pi(case):
    plan = _plan(case)
    ctx = _ctx(case["request"], plan.settings.reserve_tokens)
    texts = ContextTexts.from_profile(masked_profile())
    result = summarize_plan(plan, ScriptedClient(_responses(case)), ctx, texts,
                            custom_instructions=case["request"].get("customInstructions"))
    got = {
        "summary": result.summary, "firstKeptEntryId": result.first_kept_entry_id,
        "tokensBefore": result.tokens_before, "usage": result.usage.to_json(), "details": result.details,
    }
    assert got == case["result"]


@pytest.mark.parametrize("case", vectors("requests")["generate_summary"], ids=["first", "update"])
def test_history_request_equals_pi(case):
    request = case["request"]
    ctx = _ctx(request, request["reserveTokens"])
    messages = convert_to_llm([parse_message(m) for m in request["messages"]], ContextTexts.from_profile(masked_profile()))
    ours = history_request(
        messages, ctx, previous_summary=request.get("previousSummary"),
        custom_instructions=request.get("customInstructions"),
    )
    assert [_captured(ours)] == case["calls"]


def _branch_entries(case: dict) -> BranchEntries:
    if case["session"]:
        session = SessionFile.open(ROOT / case["session"])
        return branch_entries(session.tree, case["request"]["oldLeafId"], case["request"]["targetId"])
    return BranchEntries(tuple(parse_entry(raw) for raw in case["request"]["entries"]), None)


@pytest.mark.parametrize("case", vectors("requests")["branch"], ids=lambda c: str(c["request"].get("targetId")))
def test_branch_summary_equals_pi(case):
    request = case["request"]
    collected = _branch_entries(case)
    assert [e.id for e in collected.entries] == case["entryIds"]
    client = ScriptedClient([completion("SUM-n", {"input": 100, "output": 20, "cacheRead": 3, "cacheWrite": 4,
                                                  "totalTokens": 127})])
    profile = masked_profile()
    result = summarize_branch(
        collected.entries, client, RequestContext(profile.summary, profile.compaction),
        ContextTexts.from_profile(profile), context_window=request.get("model", {}).get("contextWindow", 200000),
        custom_instructions=request.get("customInstructions"),
        replace_instructions=request.get("replaceInstructions", False),
    )
    assert [_captured(r) | {"reasoning": None} for r in client.requests] == [
        dict(c, reasoning=None) for c in case["calls"]
    ]
    if client.requests:
        expected = {"summary": result.summary, "usage": result.usage.to_json(),
                    "readFiles": list(result.files.read_files), "modifiedFiles": list(result.files.modified_files)}
    else:
        expected = {"summary": result.summary}
    assert expected == case["result"]


@pytest.mark.parametrize("case", vectors("requests")["agent_compact"], ids=["long-coding", "multi-compaction"])
def test_compaction_entry_equals_pi(case, copy_session):
    """End to end (pi's AgentSession.compact): the entry appended to the file has pi's shape and values."""
    path = copy_session(case["session"])
    session = SessionFile.open(path)
    settings = case["request"]["settings"]
    profile = masked_profile()
    compaction = profile.compaction.model_copy(
        update={"keep_recent_tokens": settings["keepRecentTokens"], "reserve_tokens": settings.get("reserveTokens", 16384)}
    )
    client = ScriptedClient(_responses({"responses": case["request"]["responses"]}))
    done = compact_session(session, profile, client, settings=compaction,
                           custom_instructions=case["request"].get("customInstructions"))
    ours, pi = dict(done.entry.raw), case["compactionEntry"]
    assert list(ours) == list(pi)
    for key in ("id", "timestamp"):
        ours.pop(key), pi.pop(key)
    assert ours == pi
    assert len(done.context.messages) == case["contextAfterCount"]


def test_schema_renders_pis_format_layout():
    """The layout of ``${schema}``: sections by blank lines, guidance and items under their heading."""
    sections = (
        SchemaSection(heading="A", guidance="g1\ng2"),
        SchemaSection(heading="B", items=(SchemaItem(heading="x", guidance="gx"), SchemaItem(heading="y"))),
        SchemaSection(heading="C"),
    )
    assert render_schema(sections, SchemaFormat()) == "## A\ng1\ng2\n\n## B\n### x\ngx\n\n### y\n\n## C"
    assert render_schema(sections[2:], SchemaFormat(section_prefix="# ")) == "# C"
