"""The adapters' packaging: an extra per framework, a clear error without it, no framework imported by the package."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ADAPTERS = {"pydantic_ai": ("pydantic_ai", "pydantic-ai"), "openai_agents": ("agents", "openai-agents"),
            "langchain": ("langchain", "langchain")}


@pytest.mark.parametrize("module", sorted(ADAPTERS))
def test_a_missing_framework_names_the_extra(module, monkeypatch):
    framework, extra = ADAPTERS[module]
    monkeypatch.setitem(sys.modules, framework, None)  # makes `import framework` fail
    for name in [m for m in sys.modules if m.startswith(framework + ".")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, f"pipeline.adapters.{module}", raising=False)
    with pytest.raises(ImportError, match=rf"pip install 'context-pipeline\[{extra}\]'"):
        importlib.import_module(f"pipeline.adapters.{module}")
    monkeypatch.delitem(sys.modules, f"pipeline.adapters.{module}", raising=False)


def test_the_package_imports_no_framework():
    code = ("import sys, pipeline.adapters; "
            "print(sorted(m for m in ('pydantic_ai', 'agents', 'langchain', 'langgraph') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == "[]"


def test_each_framework_is_an_extra_and_the_test_extra_pulls_them_in():
    tomllib = pytest.importorskip("tomllib", reason="Python 3.11+ reads TOML")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {"pydantic-ai", "openai-agents", "langchain"} <= set(extras)
    assert "context-pipeline[pydantic-ai,openai-agents,langchain]" in extras["test"]
