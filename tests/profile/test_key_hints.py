"""Did-you-mean for every key (issue 34, item 2) and hints for values of the wrong type (item 3)."""

from __future__ import annotations

from conftest import write_files


def test_did_you_mean_for_overlay_keys(tmp_path, cli):
    """Item 2: the keys the merge takes away (overlay directives, `extends`) get a hint too."""
    body = ("extnds: builtin:default\nname: mine\nsystem_prompt:\n  sections:\n"
            "    - {id: extra, befor: rules, text: hi}\n    - {id: cwd, remvoe: true}\n    - {id: rules, repalce: true}\n")
    write_files(tmp_path, {"p.yaml": body})
    hints = [line.rsplit(" (", 1)[1] for line in cli("validate", "p.yaml").lines if "unknown key" in line]
    assert hints == ["did you mean `extends`?)", "did you mean `before`?)", "did you mean `remove`?)",
                     "did you mean `replace`?)"]


def test_numbers_and_booleans_written_as_text_get_a_hint(tmp_path, cli):
    """Item 3: a quoted number or boolean says how to write it."""
    write_files(tmp_path, {"p.yaml": "extends: builtin:default\nname: mine\ncompaction:\n"
                                     "  reserve_tokens: \"24000\"\n  enabled: \"false\"\n"})
    lines = [line for line in cli("validate", "p.yaml").lines if line.startswith("p.yaml:")]
    assert lines == [
        'p.yaml:4:19: compaction.reserve_tokens: expected a whole number, got the text "24000" '
        "(write 24000 without quotes)",
        'p.yaml:5:12: compaction.enabled: expected true or false, got the text "false" (write false without quotes)',
    ]


def test_digit_separators_are_text_as_in_yaml_1_2_core(tmp_path, cli):
    """Item 3: `24_000` is text in YAML 1.2 core (as an editor's YAML server reads it), so a
    number key refuses it, located, with the number to write."""
    write_files(tmp_path, {"p.yaml": "extends: builtin:default\nname: mine\ncompaction:\n  reserve_tokens: 24_000\n"})
    result = cli("validate", "--strict", "p.yaml")
    assert result.code == 1
    assert ('p.yaml:4:19: compaction.reserve_tokens: expected a whole number, got the text "24_000" '
            "(write 24000: YAML 1.2 has no `_` digit separators, so `24_000` is text)") in result.lines


def test_text_that_is_no_number_gets_no_number_hint(tmp_path, cli):
    write_files(tmp_path, {"p.yaml": "extends: builtin:default\nname: mine\ncompaction:\n  reserve_tokens: lots\n"})
    line = next(line for line in cli("validate", "p.yaml").lines if "reserve_tokens" in line)
    assert line.endswith('got the text "lots"')
