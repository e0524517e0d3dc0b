"""The run plan (pipeline/model/run_plan.py): what a run reads of a profile, as plain data, lowered in one place."""

from __future__ import annotations

import dataclasses
import pickle
import subprocess
import sys

import pytest

from pipeline import compile_profile
from pipeline.model.compaction import Compaction
from pipeline.model.prompt import PatchTexts as PatchModel
from pipeline.model.run_plan import (
    CompactionCheck,
    PatchTexts,
    RetrySettings,
    RunPlan,
    RuntimeTexts,
    SkillTexts,
    SummarizerSettings,
    TemplateSettings,
    ToolErrorTexts,
    ToolOutputTexts,
    WireTexts,
)
from pipeline.model.runtime import Retry, Runtime, SkillCommand, ToolErrors, ToolOutput
from pipeline.model.runtime import WireTexts as WireModel
from pipeline.model.summary import Summarizer
from pipeline.model.templates import Templates

BUILTINS = ("default", "minimal", "builtin:pi-1")


@pytest.mark.parametrize(("model", "plan"), [
    (Runtime, RuntimeTexts), (SkillCommand, SkillTexts), (ToolErrors, ToolErrorTexts), (WireModel, WireTexts),
    (ToolOutput, ToolOutputTexts), (PatchModel, PatchTexts), (Summarizer, SummarizerSettings), (Retry, RetrySettings),
    (Templates, TemplateSettings),
])
def test_the_plan_has_every_field_of_the_blocks_a_run_reads(model, plan) -> None:
    assert set(model.model_fields) == {f.name for f in dataclasses.fields(plan)}


def test_the_plans_defaults_are_the_blocks() -> None:
    assert CompactionCheck() == CompactionCheck.of(Compaction())
    assert RetrySettings() == RunPlan.of(compile_profile("default").profile).retry
    assert SummarizerSettings() == SummarizerSettings(**dict(Summarizer()))


def _plain(value: object) -> None:
    """No pydantic model anywhere in ``value`` (a plan, recursively)."""
    assert not hasattr(type(value), "model_fields"), type(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            if f.name != "load_profile":
                _plain(getattr(value, f.name))
    elif isinstance(value, (tuple, list)):
        for item in value:
            _plain(item)


@pytest.mark.parametrize("name", BUILTINS)
def test_a_builtins_plan_is_plain_data_and_pickles_without_its_profile(name: str) -> None:
    compiled = compile_profile(name)
    plan = compiled.run_plan
    _plain(plan)
    stored = pickle.loads(pickle.dumps(plan))
    assert stored == plan and hash(stored) == hash(plan)
    assert stored.load_profile is None and plan.profile() is compiled.profile
    with pytest.raises(RuntimeError, match="without its profile"):
        stored.profile()
    assert stored.with_profile(lambda: compiled.profile).profile() is compiled.profile
    assert pickle.loads(pickle.dumps(compiled)).run_plan.profile() == compiled.profile  # the cache's whole profile


@pytest.mark.parametrize("trigger", [None, {"reserve_tokens": 5000}, {"percent_of_window": 75}, {"tokens": 1000}])
def test_the_compaction_check_fires_where_the_block_does_for_every_model(trigger, tmp_path) -> None:
    (tmp_path / "p.yaml").write_text(
        "extends: builtin:default\nname: t\ncompaction:\n  reserve_tokens: 2000\n  overflow_retries: 2\n"
        "  model_overrides:\n    p/m: {trigger: {tokens: 100}}\n    ollama/qwen/coder: {reserve_tokens: 9000}\n"
        + (f"  trigger: {trigger}\n" if trigger else ""), encoding="utf-8")
    block = compile_profile(tmp_path / "p.yaml").profile.compaction
    check = CompactionCheck.of(block)
    for provider, model in (("p", "m"), ("ollama", "qwen/coder"), ("p", "other"), (None, None)):
        mine, theirs = check.for_model(provider, model), block.for_model(provider, model)
        assert mine.overflow_retries == theirs.overflow_retries == 2
        for window in (0, 8000, 200_000):
            assert mine.threshold(window) == theirs.threshold(window), (provider, model, window)
            for tokens in (50, 150, 7000, 199_000):
                assert mine.fires(tokens, window) == (theirs.enabled and tokens > theirs.threshold(window))


def test_the_plans_module_imports_no_pydantic() -> None:
    code = ("import sys, pickle\nfrom pipeline.model.run_plan import RunPlan\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'pydantic_core')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n"
