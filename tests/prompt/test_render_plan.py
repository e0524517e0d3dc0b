"""The render plan: it carries every field of the profile that rendering reads, and a
plan (fresh, or loaded back from the compiled-profile cache) renders exactly what the
validated Profile renders, for every built-in profile and every render scenario, in the
library and through ``pipeline render``."""

from __future__ import annotations

import json
import pickle
from dataclasses import fields
from pathlib import Path

import pytest

from pipeline import compile_profile, profile_cache
from pipeline.cli import main
from pipeline.model.prompt import CallerSections, Rule, Section, Tool, When
from pipeline.model.render_plan import CallerRule, CatalogEntry, Condition, RenderPlan, RulePlan, SectionPlan
from pipeline.prompt import render_sections, render_system_prompt
from pipeline.prompt.inputs import RenderRequest, gather
from pipeline.resources import builtin_profiles
from pipeline.scenario import load_scenario, scenario_pipeline

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "tests" / "scenarios").glob("*.yaml"))
BUILTINS = sorted(builtin_profiles())
#: Model fields the system prompt's rendering does not read (a tool's description goes to the model request;
#: a section's owner only tells an export whose text it is, its folder which AGENTS.md the agents-md export puts it in).
NOT_RENDERED = {Section: {"owner", "folder"}}


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


@pytest.mark.parametrize(("model", "plan"), [
    (Section, SectionPlan), (When, Condition), (Rule, RulePlan), (CallerSections, CallerRule), (Tool, CatalogEntry),
])
def test_the_plan_has_every_field_rendering_reads(model, plan) -> None:
    planned = {f.name for f in fields(plan)} - {"name"} if plan is CatalogEntry else {f.name for f in fields(plan)}
    assert set(model.model_fields) - NOT_RENDERED.get(model, set()) == planned


def test_the_plan_is_plain_data() -> None:
    plan = compile_profile("default").render_plan
    assert plan == RenderPlan.of(compile_profile("default").profile.system_prompt)
    assert pickle.loads(pickle.dumps(plan)) == plan and hash(plan) == hash(pickle.loads(pickle.dumps(plan)))
    assert all(not hasattr(type(v), "model_fields") for s in plan.sections for v in vars(s).values())


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: p.stem)
@pytest.mark.parametrize("name", BUILTINS)
def test_a_plan_renders_what_the_profile_renders(name: str, scenario: Path) -> None:
    pipeline = scenario_pipeline(name, load_scenario(scenario), str(scenario))
    context = load_scenario(scenario).context_for(pipeline)
    stored = pickle.loads(pickle.dumps(pipeline.render_plan))  # as the cache gives it back
    expected = render_sections(pipeline.profile, context)
    assert render_sections(stored, context) == expected
    assert render_system_prompt(stored, context) == render_system_prompt(pipeline.profile, context)
    assert pipeline.render_sections(context, catalog=False) == expected


@pytest.mark.parametrize("name", BUILTINS)
def test_pipeline_render_from_the_cached_plan_prints_the_profiles_prompt(name, cache_home, capsys, tmp_path) -> None:
    compiled = compile_profile(name)  # fills the cache
    assert profile_cache.cached_plan(name) is not None
    argv = ["render", name, "--cwd", str(tmp_path), "--guideline", "Keep it short."]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert main([*argv, "--format", "json"]) == 0  # through the whole Profile and the report
    assert text == json.loads(capsys.readouterr().out)["prompt"] + "\n"
    request = RenderRequest(cwd=str(tmp_path), guidelines=("Keep it short.",))
    assert text == render_system_prompt(compiled.profile, gather(compiled.profile, request).context) + "\n"
