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
