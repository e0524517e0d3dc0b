"""The package is typed for its users (PEP 561) and its public surface is checked strictly.

`.ci/run` runs `mypy` with pyproject's [tool.mypy]; these tests keep that configuration
honest: the marker ships, and no module of the strict public surface has error codes
switched off.
"""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # the `tomli` dependency
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
OVERRIDES = CONFIG["tool"]["mypy"]["overrides"]
SURFACE = {"pipeline", "pipeline.facade", "pipeline.errors", "pipeline.runtime.request", "pipeline.runtime.host",
           "pipeline.runtime.events", "pipeline.llm.*"}


def modules(override: dict) -> set[str]:
    names = override["module"]
    return {names} if isinstance(names, str) else set(names)


def test_py_typed_ships_as_package_data():
    assert (ROOT / "pipeline" / "py.typed").is_file()
    assert "py.typed" in CONFIG["tool"]["setuptools"]["package-data"]["pipeline"]


def test_the_public_surface_is_strict_and_has_no_codes_switched_off():
    strict = [o for o in OVERRIDES if o.get("disallow_untyped_defs")]
    assert len(strict) == 1 and SURFACE <= modules(strict[0])
    assert strict[0]["disallow_any_generics"] and strict[0]["disallow_incomplete_defs"]
    relaxed = set().union(*(modules(o) for o in OVERRIDES if "disable_error_code" in o))
    surface_llm = {m for m in relaxed if m.startswith("pipeline.llm.")}
    assert not (SURFACE - {"pipeline.llm.*"}) & relaxed
    assert surface_llm <= {"pipeline.llm.wire.chat", "pipeline.llm.wire.anthropic", "pipeline.llm.wire.prepare",
                           "pipeline.llm.wire.reply", "pipeline.llm.wire.types", "pipeline.llm.openai_chat"}  # wire conversions: bare Mapping of decoded JSON


def test_mypy_targets_the_lowest_python_the_package_claims():
    assert CONFIG["project"]["requires-python"] == ">=" + CONFIG["tool"]["mypy"]["python_version"]
    assert "mypy>=1.10" in CONFIG["project"]["optional-dependencies"]["test"]


def _loose_returns(*classes: type) -> list[str]:
    """Public methods and properties of ``classes`` whose return is not annotated, or is ``Any``."""
    import inspect
    import re

    found = []
    for cls in classes:
        for name, member in inspect.getmembers(cls):
            function = member.fget if isinstance(member, property) else member
            if name.startswith("_") or not callable(function):
                continue
            returns = getattr(function, "__annotations__", {}).get("return")
            if returns is None or re.search(r"\bAny\b", str(returns)):
                found.append(f"{cls.__name__}.{name}")
    return found


def test_the_public_methods_a_host_calls_return_no_any():
    from pipeline.facade import Patches, Pipeline
    from pipeline.runtime.conversation import Conversation
    from pipeline.runtime.loop import Agent

    assert _loose_returns(Pipeline, Patches, Conversation, Agent) == []


def test_the_return_check_can_fail():
    from typing import Any

    class Loose:
        def typed(self) -> int:
            return 1

        def loose(self) -> Any:
            return 1

        def bare(self):
            return 1

    assert _loose_returns(Loose) == ["Loose.bare", "Loose.loose"]
