"""The repository's profile setting (pipeline/cli/_repo_profile.py): found upward to the git root,
recorded by init in pyproject.toml when there is one, located errors when malformed, --force keeps
an edited profile."""

from __future__ import annotations

import pytest

from pipeline.cli import main


def _setup(tmp_path, setting: str, name: str = ".context-pipeline.toml"):
    (tmp_path / ".git").mkdir()
    (tmp_path / "p.yaml").write_text("extends: builtin:default\nname: p\ncompaction:\n  reserve_tokens: 20000\n")
    (tmp_path / name).write_text(setting)


@pytest.mark.parametrize("setting, where", [
    ('profile = "nope.yaml"\n', ".context-pipeline.toml:1:11: profile: no profile file `nope.yaml`"),
    ("profile = 3\n", ".context-pipeline.toml:1:11: profile: must be a non-empty text"),
    ('profil = "p.yaml"\n', ".context-pipeline.toml:1:10: profil: unknown key (did you mean `profile`?)"),
    ('profile = "p.yaml\n', ".context-pipeline.toml:1:"),
])
def test_a_malformed_setting_is_a_located_error(tmp_path, monkeypatch, capsys, setting, where):
    _setup(tmp_path, setting)
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert main(["render"]) == 1
    err = capsys.readouterr().err
    assert where in err and "Traceback" not in err


def test_found_upward_in_pyproject_and_used_by_the_commands(tmp_path, monkeypatch, capsys):
    _setup(tmp_path, '[project]\nname = "x"\n\n[tool.context-pipeline]\nprofile = "p.yaml"\n', "pyproject.toml")
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert main(["explain", "compaction.reserve_tokens"]) == 0
    assert "compaction.reserve_tokens = 20000" in capsys.readouterr().out
    assert main(["validate"]) == 0
    assert main(["diff", "default"]) == 1
    assert "16384 -> 20000" in capsys.readouterr().out


def test_an_export_from_a_sub_folder_goes_to_the_repositorys_root(tmp_path, monkeypatch, capsys):
    _setup(tmp_path, 'profile = "p.yaml"\n')
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "src" / "pkg")
    assert main(["export", "pi"]) == 0
    assert "in " + str(tmp_path) + ":" in capsys.readouterr().out
    assert '"reserveTokens": 20000' in (tmp_path / ".pi" / "settings.json").read_text()
    assert not (tmp_path / "src" / "pkg" / ".pi").exists()
    assert main(["export", "pi", "--check"]) == 0  # the check, from the same folder, sees that export
    assert main(["export", "pi", "--project", "."]) == 0  # --project still names the folder
    assert (tmp_path / "src" / "pkg" / ".pi" / "settings.json").exists()


def test_not_looked_up_past_the_git_root(tmp_path, monkeypatch, capsys):
    _setup(tmp_path, 'profile = "p.yaml"\n')
    (tmp_path / "inner" / ".git").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "inner")
    assert main(["explain", "compaction.reserve_tokens"]) == 1  # no repository profile here: read as a PROFILE
    assert "no such profile file" in capsys.readouterr().err
    assert main(["explain", "default", "compaction.reserve_tokens"]) == 0
    assert "16384" in capsys.readouterr().out


def test_init_records_in_pyproject_and_force_keeps_the_edited_profile(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert main(["init", str(tmp_path), "--install", "cp==0.1"]) == 0
    assert (tmp_path / "pyproject.toml").read_text() == \
        '[project]\nname = "x"\n\n[tool.context-pipeline]\n# the profile `pipeline export`, `validate`, `render`, ' \
        '`diff` and `explain` use when none is given\nprofile = "agent-profiles/team.yaml"\n'
    assert not (tmp_path / ".context-pipeline.toml").exists()
    profile = tmp_path / "agent-profiles" / "team.yaml"
    edited = profile.read_text() + "# ours\n"
    profile.write_text(edited)
    capsys.readouterr()
    assert main(["init", str(tmp_path), "--force", "--install", "cp==0.1"]) == 0
    assert (tmp_path / "agent-profiles" / "team.yaml.bak").read_text() == edited
    assert "team.yaml.bak" in capsys.readouterr().err
    assert "# ours" not in profile.read_text()
    assert (tmp_path / "pyproject.toml").read_text().count("[tool.context-pipeline]") == 1
