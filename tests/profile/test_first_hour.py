"""Defects a new user met in the first hour, each reproduced: near-miss section ids, errors
reported in a file the user cannot edit, `explain` of a removed key, the model-window
check, missing and broken template sources."""

from __future__ import annotations

import json

import pytest

from conftest import HEAD, write_files
from pipeline import compile_profile
from pipeline.errors import PipelineError
from pipeline.source.nearmiss import NearMiss

# --------------------------------------------------------------------------- near-miss ids

TYPO = HEAD + "system_prompt:\n  sections:\n    - id: identiy\n      text: I am careful.\n"


def test_a_near_miss_of_an_existing_section_id_is_a_warning(tmp_path):
    write_files(tmp_path, {"p.yaml": TYPO})
    [warning] = compile_profile(tmp_path / "p.yaml").warnings
    assert warning.code == "profile.near-miss-section" and warning.key == "system_prompt.sections.identiy.id"
    assert (warning.location.line, warning.location.col) == (5, 11)
    assert warning.hint.startswith("did you mean `identity`?")


def test_validate_strict_fails_on_a_near_miss(tmp_path, cli):
    write_files(tmp_path, {"p.yaml": TYPO})
    ok, strict = cli("validate", "p.yaml"), cli("validate", "--strict", "p.yaml")
    assert ok.code == 0 and "did you mean `identity`?" in ok.out + ok.err
    assert strict.code == 1 and "p.yaml:5:11: warning: system_prompt.sections.identiy.id" in strict.out + strict.err


@pytest.mark.parametrize("sid", ["identity_extra", "step2", "review_policy", "tools2", "abc"])
def test_ids_that_are_not_near_misses_are_quiet(tmp_path, sid):
    body = HEAD + f"system_prompt:\n  sections:\n    - {{id: {sid}, text: Hi.}}\n"
    if sid == "step2":
        body = body.replace("    - {id: step2", "    - {id: step1, text: One.}\n    - {id: step2")
    write_files(tmp_path, {"p.yaml": body})
    assert [w.code for w in compile_profile(tmp_path / "p.yaml").warnings] == []


def test_merging_into_an_existing_section_is_no_near_miss(tmp_path):
    write_files(tmp_path, {"p.yaml": HEAD + "system_prompt:\n  sections:\n    - {id: identity, text: Me.}\n"})
    assert compile_profile(tmp_path / "p.yaml").warnings == ()


@pytest.mark.parametrize(
    "word,expected",
    [("identiy", "identity"), ("identitty", "identity"), ("idnetity", "identity"), ("identitx", "identity"),
     ("tool-list", "tool_list"), ("rule", "rules"), ("rules", None), ("step3", None), ("xyz", None),
     ("rulesets", None)],
)
def test_near_miss_finds_one_edit(word, expected):
    names = NearMiss(["identity", "tool_list", "rules", "step1", "step2"] + [f"n{i}" for i in range(1000)])
    assert names.typo_of(word) == expected


def test_hints_over_many_names_still_find_one_edit():
    names = NearMiss([f"section_{i}" for i in range(5000)] + ["identity"])
    assert names.hint("identiy") == "did you mean `identity`?"
    assert names.hint("zzzzzz") is None


# --------------------------------------------------------------------------- the user's own file


def test_a_replaced_schema_is_reported_at_the_users_key(tmp_path, cli):
    """The default's offline `fill` names `Critical Context`; the overlay's schema lacks it.
    The problem used to stand in the installed default.yaml (summary.offline.fill.4.heading)."""
    body = HEAD + "summary:\n  schema:\n    - heading: Goal\n    - heading: Next Steps\n"
    write_files(tmp_path, {"p.yaml": body})
    with pytest.raises(PipelineError) as err:
        compile_profile(tmp_path / "p.yaml")
    problems = err.value.problems
    assert problems and all(p.location.file.endswith("p.yaml") for p in problems)
    assert {(p.location.line, p.key) for p in problems} == {(4, "summary.schema")}
    critical = next(p for p in problems if "Critical Context" in p.message)
    assert "summary.offline.fill." in critical.message and "default.yaml:" in critical.message
    assert "write summary.offline.fill in this file too" in critical.hint


def test_a_fill_heading_written_by_the_user_is_reported_where_written(tmp_path):
    body = HEAD + "summary:\n  offline:\n    empty: '-'\n    fill:\n      - {heading: Goals, sources: [requests]}\n"
    write_files(tmp_path, {"p.yaml": body})
    with pytest.raises(PipelineError) as err:
        compile_profile(tmp_path / "p.yaml")
    [problem] = err.value.problems
    assert problem.key == "summary.offline.fill.0.heading" and problem.location.line == 7
    assert problem.hint == "did you mean `Goal`?"


# --------------------------------------------------------------------------- explain a removed key


def test_explain_says_which_overlay_removed_a_section(cli, tmp_path):
    team = "builtin:examples/team"  # the shipped file, whichever way the package is installed

    run = cli("explain", team, "system_prompt.sections.other_tools")
    assert run.code == 0
    assert run.out == f"system_prompt.sections.other_tools: removed by builtin:examples/team:30:7 (`remove: true`)\n"
    deeper = cli("explain", team, "system_prompt.sections.other_tools.text", "--format", "json")
    doc = json.loads(deeper.out)
    assert doc["values"] == [] and doc["dropped"]["how"] == "removed"
    assert (doc["dropped"]["by"]["line"], doc["dropped"]["by"]["col"]) == (30, 7)


def test_explain_of_a_key_a_replaced_section_dropped(cli, tmp_path):
    body = HEAD + "system_prompt:\n  sections:\n    - {id: rules, replace: true, kind: text, text: None.}\n"
    write_files(tmp_path, {"p.yaml": body})
    assert cli("explain", "default", "system_prompt.sections.rules.rules.0.from").code == 0
    run = cli("explain", "p.yaml", "system_prompt.sections.rules.rules.0.from")
    assert run.code == 0
    assert run.out == ("system_prompt.sections.rules.rules.0.from: not set: section `system_prompt.sections.rules` "
                       "was replaced by p.yaml:5:19 (`replace: true`)\n")


def test_explain_of_a_key_that_never_existed_is_still_a_usage_error(cli):
    run = cli("explain", "default", "system_prompt.sections.nope")
    assert run.code == 2 and "no key `system_prompt.sections.nope`" in run.err


def test_a_section_removed_and_added_again_is_explained_normally(cli, tmp_path):
    write_files(tmp_path, {
        "a.yaml": HEAD + "system_prompt:\n  sections:\n    - {id: cwd, remove: true}\n",
        "b.yaml": "extends: a.yaml\nname: b\nsystem_prompt:\n  sections:\n    - {id: cwd, text: Here.}\n",
    })
    run = cli("explain", "b.yaml", "system_prompt.sections.cwd.text")
    assert run.code == 0 and run.out == 'b.yaml:5:23: system_prompt.sections.cwd.text = "Here."\n'


# --------------------------------------------------------------------------- the model's window


def test_model_window_flags_a_keep_that_makes_every_turn_compact(cli, tmp_path):
    write_files(tmp_path, {"p.yaml": HEAD + "compaction:\n  keep_recent_tokens: 40000\n"})
    assert cli("validate", "p.yaml").code == 0  # the profile names no window: nothing to check
    run = cli("validate", "p.yaml", "--model-window", "50000")
    assert run.code == 1
    text = run.out + run.err
    assert "p.yaml:4:3: compaction.keep_recent_tokens: keep_recent_tokens (40000) must be below the compaction " \
           "threshold of a 50000-token model window (--model-window): 50000 - reserve_tokens 16384 = 33616" in text
    assert "every compaction would find nothing to summarize" in text
    assert cli("validate", "p.yaml", "--model-window", "200000").code == 0


def test_model_window_for_a_runtime(tmp_path):
    write_files(tmp_path, {"p.yaml": HEAD + "compaction:\n  keep_recent_tokens: 40000\n"})
    pipeline = compile_profile(tmp_path / "p.yaml")
    [problem] = pipeline.window_problems(50000, "claude-x")
    assert problem.severity == "error" and problem.key == "compaction.keep_recent_tokens"
    assert "50000-token model window (claude-x)" in problem.message
    assert pipeline.window_problems(1_000_000) == []


def test_a_window_problem_of_a_built_in_value_is_located_at_the_flag(cli, tmp_path):
    """keep_recent_tokens comes from builtin:default: the problem stands at --model-window and
    says so, never at the built-in's installed file (site-packages when installed)."""
    write_files(tmp_path, {"p.yaml": HEAD})
    run = cli("validate", "p.yaml", "--model-window", "20000")
    assert run.code == 1 and "default.yaml" not in run.out + run.err
    assert (run.out + run.err).startswith(
        "--model-window: compaction.keep_recent_tokens: keep_recent_tokens (20000) must be below the compaction "
        "threshold of a 20000-token model window (--model-window): 20000 - reserve_tokens 16384 = 3616; "
        "this value comes from builtin:default (")


def test_a_window_problem_is_located_at_the_users_part_of_the_rule(cli, tmp_path):
    """The profile's own window (the user's value) against the built-in's keep_recent_tokens:
    located at the window in the user's file; a value the user set is located where it is."""
    write_files(tmp_path, {"w.yaml": HEAD + "summarizer:\n  context_window: 30000\n",
                           "k.yaml": HEAD + "summarizer:\n  context_window: 30000\ncompaction:\n  keep_recent_tokens: 20000\n"})
    run = cli("validate", "w.yaml")
    assert run.code == 1 and "default.yaml" not in run.out + run.err
    assert (run.out + run.err).startswith("w.yaml:4:3: compaction.keep_recent_tokens: keep_recent_tokens (20000) must "
                                          "be below the compaction threshold context_window - reserve_tokens = 13616; "
                                          "this value comes from builtin:default (")
    run = cli("validate", "k.yaml")
    assert run.code == 1 and (run.out + run.err).startswith("k.yaml:6:3: compaction.keep_recent_tokens: ")
    assert "builtin:default" not in run.out + run.err


def test_a_runtimes_window_problem_of_a_built_in_value_has_no_file(tmp_path):
    [problem] = compile_profile("default").window_problems(20000, "claude-x")
    assert problem.location is None and problem.message.endswith("this value comes from builtin:default")
    write_files(tmp_path, {"p.yaml": HEAD + "compaction:\n  keep_recent_tokens: 40000\n"})
    [problem] = compile_profile(tmp_path / "p.yaml").window_problems(50000, "claude-x")
    assert problem.location.file.endswith("p.yaml") and "builtin" not in problem.message


@pytest.mark.parametrize("value", ["0", "-5", "lots", "200000000"])
def test_model_window_must_be_a_sane_number(cli, value):
    with pytest.raises(SystemExit) as stop:
        cli("validate", "default", "--model-window", value)
    assert stop.value.code == 2


# --------------------------------------------------------------------------- template sources


def test_a_missing_relative_template_source_is_an_error(tmp_path, cli):
    write_files(tmp_path, {"p.yaml": HEAD + "templates:\n  sources: [project, promts]\n"})
    with pytest.raises(PipelineError) as err:
        compile_profile(tmp_path / "p.yaml")
    [problem] = err.value.problems
    assert problem.severity == "error" and problem.key == "templates.sources.1"
    assert cli("validate", "p.yaml").code == 1


def test_a_missing_absolute_template_source_is_a_warning_and_fails_strict(tmp_path, cli):
    missing = tmp_path / "elsewhere"
    write_files(tmp_path, {"p.yaml": HEAD + f"templates:\n  sources: [project, '{missing}']\n"})
    [warning] = compile_profile(tmp_path / "p.yaml").warnings
    assert warning.key == "templates.sources.1" and warning.code == "profile.template-source-missing"
    assert cli("validate", "p.yaml").code == 0
    assert cli("validate", "--strict", "p.yaml").code == 1


BROKEN = "---\ndescription: [unclosed\n---\nHello $1\n"


def test_a_broken_template_file_fails_validate_strict(tmp_path, cli):
    write_files(tmp_path, {"p.yaml": HEAD + "templates:\n  sources: [prompts]\n", "prompts/bad.md": BROKEN,
                           "prompts/ok.md": "Review $1\n"})
    ok, strict = cli("validate", "p.yaml"), cli("validate", "--strict", "p.yaml")
    assert ok.code == 0 and "bad.md:2:" in ok.out + ok.err
    assert strict.code == 1


def test_templates_strict_fails_on_a_broken_template_file(tmp_path, cli):
    write_files(tmp_path, {"prompts/bad.md": BROKEN, "prompts/ok.md": "Review $1\n"})
    assert cli("templates", "--templates-dir", "prompts").code == 0
    run = cli("templates", "--templates-dir", "prompts", "--strict")
    assert run.code == 1 and "bad.md:2:" in run.err and "/ok" in run.out


def test_templates_strict_passes_clean_files_and_infos(tmp_path, cli):
    write_files(tmp_path, {"prompts/ok.md": "Review $1 and $99\n"})  # $99 is an info
    run = cli("templates", "--templates-dir", "prompts", "--strict")
    assert run.code == 0 and "info:" in run.err
    assert cli("templates", "--templates-dir", "nowhere", "--strict").code == 1
