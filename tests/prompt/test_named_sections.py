"""The general layout features behind builtin:pi-1, on a small profile of their own: section
names and alternatives, tag wrapping, the join rule, caller sections under a declared name
rule (in place or appended), hidden tools and `selected_any`, snippets as given, forced prompts."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline import compile_profile
from pipeline.errors import PipelineError
from pipeline.prompt import RenderContext

PROFILE = """\
extends: builtin:minimal
name: named
system_prompt:
  join: " | "
  caller_sections: {pattern: "[a-z]+", reserved: [head], wrap: tag}
  patch: {changed: "now ${name}:", removed: "gone ${name}"}
  sections:
    - {id: custom, name: head, kind: custom_prompt}
    - {id: first, name: head, text: "FIRST"}
    - {id: second, name: head, text: "SECOND"}
    - id: tools
      kind: tool_list
      wrap: tag
      snippets: as_given
      item: "${name}=${snippet}"
      item_separator: ","
    - {id: via_read, name: loader, text: "READ", when: {tools_include: [read]}}
    - {id: via_any, name: loader, text: "ANY", when: {selected_any: [read]}}
    - {id: blank, text: ""}
    - {id: where, wrap: tag, text: "${cwd}"}
"""


@pytest.fixture(scope="module")
def pipe(tmp_path_factory) -> object:
    path = Path(tmp_path_factory.mktemp("named")) / "named.yaml"
    path.write_text(PROFILE, encoding="utf-8")
    minimal = compile_profile("minimal").profile.system_prompt.sections
    removals = "".join(f"    - {{id: {s.id}, remove: true}}\n" for s in minimal)
    path.write_text(path.read_text().replace("  sections:\n", "  sections:\n" + removals), encoding="utf-8")
    return compile_profile(path)


def render(pipe, **context) -> str:
    return pipe.render_system_prompt(RenderContext(cwd="/w", **context), catalog=False)


def test_alternatives_join_wrap_and_empty_sections(pipe) -> None:
    assert render(pipe, tools=("read",), tool_snippets={"read": " r  "}) == "FIRST | <tools>\nread= r  \n</tools> | READ | <where>\n/w\n</where>"
    assert render(pipe, custom_prompt="MINE", tools=()) == "MINE | <where>\n/w\n</where>"
    sections = pipe.render_sections(RenderContext(cwd="/w", tools=()))
    assert [(s.id, s.name) for s in sections] == [("first", "head"), ("where", "where")]


def test_hidden_tools_are_selected_but_not_declared(pipe) -> None:
    text = render(pipe, tools=("read", "bash"), hidden_tools=("read",), tool_snippets={"read": "r", "bash": "b"})
    assert "<tools>\nbash=b\n</tools> | ANY |" in text


def test_caller_sections_replace_in_place_or_come_last(pipe) -> None:
    text = render(pipe, tools=(), sections={"where": "HERE", "extra": "X", "skipped": ""})
    assert text == "FIRST | <where>\nHERE\n</where> | <extra>\nX\n</extra>"


@pytest.mark.parametrize("name", ["head", "Up", "a1", "x\n"])
def test_caller_section_names_follow_the_declared_rule(pipe, name: str) -> None:
    with pytest.raises(PipelineError) as err:
        render(pipe, sections={name: "x"})
    assert err.value.problems[0].code == "profile.bad-section-name"


def test_forced_prompt_replaces_everything(pipe) -> None:
    assert render(pipe, forced_prompt="") == "" and pipe.system_sections(RenderContext(cwd="/w", forced_prompt="F")) is None


def test_patch_framing_uses_the_profiles_words(pipe) -> None:
    before = pipe.system_sections(RenderContext(cwd="/a", tools=()))
    after = pipe.system_sections(RenderContext(cwd="/b", tools=(), sections={"note": "N"}))
    patch = pipe.patches.section_patch(before, after)
    assert pipe.patches.frame_patch(patch) == "now where:\n\n<where>\n/b\n</where>\n\nnow note:\n\n<note>\nN\n</note>"
    assert pipe.patches.frame_patch(pipe.patches.section_patch(after, before)) == "now where:\n\n<where>\n/a\n</where>\n\ngone note"
    assert pipe.patches.replay_prompt(before, [patch]) == "FIRST | <where>\n/b\n</where> | <note>\nN\n</note>"


def test_join_and_a_section_separator_do_not_mix(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("extends: builtin:pi-1\nname: p\nsystem_prompt:\n  sections:\n    - {id: cwd, separator: x}\n")
    with pytest.raises(PipelineError) as err:
        compile_profile(path)
    assert "separator" in str(err.value) and "cwd" in str(err.value)


def test_default_profile_renders_as_before_with_the_new_inputs_unused() -> None:
    default = compile_profile("default")
    context = RenderContext(cwd="/w")
    assert default.render_system_prompt(context) == default.render_system_prompt(context.replace(hidden_tools=()))
    assert default.system_sections(context) == {s.id: s.text for s in default.render_sections(context)}


def test_every_refused_name_is_reported_at_once(pipe) -> None:
    from pipeline.errors import ProfileError

    with pytest.raises(ProfileError) as err:
        render(pipe, sections={"Up": "x", "ok": "y", "head": "z"})
    assert [p.key for p in err.value.problems] == ["sections.Up", "sections.head"]
    assert "is reserved" in err.value.problems[1].message
