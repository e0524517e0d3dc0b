"""Every profile shipped in configs/ compiles cleanly and points editors at the schema."""

from __future__ import annotations

import copy
import os
import pickle
from pathlib import Path

import pytest

from conftest import ROOT, run_process
from pipeline import compile_profile
from pipeline.compiler import fingerprint
from pipeline.resources import builtin_profiles

PROFILES = sorted((ROOT / "configs").rglob("*.yaml"))
SCHEMA_COMMENT = "# yaml-language-server: $schema="


def test_there_are_profiles():
    names = {p.relative_to(ROOT / "configs").as_posix() for p in PROFILES}
    assert {"default.yaml", "minimal.yaml", "examples/team.yaml"} <= names


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_profile_compiles_without_warnings(path: Path):
    pipeline = compile_profile(path)
    assert pipeline.warnings == ()
    assert len(pipeline.fingerprint) == 64


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_profile_names_the_shipped_schema(path: Path):
    """The `$schema` line names configs/profile.schema.json by a path relative to the
    profile, and configs/ is installed as pipeline/configs/ with that file in it, so the
    line resolves in a checkout and after `pip install` alike."""
    first = path.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith(SCHEMA_COMMENT)
    target = (path.parent / first[len(SCHEMA_COMMENT) :]).resolve()
    assert target == (ROOT / "configs" / "profile.schema.json").resolve()


def test_the_schema_is_shipped_beside_the_profiles():
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib

    from pipeline.model.schema import schema_json
    from pipeline.resources import data_dir

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert project["package-dir"]["pipeline.configs"] == "configs"
    assert "profile.schema.json" in project["package-data"]["pipeline.configs"]
    for copy in (data_dir("configs") / "profile.schema.json", ROOT / "docs" / "profile.schema.json"):
        assert copy.read_text(encoding="utf-8") == schema_json(), f"run `pipeline schema -o {copy}`"


def test_validate_configs_exits_zero():
    run = run_process("validate", "configs/")
    assert (run.code, run.out, run.err) == (0, "5 profiles ok\n", "")  # nothing skipped: all are profiles


def test_builtins_by_name_and_prefix():
    assert set(builtin_profiles()) >= {"default", "minimal"}
    for name in ("default", "builtin:default", "minimal", "builtin:minimal"):
        pipeline = compile_profile(name)
        assert pipeline.profile.name == name.removeprefix("builtin:")
        assert os.path.samefile(pipeline.origin, builtin_profiles()[pipeline.profile.name])


def test_team_overlay_is_the_default_with_four_changes():
    base = compile_profile("default").profile
    team = compile_profile(ROOT / "configs/examples/team.yaml").profile
    base_ids = [s.id for s in base.system_prompt.sections]
    team_ids = [s.id for s in team.system_prompt.sections]
    expected = [i for i in base_ids if i != "other_tools"]
    expected.insert(expected.index("project_context"), "review_policy")
    assert team_ids == expected
    assert team.system_prompt.sections[team_ids.index("rules")].heading.raw == "Team rules:"
    assert (team.compaction.reserve_tokens, team.compaction.keep_recent_tokens) == (24000, 30000)
    assert team.summary == base.summary


def test_compiled_pipeline_cannot_be_changed():
    pipeline = compile_profile("default")
    tools = pipeline.profile.system_prompt.tools
    assert "read" in tools
    for change in (lambda: tools.__setitem__("x", None), lambda: tools.update(x=None), lambda: tools.pop("read"),
                   lambda: tools.clear(), lambda: setattr(pipeline.profile.compaction, "reserve_tokens", 1)):
        with pytest.raises((TypeError, ValueError)):
            change()
    copied = copy.deepcopy(pipeline.profile)
    assert copied == pipeline.profile and pickle.loads(pickle.dumps(pipeline.profile)) == pipeline.profile
    with pytest.raises(TypeError):
        copied.system_prompt.tools["x"] = None
    assert fingerprint(pipeline.profile) == pipeline.fingerprint
