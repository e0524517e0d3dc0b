"""`pipeline diff` settings: long texts show where they differ, list insertions are insertions."""

from __future__ import annotations

from pathlib import Path

from pipeline import compile_profile
from pipeline.report.diff import ABSENT, settings_changes, show_change

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = (ROOT / "configs" / "default.yaml").read_text(encoding="utf-8")
IDENTITY_END = "edits and new files to get the user's task done."


def _profile(tmp_path: Path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return compile_profile(path).profile


def test_an_edit_near_the_end_of_a_long_text_is_visible():
    old = "x" * 300 + " the user's task done."
    new = "x" * 300 + " the user's job done."
    shown_old, shown_new = show_change(old, new, 100)
    assert "task" in shown_old and "job" in shown_new and shown_old != shown_new
    assert shown_old.startswith("…") and len(shown_old) <= 102 and len(shown_new) <= 102


def test_an_edit_near_the_start_and_short_values():
    old, new = "a" + "y" * 300, "b" + "y" * 300
    shown_old, shown_new = show_change(old, new, 100)
    assert shown_old.startswith('"a') and shown_new.startswith('"b') and shown_old.endswith("…")
    assert show_change(1, 2, 100) == ("1", "2")
    assert show_change(ABSENT, "x", 100) == ("(unset)", '"x"')


def test_a_long_added_value_is_cut_not_lost():
    shown_old, shown_new = show_change(ABSENT, "z" * 500, 100)
    assert shown_old == "(unset)" and shown_new.endswith("…") and len(shown_new) <= 102


def test_diff_text_shows_the_end_edit(tmp_path, capsys):
    from pipeline.cli import main

    new = tmp_path / "new.yaml"
    new.write_text(DEFAULT.replace("get the user's task done.", "get the user's job done."), encoding="utf-8")
    assert main(["diff", str(ROOT / "configs" / "default.yaml"), str(new)]) == 1
    line = next(l for l in capsys.readouterr().out.splitlines() if "sections.identity.text" in l)
    old_side, new_side = line.split(" -> ")
    assert "task done" in old_side and "job done" in new_side


def test_a_list_insertion_is_one_added_entry(tmp_path):
    old = _profile(tmp_path, "old.yaml", DEFAULT)
    inserted = DEFAULT.replace("  schema:\n    - heading: Goal\n", "  schema:\n    - heading: Inserted\n    - heading: Goal\n", 1)
    new = _profile(tmp_path, "new.yaml", inserted)
    changes = settings_changes(old, new)
    assert [(c.key, c.status) for c in changes] == [("summary.schema.0", "added")]
    assert changes[0].new["heading"] == "Inserted"


def test_a_list_deletion_and_an_edit_in_place(tmp_path):
    old = _profile(tmp_path, "old.yaml", DEFAULT)
    goal = DEFAULT[DEFAULT.index("    - heading: Goal\n"):DEFAULT.index("    - heading: Constraints")]
    removed = DEFAULT.replace(goal, "", 1)
    changes = settings_changes(old, _profile(tmp_path, "a.yaml", removed))
    assert [(c.key, c.status) for c in changes] == [("summary.schema.0", "removed")]
    assert changes[0].old["heading"] == "Goal"
    renamed = DEFAULT.replace("    - heading: Goal\n", "    - heading: Aim\n", 1)
    changes = settings_changes(old, _profile(tmp_path, "b.yaml", renamed))
    assert [(c.key, c.old, c.new) for c in changes] == [("summary.schema.0.heading", "Goal", "Aim")]


def test_sections_on_one_side_and_plain_lists(tmp_path):
    old = _profile(tmp_path, "old.yaml", DEFAULT)
    overlay = ("extends: builtin:default\nname: t\nsystem_prompt:\n  default_tools: [read, bash]\n"
               "  sections:\n    - {id: extra, text: More.}\n    - {id: cwd, remove: true}\n")
    changes = {c.key: c for c in settings_changes(old, _profile(tmp_path, "t.yaml", overlay))}
    assert changes["system_prompt.default_tools"].new == ["read", "bash"]
    assert changes["system_prompt.sections.extra"].status == "added"
    assert changes["system_prompt.sections.extra"].new == {"id": "extra", "text": "More."}
    assert changes["system_prompt.sections.cwd"].status == "removed"
    assert changes["name"].new == "t"
