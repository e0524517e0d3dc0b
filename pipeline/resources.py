"""Access to the data shipped with the package: grammars and built-in profiles.

In a wheel, ``grammar/`` and ``configs/`` are installed as ``pipeline/grammar`` and
``pipeline/configs`` (see ``[tool.setuptools.package-dir]``). In a source checkout or
an editable install they stay at the top level of the project, beside ``pipeline/``.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

_PROJECT_ROOT = Path(__file__).resolve().parent.parent


@cache
def data_dir(kind: str) -> Path:
    """The directory holding shipped data of one kind: ``"grammar"`` or ``"configs"``."""
    packaged = Path(__file__).resolve().parent / kind  # a wheel: pipeline/grammar, pipeline/configs
    if packaged.is_dir():
        return packaged
    try:
        installed = Path(str(resources.files(f"pipeline.{kind}")))
    except ModuleNotFoundError:
        installed = None
    if installed is not None and installed.is_dir():
        return installed
    return _PROJECT_ROOT / kind


def grammar_text(name: str) -> str:
    """The text of ``grammar/NAME``."""
    return (data_dir("grammar") / name).read_text(encoding="utf-8")


def builtin_profiles() -> dict[str, Path]:
    """Every shipped profile by name, mapped to its path. The name is the file's path under
    ``configs/`` without ``.yaml``: ``default``, ``minimal``, ``examples/team``."""
    root = data_dir("configs")
    return {p.relative_to(root).with_suffix("").as_posix(): p for p in sorted(root.rglob("*.yaml"))}
