"""An unclosed `${` in a profile text fails `validate --strict`, located at the `${`."""

from __future__ import annotations

from pathlib import Path

from pipeline.checks import unclosed_variables
from pipeline.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_the_scan_finds_only_unclosed_openings():
    assert unclosed_variables("- ${rule") == [2]
    assert unclosed_variables("- ${rule}") == []
    assert unclosed_variables("$${rule and ${ok} then ${x\n${y}") == [23]
    assert unclosed_variables("a $ b { c } $${") == []


def test_validate_strict_rejects_it_at_file_line_col(tmp_path, capsys):
    profile = tmp_path / "team.yaml"
    profile.write_text('extends: builtin:default\nsystem_prompt:\n  sections:\n    - id: rules\n      item: "- ${rule"\n')
    assert main(["validate", "--strict", str(profile)]) == 1
    out = capsys.readouterr().out
    assert f"{profile}:5:16: warning: system_prompt.sections.rules.item: unclosed `${{`" in out
    assert main(["validate", "--strict", "--format", "json", str(profile)]) == 1
    assert '"code": "profile.unclosed-variable"' in capsys.readouterr().out


def test_in_a_block_scalar_it_is_located_on_its_own_line(tmp_path, capsys):
    profile = tmp_path / "team.yaml"
    profile.write_text("extends: builtin:default\nsystem_prompt:\n  sections:\n    - id: rules\n      item: |\n"
                       "        - ok ${rule}\n        - ${rule and $${ literal\n")
    assert main(["validate", "--strict", str(profile)]) == 1
    assert f"{profile}:7:11: warning:" in capsys.readouterr().out


def test_the_shipped_profiles_have_none(capsys):
    assert main(["validate", "--strict", str(ROOT / "configs")]) == 0
