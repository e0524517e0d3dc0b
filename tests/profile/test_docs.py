"""docs/profile.md mentions every key of the profile language."""

from __future__ import annotations

from conftest import ROOT
from pipeline.model import introspect
from pipeline.model.profile import Profile


def _model(annotation):
    annotation = introspect.unwrap(annotation)
    return annotation if introspect.is_model(annotation) else None


def _keys(model, prefix=""):
    """Every key path of the language: `*` for list entries, `NAME` for mapping keys."""
    for name, info in model.model_fields.items():
        key = prefix + (info.alias or name)
        yield key
        annotation = introspect.unwrap(info.annotation)
        if _model(annotation):
            yield from _keys(_model(annotation), key + ".")
        elif _model(introspect.item_type(annotation)):
            yield from _keys(_model(introspect.item_type(annotation)), key + ".*.")
        elif _model(introspect.value_type(annotation)):
            yield from _keys(_model(introspect.value_type(annotation)), key + ".NAME.")


def test_every_key_is_documented():
    docs = (ROOT / "docs" / "profile.md").read_text(encoding="utf-8")
    keys = list(_keys(Profile))
    assert len(keys) > 100
    assert [key for key in keys if f"`{key}`" not in docs] == []


def test_the_validate_paragraph_says_what_the_tool_does_with_other_yaml(tmp_path, cli):
    """Issue 34, item 6: a directory's YAML files that are not profiles are skipped and named,
    and docs/profile.md says so (with the tool's own line), not that every file is a profile."""
    import re

    (tmp_path / "team.yaml").write_text("extends: builtin:default\n")
    (tmp_path / "ci.yml").write_text("on: push\njobs: {}\n")
    run = cli("validate", ".")
    assert run.code == 0
    [skipped] = [line for line in run.err.splitlines() if line.startswith("skipped")]
    docs = " ".join((ROOT / "docs" / "profile.md").read_text(encoding="utf-8").split())
    assert "every file found is treated as a profile" not in docs
    assert re.sub(r"\./ci\.yml$", "", skipped) in docs
