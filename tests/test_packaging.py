"""Every package of the source tree is in pyproject's package list: `pip install .` (not editable,
as CI and users install) ships it (pipeline/proxy was once left out, and only an editable install ran it)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _toml(path: Path) -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    return tomllib.loads(path.read_text(encoding="utf-8"))


def test_every_package_is_listed():
    listed = set(_toml(ROOT / "pyproject.toml")["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "pipeline").rglob("__init__.py")
             if "__pycache__" not in p.parts}
    assert found <= listed, sorted(found - listed)
