"""Access to the data shipped with the package: grammars and built-in profiles.

A profile argument names a file or a built-in (``builtin:NAME``, or a bare ``NAME`` that
is no file): :func:`resolve_profile` turns it into the file and the label messages show.

In a wheel, ``grammar/`` and ``configs/`` are installed as ``pipeline/grammar`` and
``pipeline/configs`` (see ``[tool.setuptools.package-dir]``). In a source checkout or
an editable install they stay at the top level of the project, beside ``pipeline/``.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from pipeline import files as bounded_files
from pipeline.errors import Location, Problem, ProfileError, did_you_mean

#: The prefix naming a shipped profile: ``builtin:default``.
BUILTIN = "builtin:"

_PROJECT_ROOT = Path(__file__).resolve().parent.parent


@cache
def data_dir(kind: str) -> Path:
    """The directory holding shipped data of one kind: ``"grammar"`` or ``"configs"``."""
    packaged = Path(__file__).resolve().parent / kind  # a wheel: pipeline/grammar, pipeline/configs
    if packaged.is_dir():
        return packaged
    from importlib import resources  # (not at the top: it imports tempfile, which a start does not need)

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


def display_path(path: Path) -> str:
    """A path as messages show it: relative to the working directory when inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return str(path) if rel.startswith("..") else rel


def builtin_path(name: str, location: Location | None = None, key: str | None = None) -> tuple[Path, str]:
    """The file and display label of ``builtin:NAME``; an unknown name is an error at ``location``."""
    builtins = builtin_profiles()
    if name not in builtins:
        hint = suggest_builtin(name) or "built-in profiles: " + ", ".join(sorted(builtins))
        raise ProfileError(Problem(f"unknown built-in profile `builtin:{name}`", location, key=key, hint=hint, code="profile.unknown-builtin"))
    path = builtins[name]
    return path, display_path(path)


def resolve_profile(path_or_name: str | os.PathLike) -> tuple[Path, str]:
    """A profile argument -> (file, label): an existing path, ``builtin:NAME`` or a bare built-in name."""
    text = os.fspath(path_or_name)
    if text.startswith(BUILTIN):
        return builtin_path(text[len(BUILTIN) :])
    path = Path(text)
    if not bounded_files.missing(path):
        return path, text  # the reader says what is wrong, if anything
    if text in builtin_profiles():
        return builtin_path(text)
    raise ProfileError(Problem("no such profile file", Location(text), hint=suggest_builtin(text), code="profile.unreadable"))


def suggest_builtin(name: str) -> str | None:
    """"did you mean `builtin:NAME`?" when ``name`` is close to a built-in profile's name,
    or is the last part of one (``team`` for ``examples/team``)."""
    names = builtin_profiles()
    by_stem = [n for n in names if n.rsplit("/", 1)[-1] == Path(name).stem and n != name]
    if len(by_stem) == 1:
        return f"did you mean `builtin:{by_stem[0]}`?"
    hint = did_you_mean(name, names)
    return hint.replace("`", "`builtin:", 1) if hint else None
