"""Layout semantics of ``render_sections`` beyond pi's own shape (that one is checked by the vectors).

Each test writes its own small profile; the expected strings follow from the ``Section``
rules (separator + open + heading line + body + close; first section drops its separator;
a list without items renders ``empty`` or nothing).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pipeline import compile_profile
from pipeline.prompt import ContextFile, RenderContext, Skill, render_sections, render_system_prompt
from pipeline.scenario import Scenario

BASE = (Path(__file__).resolve().parent / "pi_shaped.yaml").read_text(encoding="utf-8")
TAIL = BASE[BASE.index("\ntemplates:") :]


def profile(tmp_path: Path, sections_yaml: str, head: str = ""):
    path = tmp_path / "p.yaml"
    path.write_text(f"version: 1\nname: t\nsystem_prompt:\n{head}  sections:\n{sections_yaml}{TAIL}", encoding="utf-8")
    return compile_profile(path).profile


LIST = """\
    - id: intro
      text: "Intro ${cwd}"
    - id: files
      kind: context_files
      separator: "\\n--\\n"
      open: "<files>\\n"
      heading: "Files:"
      item: "* ${path} = ${content}"
      close: "\\n</files>"
    - id: outro
      text: Bye
"""


def test_list_without_items_and_empty_is_left_out(tmp_path: Path) -> None:
    pipe = profile(tmp_path, LIST)
    assert render_system_prompt(pipe, RenderContext(cwd="/w")) == "Intro /w\n\nBye"
    files = (ContextFile("/a", "A"), ContextFile("/b", "${cwd}"))
    got = render_system_prompt(pipe, RenderContext(cwd="/w", context_files=files))
    assert got == "Intro /w\n--\n<files>\nFiles:\n* /a = A\n* /b = ${cwd}\n</files>\n\nBye"


def test_first_rendered_section_drops_its_separator(tmp_path: Path) -> None:
    pipe = profile(tmp_path, LIST.replace('      text: "Intro ${cwd}"', '      text: "Intro"\n      when: {present: [skills]}'))
    got = render_sections(pipe, RenderContext(cwd="/w", context_files=(ContextFile("/a", "A"),)))
    assert [(s.id, s.separator) for s in got] == [("files", ""), ("outro", "\n\n")]


def test_empty_text_stands_in_for_no_items(tmp_path: Path) -> None:
    pipe = profile(tmp_path, LIST.replace("      close:", '      empty: "(no files)"\n      close:'))
    assert render_system_prompt(pipe, RenderContext(cwd="/w")) == "Intro /w\n--\n<files>\nFiles:\n(no files)\n</files>\n\nBye"


CONDITIONS = """\
    - id: custom
      kind: custom_prompt
    - id: main
      replaced_by_custom_prompt: true
      text: Main
    - id: rules
      kind: rules
      item: "- ${rule}"
      rules:
        - text: "  Fixed one  "
        - text: Only with guidelines from tools
          when: {present: [tool_guidelines]}
        - from: tool_guidelines
        - from: caller_guidelines
        - text: Only without append
          when: {absent: [append_prompt]}
        - text: Fixed one
    - id: skills
      kind: skills
      when: {tools_include: [read]}
      escape: xml
      open: "[${cwd}]"
      item: "${name}|${description}|${location}|${base_dir}"
"""


def test_custom_prompt_empty_is_absent_whitespace_is_present(tmp_path: Path) -> None:
    pipe = profile(tmp_path, CONDITIONS)
    assert render_system_prompt(pipe, RenderContext(cwd="/w", custom_prompt="")).startswith("Main\n\n")
    assert render_system_prompt(pipe, RenderContext(cwd="/w", custom_prompt=" ")).startswith(" \n\n- Fixed one")


def test_rules_conditions_trim_and_first_position(tmp_path: Path) -> None:
    pipe = profile(tmp_path, CONDITIONS)
    ctx = RenderContext(
        cwd="/w",
        tools=("bash", "edit"),
        tool_guidelines={"edit": (" E1 ", "E1", "", "Fixed one"), "read": ("not selected",)},
        guidelines=("E1", "C1 ", "Only without append"),
    )
    rules = {s.id: s for s in render_sections(pipe, ctx)}["rules"].text
    assert rules == "- Fixed one\n- Only with guidelines from tools\n- E1\n- C1\n- Only without append"
    with_append = {s.id: s for s in render_sections(pipe, ctx.replace(append_prompts=("x",)))}["rules"].text
    assert with_append.endswith("- C1\n- Only without append")  # the caller's copy keeps its place


def test_xml_escape_covers_item_values_only(tmp_path: Path) -> None:
    pipe = profile(tmp_path, CONDITIONS)
    skill = Skill("a&b", "<'\">", "/s/a&b/SKILL.md", "/s/a&b")
    got = {s.id: s for s in render_sections(pipe, RenderContext(cwd="/w&<x>", skills=(skill,)))}
    assert got["skills"].text == "[/w&<x>]a&amp;b|&lt;&apos;&quot;&gt;|/s/a&amp;b/SKILL.md|/s/a&amp;b"
    assert "skills" not in {s.id for s in render_sections(pipe, RenderContext(cwd="/w", tools=("bash",), skills=(skill,)))}


def test_default_tools_decide_conditions_when_tools_are_unset(tmp_path: Path) -> None:
    pipe = profile(tmp_path, CONDITIONS, head="  default_tools: [bash]\n")
    skill = Skill("s", "d", "/s/SKILL.md")
    assert "skills" not in {s.id for s in render_sections(pipe, RenderContext(cwd="/w", skills=(skill,)))}


def test_same_inputs_same_bytes_and_frozen_context(tmp_path: Path) -> None:
    pipe = profile(tmp_path, CONDITIONS)
    ctx = RenderContext(cwd="/w", tool_snippets={"read": "R"}, tool_guidelines={"read": ["x"]})
    assert render_system_prompt(pipe, ctx) == render_system_prompt(pipe, RenderContext.from_json(ctx.to_json()))
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.cwd = "/other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        ctx.tool_snippets["read"] = "changed"  # type: ignore[index]
    assert ctx.tool_guidelines["read"] == ("x",)
    assert hash(ctx) == hash(RenderContext.from_json(ctx.to_json())) and ctx == RenderContext.from_json(ctx.to_json())


def test_snippets_are_one_line_and_blank_ones_unlisted(tmp_path: Path) -> None:
    pipe = profile(tmp_path, '    - id: tools\n      kind: tool_list\n      item: "${name}=${snippet}"\n')
    ctx = RenderContext(cwd="/w", tools=("a", "b", "c"), tool_snippets={"a": " two\r\n  lines\t here ", "b": " \n "})
    assert render_system_prompt(pipe, ctx) == "a=two lines here"


def test_scenario_catalog_fills_only_what_is_missing(tmp_path: Path) -> None:
    pipe = profile(
        tmp_path,
        '    - id: tools\n      kind: tool_list\n      item: "${name}=${snippet}"\n',
        head="  tools:\n    read: {snippet: Catalog read, guidelines: [G]}\n    bash: {snippet: Catalog bash}\n",
    )
    scenario = Scenario(cwd="/w", tools=("read", "bash"), tool_snippets={"bash": "Mine"})
    assert render_system_prompt(pipe, scenario.to_context(pipe)) == "read=Catalog read\nbash=Mine"
    bare = Scenario(cwd="/w", tools=("read", "bash"), catalog=False)
    assert render_system_prompt(pipe, bare.to_context(pipe)) == ""
    assert scenario.to_context(pipe).tool_guidelines == {"read": ("G",)}
