"""The runtime facade: every stage reached through a compiled ``Pipeline``, on real files.

Expected values come from pi 0.84.0's oracle (the vector files under ``tests/data``),
from the session file itself, or from the profile the test compiled; nothing is mocked.
"""

from __future__ import annotations

import json
import shutil
from functools import lru_cache
from pathlib import Path

import pytest

from pipeline import Pipeline, PipelineError, compile_profile
from pipeline.compaction.engine import make_summary_client
from pipeline.compaction.plan import CompactionPlan
from pipeline.js import js_json
from pipeline.prompt import RenderContext
from pipeline.session import SessionFile

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
LONG = DATA / "sessions" / "real" / "long-coding.jsonl"


@lru_cache(maxsize=None)
def _json(rel: str):
    return json.loads((DATA / rel).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def default() -> Pipeline:
    return compile_profile("default")


@pytest.fixture
def long_copy(tmp_path) -> Path:
    target = tmp_path / "long-coding.jsonl"
    shutil.copyfile(LONG, target)
    return target


# --------------------------------------------------------------------------- render


def test_render_system_prompt_equals_pi():
    """The pi-shaped test profile renders pi's own prompts (oracle, sentences masked)."""
    pipeline = compile_profile(ROOT / "tests" / "prompt" / "pi_shaped.yaml")
    for vector in _json("system_prompt_vectors.json")["vectors"][:25]:
        context = RenderContext.from_json(vector["context"])
        assert pipeline.render_system_prompt(context) == vector["expected"]


# --------------------------------------------------------------------------- templates


def _write_templates(directory: Path, templates: list[dict]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for t in templates:
        (directory / f"{t['name']}.md").write_text(t["content"], encoding="utf-8", newline="")


def test_load_templates_and_expand_equal_pi(default, tmp_path):
    """pi's expandPromptTemplate answers (oracle) through the profile's template sources.

    The vector set has two templates named ``t``; pi uses the first. Here the first is
    in the project directory and the second in the user directory, so the answers only
    match when ``project`` comes before ``global``, as in pi's agent.
    """
    sets = _json("template_vectors.json")["expand_input_templates"]
    first_t = next(i for i, t in enumerate(sets) if t["name"] == "t")
    later = [t for i, t in enumerate(sets) if t["name"] == "t" and i != first_t]
    _write_templates(tmp_path / "proj" / ".pi" / "prompts", [t for t in sets if t not in later])
    _write_templates(tmp_path / "agent" / "prompts", later)
    templates = default.load_templates(tmp_path / "proj", agent=tmp_path / "agent")
    assert [p.code for p in templates.problems] == ["template.name-collision"]
    for case in _json("template_vectors.json")["expand_input"]:
        assert default.expand(case["input"], templates) == case["result"]


def test_load_templates_untrusted_skips_the_project(default, tmp_path):
    _write_templates(tmp_path / "proj" / ".pi" / "prompts", [{"name": "hi", "content": "project $1"}])
    _write_templates(tmp_path / "agent" / "prompts", [{"name": "hi", "content": "user $1"}])
    trusted = default.load_templates(tmp_path / "proj", agent=tmp_path / "agent")
    untrusted = default.load_templates(tmp_path / "proj", agent=tmp_path / "agent", trusted=False)
    assert [t.source for t in trusted] == ["project"] and [t.source for t in untrusted] == ["user"]
    assert default.expand("/hi x", untrusted) == "user x"


# --------------------------------------------------------------------------- compaction


def _pi_plan(keep: int) -> dict:
    cases = _json("compaction/plans.json")
    return next(c["expected"] for c in cases
                if c["session"].endswith("real/long-coding.jsonl") and c["leaf"] is None and c["keep"] == keep)


@pytest.mark.parametrize("keep", [None, 4000])
def test_plan_compaction_equals_pi(default, long_copy, keep):
    overrides = {} if keep is None else {"keep_recent_tokens": keep}
    plan = default.plan_compaction(long_copy, **overrides)
    expected = _pi_plan(keep if keep is not None else default.profile.compaction.keep_recent_tokens)
    assert isinstance(plan, CompactionPlan)
    assert (plan.first_kept_entry_id, plan.first_kept_index, plan.is_split_turn, plan.tokens_before) == (
        expected["firstKeptEntryId"], expected["firstKeptEntryIndex"], expected["isSplitTurn"],
        expected["tokensBefore"],
    )
    assert [m.message.role for m in plan.summarize] == expected["messagesToSummarizeRoles"]
    assert long_copy.read_bytes() == LONG.read_bytes()  # planning writes nothing


class Recording:
    """The profile's real offline client, keeping the requests it was given."""

    def __init__(self, inner) -> None:
        self.inner, self.provider, self.requests = inner, inner.provider, []

    def build_body(self, request):
        return self.inner.build_body(request)

    def complete(self, request):
        self.requests.append(request)
        return self.inner.complete(request)


def test_compact_appends_one_entry_and_projects_it(default, long_copy):
    plan = default.plan_compaction(long_copy)
    done = default.compact(long_copy)
    lines = long_copy.read_bytes().splitlines()
    assert lines[:-1] == LONG.read_bytes().splitlines()  # append-only: one new line
    entry = json.loads(lines[-1])
    assert entry["type"] == "compaction" and entry["id"] == done.entry.id
    assert entry["firstKeptEntryId"] == plan.first_kept_entry_id
    assert entry["details"]["producedBy"] == "offline"

    context = default.project(long_copy)
    opening = default.profile.summary.projection.compaction.open.raw
    first = context.messages[0].raw["content"][0]["text"]
    assert first.startswith(opening) and entry["summary"] in first
    assert js_json(context.messages[0].raw) == js_json(done.context.messages[0].raw)


def test_compact_with_a_client_and_instructions(default, long_copy):
    client = Recording(make_summary_client(default.profile, default.profile.summarizer))
    done = default.compact(SessionFile.open(long_copy), client=client, instructions="the parser")
    label = default.profile.summary.instructions.custom_label.raw
    assert client.requests and client.requests[0].user_text.endswith(f"\n\n{label}: the parser")
    assert done.entry.raw["summary"]


def test_compact_and_plan_take_overrides_as_the_last_layer(default, long_copy):
    """Overrides go through the same checks as a file, named by their origin; the result
    equals compiling with them, and the base pipeline is unchanged."""
    keep = {"compaction.keep_recent_tokens": 4000}
    plan = default.plan_compaction(long_copy, keep)
    assert plan.settings.keep_recent_tokens == 4000 and plan == default.plan_compaction(long_copy, keep_recent_tokens=4000)
    assert default.with_overrides(keep).fingerprint == compile_profile("default", keep).fingerprint
    with pytest.raises(PipelineError) as failed:
        default.compact(long_copy, overrides={"compaction.reserve_tokens": 1}, origin={"compaction.reserve_tokens": "--reserve"})
    assert {str(p.location) for p in failed.value.problems} == {"--reserve"}
    assert long_copy.read_bytes() == LONG.read_bytes()
    done = default.compact(long_copy, overrides=keep)
    assert done.entry.first_kept_entry_id == plan.first_kept_entry_id
    assert default.profile.compaction.keep_recent_tokens != 4000


def test_plan_and_trigger_take_a_models_settings(default, long_copy):
    """``model=`` picks the model's ``compaction.model_overrides`` entry for the plan and the
    trigger, as :meth:`Pipeline.compact` does; another model gets the block itself."""
    tuned = default.with_overrides({"compaction.model_overrides": {"openai/small": {"keep_recent_tokens": 4000,
                                                                                    "reserve_tokens": 2000}}})
    assert tuned.compaction_settings("openai/small").keep_recent_tokens == 4000
    assert tuned.compaction_settings(("openai", "other")) == tuned.profile.compaction
    plan = tuned.plan_compaction(long_copy, model="openai/small")
    assert plan.settings == tuned.compaction_settings("openai/small")
    same = default.plan_compaction(long_copy, keep_recent_tokens=4000)
    assert (plan.first_kept_entry_id, plan.summarize_ids) == (same.first_kept_entry_id, same.summarize_ids)
    assert tuned.plan_compaction(long_copy).first_kept_entry_id == default.plan_compaction(long_copy).first_kept_entry_id
    assert same.first_kept_entry_id != default.plan_compaction(long_copy).first_kept_entry_id
    window = 30000
    small, other = tuned.would_compact(long_copy, window, model="openai/small"), tuned.would_compact(long_copy, window)
    assert small.tokens == other.tokens == plan.tokens_before
    assert (small.threshold, other.threshold) == (window - 2000, window - default.profile.compaction.reserve_tokens)
    assert small.fires == (plan.tokens_before > window - 2000)
    assert long_copy.read_bytes() == LONG.read_bytes()  # nothing written


def test_an_unknown_override_key_is_located_at_its_flag():
    with pytest.raises(PipelineError) as failed:
        compile_profile("default", {"compaction.reserve_tokenz": 5}, {"compaction.reserve_tokenz": "--x"})
    [problem] = failed.value.problems
    assert str(problem) == "--x: compaction.reserve_tokenz: unknown key (did you mean `reserve_tokens`?)"


def test_a_compiled_profile_compiles_again_to_the_same_fingerprint(default, tmp_path):
    team = compile_profile(ROOT / "configs" / "examples" / "team.yaml")
    for pipeline in (default, team):
        again = compile_profile(pipeline)
        assert (again.fingerprint, again.origin, again.profile) == (pipeline.fingerprint, pipeline.origin, pipeline.profile)


def test_render_applies_the_tool_catalog_unless_asked_not_to(default):
    context = RenderContext(cwd="/repo", tools=("read", "bash"))
    catalog = default.profile.system_prompt.tools
    prompt = default.render_system_prompt(context)
    assert f"- read: {catalog['read'].snippet.raw}" in prompt and f"- bash: {catalog['bash'].snippet.raw}" in prompt
    bare = default.render_system_prompt(context, catalog=False)
    assert "- read:" not in bare
    mine = default.render_system_prompt(context.replace(tool_snippets={"read": "Mine"}))
    assert "- read: Mine" in mine and "- bash: " in mine


# --------------------------------------------------------------------------- projection


def _masked(tmp_path: Path) -> Pipeline:
    """The default profile with the mask words the session vectors were recorded with."""
    t = _json("sessions/vectors/context.json")["texts"]
    q = json.dumps
    (tmp_path / "masked.yaml").write_text(
        "extends: builtin:default\nname: masked\nsummary:\n  projection:\n"
        f"    compaction: {{open: {q(t['compaction_open'])}, close: {q(t['compaction_close'])}}}\n"
        f"    branch: {{open: {q(t['branch_open'])}, close: {q(t['branch_close'])}}}\n"
        "context:\n  bash_execution:\n"
        f"    ran: {q(t['bash_ran'])}\n    output: {q(t['bash_output'])}\n"
        f"    no_output: {q(t['bash_no_output'])}\n    cancelled: {q(t['bash_cancelled'])}\n"
        f"    exit_code: {q(t['bash_exit_code'])}\n    truncated: {q(t['bash_truncated'])}\n",
        encoding="utf-8",
    )
    return compile_profile(tmp_path / "masked.yaml")


def test_project_equals_pi(tmp_path):
    """pi's buildSessionContext + convertToLlm (oracle) for a compacted, branched real session."""
    pipeline = _masked(tmp_path)
    doc = _json("sessions/vectors/context.json")
    name = "real/compacted-branched.jsonl"
    session = SessionFile.open(DATA / "sessions" / name)
    cases = [c for c in doc["cases"] if c["file"] == name]
    assert len(cases) > 3 and any("leafId" not in c for c in cases)
    for case in cases:
        got = pipeline.project(session, leaf=case["leafId"]) if "leafId" in case else pipeline.project(session)
        assert [js_json(m.raw) for m in got.messages] == [js_json(doc["messages"][i]) for i in case["messages"]]


def test_project_takes_a_path_and_a_leaf(default):
    session = SessionFile.open(LONG)
    assert default.project(LONG).messages == default.project(session).messages
    assert default.project(session, leaf=None).messages == ()


def test_discovery_defaults_honour_the_agent_dir_variable(tmp_path, monkeypatch):
    """Without an agent_dir argument, discovery (library and facade) reads $PI_CODING_AGENT_DIR."""
    from pipeline.prompt.discover import discover
    from pipeline.prompt.inputs import RenderRequest

    agent, project = tmp_path / "agent", tmp_path / "project"
    agent.mkdir()
    project.mkdir()
    (agent / "AGENTS.md").write_text("agent-wide rules\n")
    (agent / "SYSTEM.md").write_text("agent system prompt\n")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    found = discover(str(project))
    assert [f.path for f in found.context_files] == [str(agent / "AGENTS.md")]
    assert found.custom_prompt == "agent system prompt\n"
    gathered = compile_profile("default").gather(RenderRequest(cwd=str(project), discover=True)).context
    assert [f.content for f in gathered.context_files] == ["agent-wide rules\n"]


def test_the_pipeline_wraps_the_compiled_profile_and_reads_its_fields_through():
    """Issue 30, item 3: ``Pipeline`` holds the front end's record instead of being one."""
    import dataclasses
    import pickle

    from pipeline.compiler import CompiledProfile

    pipeline = compile_profile("default")
    assert not isinstance(pipeline, CompiledProfile) and isinstance(pipeline.compiled, CompiledProfile)
    for name in ("profile", "origin", "fingerprint", "warnings", "source_map", "render_plan", "files",
                 "template_sources"):
        assert getattr(pipeline, name) is getattr(pipeline.compiled, name) or \
            getattr(pipeline, name) == getattr(pipeline.compiled, name), name
    assert pipeline == compile_profile("default") and hash(pipeline) == hash(pipeline.compiled)
    assert pickle.loads(pickle.dumps(pipeline)) == pipeline
    moved = pipeline.replace(origin="elsewhere")
    assert moved.origin == "elsewhere" and moved.fingerprint == pipeline.fingerprint and pipeline.origin != "elsewhere"
    assert compile_profile(pipeline, {"compaction.reserve_tokens": 1234}).profile.compaction.reserve_tokens == 1234
    try:
        pipeline.origin = "x"  # type: ignore[misc]
    except (AttributeError, dataclasses.FrozenInstanceError):
        pass
    else:
        raise AssertionError("a Pipeline is immutable")
