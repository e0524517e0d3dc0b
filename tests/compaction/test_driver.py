"""The one compaction driver (``pipeline.compaction.driver.compact``) and ``Pipeline.compact`` in front of it:
the model's settings, every strategy, one outcome."""

from __future__ import annotations

import pytest

from pipeline import compile_profile
from pipeline.compaction.driver import CompactionOutcome, compact
from pipeline.model.ref import ModelRef
from pipeline.runtime.host import ModelInfo
from pipeline.session import SessionFile

LONG = "tests/data/sessions/real/long-coding.jsonl"
MASK_FOR_M = {"compaction.model_overrides": {"local/m": {"strategy": "mask_tool_results", "keep_recent_tokens": 6000}}}


def _types(path):
    return [e.type for e in SessionFile.open(path).entries]


def test_summarize_outcome(copy_session):
    path = copy_session(LONG)
    before = len(_types(path))
    done = compile_profile("default").compact(path)
    assert isinstance(done, CompactionOutcome) and done.strategy == "summarize"
    assert done.summarized and not done.masked and done.did_anything and done.reason is None
    assert _types(path)[before:] == ["compaction"] and done.entry.id == SessionFile.open(path).entries[-1].id
    assert done.tokens_before == done.entry.tokens_before and 0 < done.tokens_after < done.tokens_before
    assert done.warnings == tuple(done.result.warnings)


@pytest.mark.parametrize("model", ["local/m", ("local", "m"), ModelInfo(id="m", provider="local", context_window=0)])
def test_the_models_override_decides_the_strategy(copy_session, model):
    path = copy_session(LONG)
    pipeline = compile_profile("default", MASK_FOR_M)
    done = pipeline.compact(path, model=model)
    assert done.strategy == "mask_tool_results" and done.masked and not done.summarized
    assert done.settings.keep_recent_tokens == 6000 and _types(path)[-1] == "custom"
    assert done.tokens_after == done.mask.tokens_after < done.tokens_before
    other = compile_profile("default", MASK_FOR_M).compact(copy_session(LONG), model="local/other")
    assert other.strategy == "summarize" and other.summarized


def test_nothing_is_an_outcome_with_its_reason(copy_session):
    path = copy_session(LONG)
    pipeline = compile_profile("default", {"compaction.strategy": "mask_tool_results"})
    first = pipeline.compact(path)
    again = pipeline.compact(path)
    assert first.masked and not again.did_anything and again.reason == "nothing_to_mask" and again.message
    huge = compile_profile("default", {"compaction.keep_recent_tokens": 10**7}).compact(copy_session(LONG))
    assert not huge.did_anything and huge.nothing is not None and huge.reason == huge.nothing.reason
    assert huge.tokens_before is None and huge.tokens_after is None


def test_an_unknown_strategy_and_model_name_are_refused(copy_session):
    profile = compile_profile("default").profile
    with pytest.raises(ValueError, match="unknown compaction strategy 'fold'"):
        compact(SessionFile.open(copy_session(LONG)), profile, None, strategy="fold")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="provider/id"):
        ModelRef.of("just-a-name")
    assert tuple(ModelRef.of("ollama/qwen/coder")) == ("ollama", "qwen/coder") and tuple(ModelRef.of(None)) == (None, None)
    assert ModelRef.of(("ollama", "qwen/coder")).key == "ollama/qwen/coder" and ModelRef("ollama").key is None
