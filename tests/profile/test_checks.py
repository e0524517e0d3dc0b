"""Cross-field checks that only warn, compiling Profile objects, budgets."""

from __future__ import annotations

from pathlib import Path

import pytest

from cases import HEAD, STANDALONE
from conftest import write_files
from pipeline import Pipeline, PipelineError, compile_profile
from pipeline.model.profile import Profile


def _warnings(tmp_path, body: str) -> list[str]:
    write_files(tmp_path, {"p.yaml": HEAD + body})
    return [str(w) for w in compile_profile(tmp_path / "p.yaml").warnings]


def _sections(body: str) -> str:
    return "system_prompt:\n  sections:\n" + body


NEVER = "warning: system_prompt.sections.x: this section can never render: "


@pytest.mark.parametrize(
    "section,reason",
    [
        ("{id: x, kind: custom_prompt, replaced_by_custom_prompt: true}", "it shows the custom prompt but is left out whenever there is one"),
        ("{id: x, text: a, replaced_by_custom_prompt: true, when: {present: [custom_prompt]}}",
         "it needs a custom prompt but is left out whenever there is one"),
        ("{id: x, kind: skills, item: a, when: {absent: [skills]}}", "it shows `skills` but only when there is none"),
        ("{id: x, kind: rules, item: a}", "it has no rules and no `empty` text"),
    ],
)
def test_sections_that_can_never_render(tmp_path, section, reason):
    warnings = _warnings(tmp_path, _sections(f"    - {section}\n"))
    assert [w.split(": ", 1)[1] for w in warnings] == [NEVER + reason]
    assert warnings[0].startswith(str(tmp_path / "p.yaml") + ":5:7: ")


def test_contradictory_when_points_at_the_condition(tmp_path):
    warnings = _warnings(tmp_path, _sections("    - id: x\n      text: a\n      when:\n        present: [skills]\n        absent: [skills]\n"))
    assert warnings == [
        f"{tmp_path / 'p.yaml'}:7:7: warning: system_prompt.sections.x.when: this section can never render: "
        "`skills` is both in present and absent"
    ]


def test_a_rule_that_never_applies(tmp_path):
    body = _sections("    - id: rules\n      rules+:\n        - {text: a, when: {tools_include: [ls], tools_exclude: [ls]}}\n")
    assert _warnings(tmp_path, body) == [
        f"{tmp_path / 'p.yaml'}:7:21: warning: system_prompt.sections.rules.rules.5.when: "
        "this rule never applies: `ls` is both in tools_include and tools_exclude"
    ]


def test_summary_may_not_fit_after_compacting(tmp_path):
    # threshold 40000 - 16384 = 23616; kept 20000 + summary budget floor(0.8 * 16384) = 13107 reach it
    write_files(tmp_path, {"p.yaml": HEAD + "summarizer:\n  context_window: 40000\n"})
    [warning] = compile_profile(tmp_path / "p.yaml").warnings
    assert warning.key == "compaction.keep_recent_tokens"
    # keep_recent_tokens is the built-in's: the warning stands at the user's part, the window
    assert (warning.location.file, warning.location.line) == (str(tmp_path / "p.yaml"), 4)
    assert warning.message == (
        "keep_recent_tokens plus the summary budget (13107) reach the compaction threshold (23616); "
        "this value comes from builtin:default"
    )


def test_keep_below_reserve_is_fine(tmp_path):
    assert _warnings(tmp_path, "compaction: {reserve_tokens: 30000, keep_recent_tokens: 1000}\nsummarizer: {context_window: 200000}\n") == []


def test_more_warnings(tmp_path):
    body = (
        "templates:\n  sources: [global, global, ~/no-such-prompts-dir]\n"
        "compaction:\n  branch: {max_tokens: 20000}\n"
        "summary:\n  schema:\n    - heading: Goal\n    - heading: Goal\n"
        "  offline:\n    fill: []\n"
    )
    messages = [w.split(": warning: ", 1)[1] for w in _warnings(tmp_path, body)]
    assert messages == [
        "templates.sources.1: template source `global` is listed twice",
        f"templates.sources.2: template source {Path('~/no-such-prompts-dir').expanduser()} does not exist",
        "compaction.branch.max_tokens: max_tokens (20000) is larger than reserve_tokens (16384) "
        "(a branch summary request may then exceed the context window)",
        "summary.schema.1.heading: heading `Goal` appears twice",
    ]


def test_offline_summarizer_without_texts(tmp_path):
    write_files(tmp_path, {"p.yaml": STANDALONE.replace('  offline:\n    empty: "-"\n', "")})
    [warning] = compile_profile(tmp_path / "p.yaml").warnings
    assert warning.key == "summarizer.provider" and warning.location is not None


def test_compile_a_profile_object():
    profile = compile_profile("default").profile
    pipeline = compile_profile(profile)
    assert isinstance(pipeline, Pipeline) and pipeline.origin == "<profile>"
    assert pipeline.fingerprint == compile_profile("default").fingerprint
    broken = profile.model_copy(update={"name": "x"})
    sections = list(broken.system_prompt.sections)
    sections[0] = sections[0].model_copy(update={"text": None, "kind": "text"})
    broken = broken.model_copy(update={"system_prompt": broken.system_prompt.model_copy(update={"sections": tuple(sections)})})
    with pytest.raises(PipelineError) as err:
        compile_profile(broken)
    assert [str(p) for p in err.value.problems] == [f"system_prompt.sections.{sections[0].id}: a `text` section needs `text`"]


def test_budgets():
    b = compile_profile("default").budgets
    assert (b.history_tokens, b.turn_prefix_tokens, b.threshold(200000)) == (13107, 8192, 183616)


def test_pipeline_is_frozen_and_hashable():
    pipeline = compile_profile("minimal")
    with pytest.raises(Exception):
        pipeline.fingerprint = "x"  # type: ignore[misc]
    assert hash(pipeline) == hash(compile_profile("minimal"))
    assert isinstance(pipeline.profile, Profile)


def test_template_paths_resolve_against_the_file_that_lists_them(tmp_path, monkeypatch):
    write_files(tmp_path, {"sub/p.yaml": HEAD + "templates:\n  sources: [project, ../prompts, /abs/dir]\n"})
    (tmp_path / "prompts").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    pipeline = compile_profile("p.yaml")
    assert pipeline.template_sources == ("project", tmp_path / "prompts", Path("/abs/dir"))
    assert [str(w.key) for w in pipeline.warnings] == ["templates.sources.2"]  # /abs/dir does not exist


def test_checks_live_in_their_own_module_and_the_compiler_does_not_offer_them(tmp_path):
    import pipeline.checks as checks
    import pipeline.compiler as compiler

    for name in ("Budgets", "budgets", "template_source_path", "LIST_KINDS", "TEMPLATE_KEYWORDS"):
        assert hasattr(checks, name) and not hasattr(compiler, name)  # one home: pipeline.checks
    write_files(tmp_path, {"p.yaml": HEAD + "templates:\n  sources: [project, project]\n"})
    loaded = compiler.load_profile(tmp_path / "p.yaml")
    [problem] = checks.check_profile(loaded.profile, loaded.source_map)
    assert str(problem).endswith("p.yaml:4:22: warning: templates.sources.1: template source `project` is listed twice")
