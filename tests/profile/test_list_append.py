"""Lists in overlays (issue 34, item 1): `KEY+:` appends to the inherited list, and a
`rules:` that silently drops the inherited `from:` entries is a warning."""

from __future__ import annotations

import json

from conftest import write_files
from pipeline import compile_profile
from pipeline.cli._init_files import PROFILE as STARTER

HEAD = "extends: builtin:default\nname: mine\n"
ONE_RULE = "system_prompt:\n  sections:\n    - id: rules\n      {key}:\n        - text: Run the tests.\n"


def _rules(pipeline) -> list[tuple]:
    section = next(s for s in pipeline.profile.system_prompt.sections if s.id == "rules")
    return [(r.text.raw if r.text is not None else None, r.from_) for r in section.rules]


def _default_rules() -> list[tuple]:
    return _rules(compile_profile("builtin:default"))


def test_append_keeps_every_inherited_rule(tmp_path):
    write_files(tmp_path, {"p.yaml": HEAD + ONE_RULE.format(key="rules+")})
    pipeline = compile_profile(tmp_path / "p.yaml")
    assert _rules(pipeline) == _default_rules() + [("Run the tests.", None)]
    assert pipeline.warnings == ()


def test_replacing_rules_warns_where_and_names_the_append_form(tmp_path, cli):
    write_files(tmp_path, {"p.yaml": HEAD + ONE_RULE.format(key="rules")})
    strict = cli("validate", "--strict", "p.yaml")
    assert strict.code == 1
    assert strict.lines == [
        "p.yaml:6:7: warning: system_prompt.sections.rules.rules: this list replaces the inherited `rules` and "
        "drops its `from: tool_guidelines`, `from: caller_guidelines` entries (write `rules+:` to add to the "
        "inherited list; to drop them on purpose, replace the section (`replace: true`))"
    ]
    assert cli("validate", "p.yaml").code == 0  # a warning, not an error
    assert _rules(compile_profile(tmp_path / "p.yaml")) == [("Run the tests.", None)]  # lists still replace


def test_no_warning_when_the_from_entries_are_kept_or_the_section_replaced(tmp_path, cli):
    kept = ONE_RULE.format(key="rules") + "        - from: tool_guidelines\n        - from: caller_guidelines\n"
    replaced = ("system_prompt:\n  sections:\n    - {id: rules, replace: true, kind: rules, item: '- ${rule}', "
                "rules: [{text: Run the tests.}]}\n")
    write_files(tmp_path, {"kept.yaml": HEAD + kept, "replaced.yaml": HEAD + replaced})
    run = cli("validate", "--strict", "kept.yaml", "replaced.yaml")
    assert (run.code, run.out) == (0, "2 profiles ok\n")


def test_append_on_other_lists_and_new_sections(tmp_path):
    body = HEAD + (
        "system_prompt:\n  default_tools+: [grep]\n  sections:\n"
        "    - {id: extra, kind: rules, item: '${rule}', rules+: [{text: a}]}\n"
        "summary:\n  schema+:\n    - heading: Risks\n"
    )
    write_files(tmp_path, {"p.yaml": body})
    pipeline = compile_profile(tmp_path / "p.yaml")
    base = compile_profile("builtin:default").profile
    assert pipeline.profile.system_prompt.default_tools == (*base.system_prompt.default_tools, "grep")
    assert [s.heading for s in pipeline.profile.summary.schema_] == [s.heading for s in base.summary.schema_] + ["Risks"]
    extra = next(s for s in pipeline.profile.system_prompt.sections if s.id == "extra")
    assert [r.text.raw for r in extra.rules] == ["a"]


def test_append_in_an_overlay_of_an_overlay(tmp_path):
    write_files(tmp_path, {
        "mid.yaml": HEAD + ONE_RULE.format(key="rules+"),
        "top.yaml": "extends: mid.yaml\n" + ONE_RULE.format(key="rules+").replace("Run the tests.", "Be brief."),
    })
    assert _rules(compile_profile(tmp_path / "top.yaml"))[-2:] == [("Run the tests.", None), ("Be brief.", None)]


def test_wrong_uses_of_the_append_form_are_located_errors(tmp_path, cli):
    both = "system_prompt:\n  default_tools: [read]\n  default_tools+: [grep]\n"
    sections = "system_prompt:\n  sections+:\n    - {id: x, text: a}\n"
    not_a_list = "system_prompt:\n  default_tools+: grep\n"
    write_files(tmp_path, {"both.yaml": HEAD + both, "sections.yaml": HEAD + sections, "scalar.yaml": HEAD + not_a_list})
    run = cli("validate", "both.yaml", "sections.yaml", "scalar.yaml")
    assert run.code == 1
    assert run.lines == [
        "both.yaml:5:3: system_prompt.default_tools+: `default_tools` and `default_tools+` are both written "
        "(write `default_tools:` to replace the inherited list or `default_tools+:` to add to it, not both)",
        "sections.yaml:4:3: system_prompt.sections+: `sections+` is not needed: sections merge by id "
        "(write `sections:`; a new section without `before`/`after` goes at the end)",
        "scalar.yaml:4:19: system_prompt.default_tools+: `default_tools+` adds to a list: its value must be a list "
        "(write `default_tools+: [...]`)",
    ]


def test_the_editor_schema_knows_the_append_forms():
    from pipeline.model.schema import editor_schema

    defs = editor_schema()["$defs"]
    for name in ("Section", "OverlaySection"):
        assert defs[name]["properties"]["rules+"]["type"] == "array"
    assert "default_tools+" in defs["OverlaySystemPrompt"]["properties"]
    assert "sections+" not in defs["OverlaySystemPrompt"]["properties"]
    assert json.dumps(defs["OverlaySection"]["properties"]["rules+"]["items"]) == '{"$ref": "#/$defs/OverlayRule"}'


def test_the_starter_says_it_and_its_example_validates_strictly(tmp_path, cli):
    starter = STARTER.format(name="team", dir="agent-profiles")
    assert "`rules+:` adds to it" in starter
    example = starter.split("# For example:\n", 1)[1]
    uncommented = "\n".join(line[2:] for line in example.splitlines()).replace("text: ...", "text: Run the tests.")
    write_files(tmp_path, {"p.yaml": HEAD + uncommented + "\n"})
    assert cli("validate", "--strict", "p.yaml").out == "1 profile ok\n"
    assert _rules(compile_profile(tmp_path / "p.yaml")) == _default_rules() + [("Run the tests.", None)]

