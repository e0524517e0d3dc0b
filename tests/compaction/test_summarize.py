"""The summary engine: split-turn merge, budgets, the schema check and its three policies."""

from __future__ import annotations

import pytest

from pipeline.compaction.plan import plan_compaction
from pipeline.compaction.requests import RequestContext
from pipeline.compaction.summarize import SummaryFailed, summarize_plan
from pipeline.compaction.summary_schema import missing_sections
from pipeline.compaction.requests import output_budget
from pipeline.llm.errors import LLMStatusError
from pipeline.session import ContextTexts

from .conftest import ScriptedClient, completion, default_profile, masked_profile
from .entryspec import entries

GOOD = "## Goal\ng\n\n## Constraints & Preferences\n-\n\n## Progress\n### Done\n-\n\n## Key Decisions\n-\n\n## Next Steps\n1."


def _setup(spec: str, keep: int, mode: str = "retry", profile=None):
    profile = profile or default_profile()
    summary = profile.summary.model_copy(update={"on_schema_violation": mode})
    settings = profile.compaction.model_copy(update={"keep_recent_tokens": keep})
    plan = plan_compaction(entries(spec), settings)
    return plan, RequestContext(summary, settings), ContextTexts.from_profile(profile)


def test_required_sections_are_found_by_heading_line():
    schema = default_profile().summary.schema_
    fmt = default_profile().summary.schema_format
    assert missing_sections(GOOD, schema, fmt) == ()  # Critical Context is optional in the default profile
    assert missing_sections("## Goal  \nx", schema, fmt)[0] == "## Constraints & Preferences"
    assert "## Goal" in missing_sections("text ## Goal\n### Goal", schema, fmt)


def test_retry_fixes_the_summary_with_the_profiles_corrective_text():
    plan, ctx, texts = _setup("U10 A10 U10 A10 U10 A10", 20)
    client = ScriptedClient([completion("no headings", {"input": 1}), completion(GOOD, {"input": 2})])
    result = summarize_plan(plan, client, ctx, texts)
    assert len(client.requests) == 2 and result.warnings == ()
    retry_text = ctx.summary.instructions.schema_retry.render(
        missing="## Goal, ## Constraints & Preferences, ## Progress, ## Key Decisions, ## Next Steps",
        schema=client.requests[0].user_text.split("exactly:\n\n", 1)[1].split("\n\nBe brief", 1)[0],
    )
    assert client.requests[1].user_text == client.requests[0].user_text + "\n\n" + retry_text
    assert result.summary.startswith(GOOD) and result.usage.input == 3


def test_retry_still_failing_warns_and_keeps():
    plan, ctx, texts = _setup("U10 A10 U10 A10 U10 A10", 20)
    result = summarize_plan(plan, ScriptedClient(["bad", "still bad"]), ctx, texts)
    assert result.summary.startswith("still bad")
    assert [w.severity for w in result.warnings] == ["warning"] and "## Goal" in result.warnings[0].message


def test_warn_makes_no_extra_call():
    plan, ctx, texts = _setup("U10 A10 U10 A10 U10 A10", 20, "warn")
    client = ScriptedClient(["bad"])
    result = summarize_plan(plan, client, ctx, texts)
    assert len(client.requests) == 1 and len(result.warnings) == 1


def test_fail_retries_once_then_fails():
    plan, ctx, texts = _setup("U10 A10 U10 A10 U10 A10", 20, "fail")
    client = ScriptedClient(["bad", "still bad"])
    with pytest.raises(SummaryFailed, match="lacks required section"):
        summarize_plan(plan, client, ctx, texts)
    assert len(client.requests) == 2


def test_without_a_corrective_text_there_is_no_retry():
    profile = default_profile()
    instructions = profile.summary.instructions.model_copy(update={"schema_retry": None})
    summary = profile.summary.model_copy(update={"instructions": instructions})
    plan, ctx, texts = _setup("U10 A10 U10 A10 U10 A10", 20, "retry", profile.model_copy(update={"summary": summary}))
    client = ScriptedClient(["bad"])
    assert len(summarize_plan(plan, client, ctx, texts).warnings) == 1 and len(client.requests) == 1


def test_turn_prefix_is_not_schema_checked_and_no_history_needs_no_call():
    """P6: empty history → the profile's no_history text, one call for the prefix, joined by the separator."""
    plan, ctx, texts = _setup("U5 A10 T10 A10 T10 A10", 20)
    client = ScriptedClient(["prefix summary"])
    result = summarize_plan(plan, client, ctx, texts)
    assert [r.kind for r in client.requests] == ["turn_prefix"]
    summary = default_profile().summary
    assert result.summary == summary.no_history.render() + summary.split_turn_separator.render() + "prefix summary"


def test_split_turn_calls_are_sequential_history_first_and_usage_is_summed():
    plan, ctx, texts = _setup("U5 A5 U5 A10 T10 A10 T10 A10", 20)
    client = ScriptedClient([completion(GOOD, {"input": 5, "totalTokens": 5}), completion("P", {"output": 7})])
    progress: list[str] = []
    result = summarize_plan(plan, client, ctx, texts, progress=progress.append)
    assert [r.kind for r in client.requests] == ["history", "turn_prefix"]
    assert (result.usage.input, result.usage.output, result.usage.total_tokens) == (5, 7, 5)
    assert progress == ["summarizing history (1/2)…", "summarizing the split turn's prefix (2/2)…"]


def test_an_llm_error_becomes_one_located_line():
    plan, ctx, texts = _setup("U10 A10 U10 A10 U10 A10", 20)
    client = ScriptedClient([LLMStatusError("openai", 503, "overloaded")])
    with pytest.raises(SummaryFailed) as failure:
        summarize_plan(plan, client, ctx, texts)
    assert str(failure.value) == "summarizing history failed: openai: HTTP 503: overloaded"


def test_budgets_follow_the_profile_and_the_model_cap():
    assert output_budget(0.8, 16384, None) == 13107
    assert output_budget(0.5, 16384, 32000) == 8192
    assert output_budget(0.8, 16384, 1000) == 1000
    plan, ctx, texts = _setup("U5 A5 U5 A10 T10 A10 T10 A10", 20, "warn", masked_profile())
    client = ScriptedClient(["a", "b"])
    summarize_plan(plan, client, RequestContext(ctx.summary, ctx.compaction, max_output_tokens=9000), texts)
    assert [r.max_tokens for r in client.requests] == [9000, 8192]


def test_custom_instructions_use_the_profiles_label():
    plan, ctx, texts = _setup("U10 A10 U10 A10 U10 A10", 20, "warn")
    client = ScriptedClient([GOOD])
    summarize_plan(plan, client, ctx, texts, custom_instructions="tests first")
    label = default_profile().summary.instructions.custom_label.render()
    assert client.requests[0].user_text.endswith(f"\n\n{label}: tests first")


def test_reasoning_is_the_sessions_thinking_level_only_for_reasoning_models():
    from pipeline.compaction.engine import request_context
    from pipeline.model.summary import Summarizer

    profile = default_profile()
    ask = lambda reasoning, level: request_context(  # noqa: E731
        profile, profile.compaction, Summarizer(reasoning=reasoning, max_tokens=500), level)
    assert ask(True, "high").reasoning == "high" and ask(True, "high").max_output_tokens == 500
    assert ask(False, "high").reasoning is None
    assert ask(True, "off").reasoning is None and ask(True, None).reasoning is None
    assert ask(True, "bogus").reasoning is None
