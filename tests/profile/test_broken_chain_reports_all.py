"""When `extends:` or an overlay cannot be merged, the file's own mistakes are still
reported in the same run (every problem in a file in one run)."""

import pytest

from pipeline import PipelineError, compile_profile


def _messages(tmp_path, text: str) -> list[str]:
    path = tmp_path / "p.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PipelineError) as err:
        compile_profile(path)
    return [str(p).split(": ", 1)[1] for p in err.value.problems]


def test_bad_extends_and_field_errors_in_one_run(tmp_path):
    found = _messages(
        tmp_path,
        "extends: 5\nname: x\ncompaction:\n  reserv_tokens: 5\n  keep_recent_tokens: \"a\"\n"
        "system_prompt:\n  sections:\n    - id: cwd\n      kind: text\n      text: \"${cwdd}\"\n",
    )
    assert found == [
        "extends: `extends` must be a path or `builtin:NAME` (for example `extends: builtin:default` or `extends: ../base.yaml`)",
        "compaction.reserv_tokens: unknown key (did you mean `reserve_tokens`?)",
        'compaction.keep_recent_tokens: expected a whole number, got the text "a"',
        "system_prompt.sections.cwd.text: unknown variable `${cwdd}` (did you mean `${cwd}`?)",
    ]


def test_bad_placement_and_field_error_in_one_run(tmp_path):
    found = _messages(
        tmp_path,
        "extends: builtin:default\ncompaction:\n  reserv_tokens: 5\n"
        "system_prompt:\n  sections:\n    - id: new\n      before: nope\n      text: hi\n",
    )
    assert len(found) == 2
    assert found[0] == "compaction.reserv_tokens: unknown key (did you mean `reserve_tokens`?)"
    assert found[1].startswith("system_prompt.sections.new.before: unknown section id `nope`")


def test_sections_without_kind_are_not_variable_checked_without_their_base(tmp_path):
    found = _messages(
        tmp_path,
        "extends: builtin:defualt\nsystem_prompt:\n  sections:\n    - id: tools\n      item: \"* ${name}\"\n",
    )
    assert found == ["extends: unknown built-in profile `builtin:defualt` (did you mean `builtin:default`?)"]
