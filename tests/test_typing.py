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
    assert surface_llm <= {"pipeline.llm.convert", "pipeline.llm.convert_reply", "pipeline.llm.convert_types",
                           "pipeline.llm.openai_chat"}  # wire conversions: bare Mapping of decoded JSON


def test_mypy_targets_the_lowest_python_the_package_claims():
    assert CONFIG["project"]["requires-python"] == ">=" + CONFIG["tool"]["mypy"]["python_version"]
    assert "mypy>=1.10" in CONFIG["project"]["optional-dependencies"]["test"]
