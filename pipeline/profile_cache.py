"""A cache of compiled built-in profiles, so a command's cold start does not read YAML.

Compiling a shipped profile (``default``, ``minimal``...) gives the same result every
time for the same code and the same files, so :func:`cached` keeps it as a pickle in
``$XDG_CACHE_HOME/context-pipeline/profiles/`` (else ``~/.cache/...``; never inside the
installed package). The key covers everything the result depends on: the package
version, Python's and pydantic's versions, the bytes of every shipped profile and
grammar, and the size and modification time of every module of the package (so an
edited checkout invalidates it too). A file whose key differs, that does not load, that
another user owns or that holds something else is ignored and written again; a cache
that cannot be written is simply not used. Only the profile front end
(:mod:`pipeline.compiler`) calls this, for built-in profiles without overrides.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any, Callable, Iterable

from pipeline.resources import data_dir

#: Bumped when what a cache file holds changes shape.
FORMAT = 1
_PACKAGE = Path(__file__).resolve().parent


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/context-pipeline`` (an absolute value only, as the XDG spec says), else ``~/.cache/context-pipeline``."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    return root / "context-pipeline"


def is_builtin(path: Path) -> bool:
    """Whether ``path`` is one of the shipped profiles."""
    try:
        return path.resolve().is_relative_to(data_dir("configs").resolve())
    except OSError:
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


def cached(label: str, compile: Callable[[], Any]) -> Any:
    """The compiled profile ``label`` from the cache, or ``compile()``'s result (then stored)."""
    try:
        key = _source_key()
    except OSError:
        return compile()
    path = cache_dir() / "profiles" / f"{hashlib.sha256(label.encode()).hexdigest()[:24]}.pickle"
    found = _read(path, label, key)
    if found is not None:
        return found
    compiled = compile()
    _write(path, (FORMAT, label, key, compiled))
    return compiled


def _read(path: Path, label: str, key: str) -> Any:
    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_uid != os.getuid():
                return None
            stored = pickle.load(handle)
    except Exception:  # missing, unreadable, corrupt or from other code: compile again
        return None
    if not (isinstance(stored, tuple) and len(stored) == 4 and stored[:3] == (FORMAT, label, key)):
        return None
    return stored[3]


def _write(path: Path, value: Any) -> None:
    """Write atomically (a temporary file renamed over the old one); never fail the caller."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".pickle")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as handle:
            pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temp, path)
    except Exception:
        Path(temp).unlink(missing_ok=True)


def _version() -> str:
    from pipeline.version import __version__

    return __version__


def _pydantic_version() -> str:
    from pydantic.version import VERSION

    return VERSION
