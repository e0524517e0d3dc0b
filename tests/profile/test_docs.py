"""docs/profile.md mentions every key of the profile language."""

from __future__ import annotations

from conftest import ROOT
from pipeline.model import Profile, introspect


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
