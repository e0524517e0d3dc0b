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


def test_a_trigger_of_no_form_is_said_without_the_forms_class_names(tmp_path, cli):
    """Item 2: the compaction trigger is one of three forms (a union): a misspelt key gets a
    did-you-mean over every form's keys, located at the key, and a wrong value inside the
    form the user wrote is that form's one error, not six lines naming pydantic's classes."""
    head = "extends: builtin:default\nname: mine\ncompaction:\n  trigger:"
    write_files(tmp_path, {
        "typo.yaml": head + "\n    percent_of_windwo: 30\n",
        "value.yaml": head + "\n    percent_of_window: 200\n",
        "scalar.yaml": head + " 5\n",
        "two.yaml": head + " {reserve_tokens: 1, tokens: 2}\n",
        "none.yaml": head + " {}\n",
        "foreign.yaml": head + " {foo: 1, tokens: 5}\n",
    })
    run = cli("validate", "typo.yaml", "value.yaml", "scalar.yaml", "two.yaml", "none.yaml", "foreign.yaml")
    forms = "`reserve_tokens`, `percent_of_window`, `tokens`"
    assert run.code == 1
    assert [line for line in run.lines if ": compaction." in line] == [
        "typo.yaml:5:5: compaction.trigger.percent_of_windwo: unknown key (did you mean `percent_of_window`?)",
        "value.yaml:5:24: compaction.trigger.percent_of_window: must be at most 100, got 200",
        f"scalar.yaml:4:12: compaction.trigger: expected a mapping, got the number 5 (write a mapping with one of {forms})",
        f"two.yaml:4:3: compaction.trigger: expected exactly one of the keys {forms}, got `reserve_tokens`, `tokens` "
        "(keep one of them)",
        f"none.yaml:4:3: compaction.trigger: expected exactly one of the keys {forms}, got none (write one of {forms})",
        f"foreign.yaml:4:13: compaction.trigger.foo: unknown key (expected one of {forms})",
    ]
    assert "Trigger" not in run.out + run.err


def test_a_template_source_mapping_gets_did_you_mean_for_its_keys_and_dialect(tmp_path, cli):
    """Item 2: a template source is a name or a `{dialect, path}` mapping; the mapping's keys
    and its dialect get their hints like every other key."""
    head = "extends: builtin:default\nname: mine\ntemplates:\n  sources:\n"
    write_files(tmp_path, {"p.yaml": head + "    - {pth: ./p, dialect: claude-code}\n"
                                            "    - {path: ./q, dialct: claude-code}\n"
                                            "    - {path: ./r, dialect: claud-code}\n"})
    hints = [line for line in cli("validate", "p.yaml").lines if line.startswith("p.yaml:")]
    assert "p.yaml:5:8: templates.sources.0.pth: unknown key (did you mean `path`?)" in hints
    assert "p.yaml:6:19: templates.sources.1.dialct: unknown key (did you mean `dialect`?)" in hints
    assert ("p.yaml:7:28: templates.sources.2.dialect: invalid value `claud-code` (did you mean `claude-code`?)"
            in hints)


def test_a_misspelt_append_key_is_named_as_written_and_its_hint_appends(tmp_path, cli):
    """Item 2 with item 1's append form: `rulse+:` is named `rulse+` and its did-you-mean is
    `rules+` (a hint of `rules` would make the overlay replace the built-in rules); a hint
    never offers `+` on a key that holds no list."""
    head = "extends: builtin:default\nname: mine\n"
    write_files(tmp_path, {
        "rules.yaml": head + "system_prompt:\n  sections:\n    - id: rules\n      rulse+:\n        - text: a\n",
        "tools.yaml": head + "system_prompt:\n  default_tool+: [grep]\n",
        "text.yaml": head + "system_prompt:\n  sections:\n    - {id: extra, txet+: [a]}\n",
    })
    lines = [line for line in cli("validate", "rules.yaml", "tools.yaml", "text.yaml").lines if "unknown key" in line]
    assert lines == [
        "rules.yaml:6:7: system_prompt.sections.rules.rulse+: unknown key (did you mean `rules+`?)",
        "tools.yaml:4:3: system_prompt.default_tool+: unknown key (did you mean `default_tools+`?)",
        "text.yaml:5:19: system_prompt.sections.extra.txet+: unknown key",
    ]
