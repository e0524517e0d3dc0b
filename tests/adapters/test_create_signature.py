"""Each adapter's create() names its keyword parameters (no ``**bridge``), documents them,
and docs/integrations.md says summaries are offline unless ``client=`` is given."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from pipeline.adapters._bridge import ContextBridge

DOC = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"
ADAPTERS = [("pipeline.adapters.pydantic_ai", "ProfileCapability"), ("pipeline.adapters.langchain", "ProfileMiddleware"),
            ("pipeline.adapters.openai_agents", "ProfileSession")]


def keywords(function) -> dict[str, object]:
    return {name: p.default for name, p in inspect.signature(function).parameters.items()
            if p.kind is inspect.Parameter.KEYWORD_ONLY}


@pytest.mark.parametrize(("module", "name"), ADAPTERS)
def test_create_takes_the_bridges_keywords_by_name(module, name):
    import importlib

    create = getattr(importlib.import_module(module), name).create
    parameters = inspect.signature(create).parameters.values()
    assert not [p for p in parameters if p.kind is inspect.Parameter.VAR_KEYWORD]
    assert keywords(create) == keywords(ContextBridge.__init__)
    doc = inspect.getdoc(create)
    for keyword in keywords(create):
        assert f"``{keyword}``" in doc, keyword
    assert "offline" in doc


def test_the_doc_lists_every_keyword_and_says_summaries_are_offline_without_a_client():
    text = DOC.read_text(encoding="utf-8")
    table = text.split("`create(profile, session, *, ...)`", 1)[1].split("\n\n", 2)[1]
    for keyword in keywords(ContextBridge.__init__):
        assert f"`{keyword}`" in table, keyword
    assert "**Summaries are made offline unless you pass `client=`**" in text
