"""`pipeline validate DIR` checks the profiles in DIR and names the other YAML files it skipped;
a file named on the command line is always checked as a profile; success says how many."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.cli import main


def test_validate_dot_after_init_checks_the_profile_and_skips_the_hook(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    capsys.readouterr()
    assert main(["validate", "."]) == 0
    out, err = capsys.readouterr()
    assert out == "1 profile ok\n"
    assert "skipped 1 YAML file that is not a profile" in err and ".pre-commit-config.yaml" in err


def test_a_file_named_is_checked_as_a_profile(tmp_path, capsys):
    hook = tmp_path / "ci.yaml"
    hook.write_text("jobs:\n  build: {}\n", encoding="utf-8")
    assert main(["validate", str(hook)]) == 1
    out, _ = capsys.readouterr()
    assert "jobs" in out and "profile ok" not in out


def test_json_lists_the_skipped_files_and_a_folder_of_no_profiles_fails(tmp_path, capsys):
    (tmp_path / "team.yaml").write_text("extends: builtin:default\nname: team\n", encoding="utf-8")
    (tmp_path / "ci.yml").write_text("on: push\n", encoding="utf-8")
    assert main(["validate", str(tmp_path), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [Path(f["path"]).name for f in report["files"]] == ["team.yaml"]
    assert [Path(p).name for p in report["skipped"]] == ["ci.yml"]
    (tmp_path / "team.yaml").unlink()
    assert main(["validate", str(tmp_path)]) == 1
    assert "no profiles in this directory" in capsys.readouterr().err


def test_two_profiles_ok(tmp_path, capsys):
    for name in ("a", "b"):
        (tmp_path / f"{name}.yaml").write_text(f"extends: builtin:default\nname: {name}\n", encoding="utf-8")
    assert main(["validate", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "2 profiles ok\n"


def test_a_binary_file_named_as_a_profile_shows_none_of_its_bytes(tmp_path, capsys):
    for name in ("ls.yaml", "ls"):
        binary = tmp_path / name
        binary.write_bytes(Path("/bin/ls").read_bytes())
        assert main(["validate", str(binary)]) == 1
        out, err = capsys.readouterr()
        assert out == f"{binary}:1:8: binary file (contains a NUL byte)\n", out
        assert "ELF" not in out + err
