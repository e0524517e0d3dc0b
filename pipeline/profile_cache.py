"""A cache of compiled built-in profiles, so a command's cold start does not read YAML.

Compiling a shipped profile (``default``, ``minimal``...) gives the same result every
time for the same code and the same files, so :func:`cached` keeps it as a pickle in
``$XDG_CACHE_HOME/context-pipeline/profiles/`` (else ``~/.cache/...``; never inside the
installed package). The key covers everything the result depends on: the package
version, Python's and pydantic's versions (pydantic's read from its ``version.py``, not
imported), the bytes of every shipped profile and grammar, and the size and
modification time of every module of the package (so an edited checkout invalidates it
too). A file whose key differs, that does not load, that another user owns or that
holds something else is ignored and written again; a cache that cannot be written is
simply not used. The profile front end (:mod:`pipeline.compiler`) calls :func:`cached`,
for built-in profiles without overrides; the template scanner, generated from the grammar,
is kept the same way (:func:`cached_value`), so a start does not import Lark.

A file holds two pickles one after the other: a head ``(FORMAT, label, key, (render
plan, warnings, run plan))`` and the whole compiled profile. :func:`cached_plan` reads the
head only, so ``pipeline render`` gets the :class:`~pipeline.model.render_plan.RenderPlan`
and a warm ``pipeline run`` the :class:`~pipeline.model.run_plan.RunPlan` without
unpickling (or defining) the profile's pydantic models.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import sys
from functools import cache
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Optional, TypeVar

from pipeline.resources import data_dir, resolve_profile

#: Bumped when what a cache file holds changes shape.
FORMAT = 3
_PACKAGE = Path(__file__).resolve().parent

T = TypeVar("T")


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/context-pipeline`` (an absolute value only, as the XDG spec says), else ``~/.cache/context-pipeline``."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    return root / "context-pipeline"


def is_builtin(path: Path) -> bool:
    """Whether ``path`` is one of the shipped profiles."""
    try:
        return path.resolve().is_relative_to(data_dir("configs").resolve())
    except (OSError, RuntimeError):  # RuntimeError: a symbolic-link loop (Python < 3.13); the reader names it
        return False


def fingerprint(files: Iterable[Path], modules: Iterable[Path]) -> str:
    """sha256 over ``files``' bytes and ``modules``' sizes and modification times, with
    the versions the compiled result depends on."""
    digest = hashlib.sha256(f"{FORMAT}\0{_version()}\0{sys.version}\0{_pydantic_version()}".encode())
    for path in files:
        digest.update(f"\0{path}\0".encode())
        digest.update(path.read_bytes())
    for path in modules:
        stat = path.stat()
        digest.update(f"\0{path}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    return digest.hexdigest()


@cache
def _source_key() -> str:
    configs, grammar = data_dir("configs"), data_dir("grammar")
    files = sorted([*configs.rglob("*.yaml"), *grammar.glob("*.lark")])
    return fingerprint(files, sorted(_PACKAGE.rglob("*.py")))


def cached(label: str, compile: Callable[[], Any], variant: str | None = "") -> Any:
    """The compiled profile ``label`` from the cache, or ``compile()``'s result (then stored).

    ``variant`` names the overrides laid over the built-in (their canonical JSON; ``""``:
    none; ``None``: not cacheable, compiled every time). At most :data:`MAX_VARIANTS`
    variants are kept: writing one more removes the least recently written.
    """
    if variant is None:
        return compile()
    head = lambda compiled: (compiled.render_plan, compiled.warnings, compiled.run_plan)  # noqa: E731
    if not variant:
        return _cached(label, _path(label), compile, head)
    label = f"{label} with {variant}"
    return _cached(label, _path(label, _VARIANT_PREFIX), compile, head, written=_prune_variants)


def cached_value(label: str, make: Callable[[], T]) -> T:
    """Any other value that depends on the package's code and files alone (the template
    scanner generated from the grammar), kept the same way: from the cache, or ``make()``'s."""
    return _cached(label, _path(label), make, lambda value: None)


def _cached(label: str, path: Path, make: Callable[[], T], head: Callable[[T], Any],
            written: Callable[[], None] = lambda: None) -> T:
    try:
        key = _source_key()
    except OSError:
        return make()
    found = _read(path, label, key, whole=True)
    if found is not None:
        return found
    value = make()
    _write(path, (FORMAT, label, key, head(value)), value)
    written()
    return value


class Plans(NamedTuple):
    """The head of a cache file: what ``render`` and a run read, and the profile's warnings."""

    render: Any
    warnings: tuple[Any, ...]
    run: Any


def variant(overrides: Optional[Mapping[str, Any]], origin: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """The cache variant of ``overrides`` laid over a built-in (``origin``: the flag that set
    each): their canonical JSON; ``""`` for none; None for a value JSON cannot hold exactly
    (then the result is not cached)."""
    if not overrides:
        return ""
    names = [(origin or {}).get(key, f"<override {key}>") for key in overrides]
    try:
        return json.dumps([list(overrides.items()), names], sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return None


def cached_plan(path_or_name: str, overrides: Optional[Mapping[str, Any]] = None,
                origin: Optional[Mapping[str, str]] = None) -> Optional[Plans]:
    """The :class:`Plans` of the built-in profile ``path_or_name`` (a name, ``builtin:NAME`` or
    a shipped file's path), with ``overrides`` (:func:`variant`), when the cache holds it,
    else None (then compile it; that fills the cache). Reads the file's head only: no profile
    model is loaded."""
    try:
        path, label = resolve_profile(path_or_name)
        kind = variant(overrides, origin)
        if not is_builtin(path) or kind is None:
            return None
        if kind:
            label = f"{label} with {kind}"
        head = _read(_path(label, _VARIANT_PREFIX if kind else ""), label, _source_key(), whole=False)
        return None if head is None else Plans(*head)
    except Exception:  # not a built-in, or nothing usable stored: the compiler says what is wrong
        return None


#: How many compiled profiles with overrides are kept (each a few hundred kilobytes).
MAX_VARIANTS = 32
_VARIANT_PREFIX = "v-"


def _path(label: str, prefix: str = "") -> Path:
    return cache_dir() / "profiles" / f"{prefix}{hashlib.sha256(label.encode()).hexdigest()[:24]}.pickle"


def _prune_variants() -> None:
    """Keep the :data:`MAX_VARIANTS` most recently written variant files."""
    try:
        found = sorted(((p.stat().st_mtime, p) for p in (cache_dir() / "profiles").glob(f"{_VARIANT_PREFIX}*.pickle")),
                       reverse=True)
        for _, stale in found[MAX_VARIANTS:]:
            stale.unlink(missing_ok=True)
    except OSError:
        pass


def _read(path: Path, label: str, key: str, *, whole: bool) -> Any:
    """The head's value, or with ``whole`` the compiled profile after it; None when unusable."""
    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_uid != os.getuid():
                return None
            head = pickle.load(handle)
            if not (isinstance(head, tuple) and len(head) == 4 and head[:3] == (FORMAT, label, key)):
                return None
            return pickle.load(handle) if whole else head[3]
    except Exception:  # missing, unreadable, corrupt or from other code: compile again
        return None


def _write(path: Path, *values: Any) -> None:
    """Write ``values`` as consecutive pickles, atomically (a temporary file renamed over
    the old one); never fail the caller."""
    import tempfile  # only a compile writes: a start that reads the cache does not import it

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".pickle")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as handle:
            for value in values:
                pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temp, path)
    except Exception:
        Path(temp).unlink(missing_ok=True)


def _version() -> str:
    from pipeline.version import __version__

    return __version__


def _pydantic_version() -> str:
    """The text of pydantic's ``version`` module, read, not imported (importing pydantic is
    what a cached render plan spares)."""
    from importlib.util import find_spec

    spec = find_spec("pydantic")
    if spec is None or not spec.submodule_search_locations:
        return "?"
    return (Path(spec.submodule_search_locations[0]) / "version.py").read_text(encoding="utf-8")
