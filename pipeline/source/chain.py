"""Following ``extends:`` from a profile to its bases.

``extends:`` names a path (relative to the file that says it) or ``builtin:NAME`` (a
profile shipped in ``configs/``). The chain is read top first; a file that appears
twice is a cycle, reported with the whole chain (``a.yaml -> b.yaml -> a.yaml``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pipeline.errors import Location, Problem, ProfileError
from pipeline.resources import BUILTIN, builtin_path, suggest_builtin
from pipeline.resources import builtin_profiles as builtin_names
from pipeline.source.reader import load
from pipeline.source.tree import Map, Scalar

#: Longest ``extends:`` chain accepted.
MAX_CHAIN = 32
@dataclass(frozen=True)
class Layer:
    """One file of an ``extends:`` chain, parsed."""

    label: str  # how the file is named in messages
    real: str  # its resolved path, for cycle detection
    tree: Map


def builtin_of(file: str) -> str | None:
    """``builtin:NAME`` when ``file`` (a location's file, as messages show it) is a shipped
    profile, else None: a problem found there is not in a file the user can edit."""
    if file.startswith(BUILTIN) and file[len(BUILTIN) :] in builtin_names():
        return file
    return _builtins_by_real_path().get(os.path.realpath(file))


@lru_cache(maxsize=1)
def _builtins_by_real_path() -> dict[str, str]:
    return {os.path.realpath(path): BUILTIN + name for name, path in builtin_names().items()}


def shown_file(file: str) -> str:
    """A file as review output names it: ``builtin:NAME`` for a shipped profile (never its
    ``site-packages`` path), else relative to the working directory when inside it, as
    ``pipeline validate`` names files."""
    from pipeline.resources import display_path

    builtin = builtin_of(file)
    if builtin is not None:
        return builtin
    return display_path(Path(file)) if os.path.isabs(file) else file


def shown_location(location: Location) -> Location:
    """``location`` with its file named by :func:`shown_file` (``builtin:default:57:7``)."""
    if not location.file:
        return location
    return Location(shown_file(location.file), location.line, location.col)


def read_chain(path: Path, label: str) -> list[Layer]:
    """Every file of the chain that starts at ``path``, the file itself first."""
    layers: list[Layer] = []
    while True:
        real = os.path.realpath(path)
        if any(layer.real == real for layer in layers):
            raise ProfileError(_cycle(layers, label))
        layers.append(Layer(label, real, _load(path, label)))
        target = _extends(layers[-1])
        if target is None:
            return layers
        if len(layers) >= MAX_CHAIN:
            raise ProfileError(
                Problem(f"`extends:` chain longer than {MAX_CHAIN} files", target.span.location, key="extends", code="profile.bad-extends")
            )
        path, label = _resolve(target, path, layers[-1].label)


def _load(path: Path, label: str) -> Map:
    """A file's tree; unchanged files (same size and mtime) are parsed once per process.

    Trees are immutable, so overlays that all extend the same base share its parse.
    """
    try:
        stat = path.stat()
    except (OSError, ValueError):
        return load(path, label)  # the reader reports why
    return _load_unchanged(os.path.realpath(path), label, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=64)
def _load_unchanged(real: str, label: str, mtime_ns: int, size: int) -> Map:
    return load(Path(real), label)


def _extends(layer: Layer) -> Scalar | None:
    entry = layer.tree.entries.get("extends")
    if entry is None or (isinstance(entry.node, Scalar) and entry.node.value is None):
        return None
    node = entry.node
    if not isinstance(node, Scalar) or not isinstance(node.value, str) or not node.value.strip():
        raise ProfileError(
            Problem(
                "`extends` must be a path or `builtin:NAME`",
                node.span.location,
                key="extends",
                hint="for example `extends: builtin:default` or `extends: ../base.yaml`",
                code="profile.bad-extends",
            )
        )
    return node


def _resolve(node: Scalar, parent: Path, parent_label: str) -> tuple[Path, str]:
    target, span = str(node.value).strip(), node.span
    if target.startswith(BUILTIN):
        return builtin_path(target[len(BUILTIN) :], span.location, key="extends")
    path = Path(target).expanduser()
    if not path.is_absolute():
        path = parent.parent / path
        label = os.path.normpath(os.path.join(os.path.dirname(parent_label), target))
    else:
        label = str(path)
    what = _not_a_file(path)
    if what is not None:
        raise ProfileError(
            Problem(f"`extends` target {label} {what}", span.location, key="extends", hint=_builtin_hint(target),
                    code="profile.bad-extends")
        )
    return path, label


def _not_a_file(path: Path) -> str | None:
    """Why ``path`` cannot be an ``extends`` target (None when it is a regular file)."""
    import stat

    from pipeline.files import describe_os_error

    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "does not exist"
    except (OSError, ValueError) as err:
        reason = describe_os_error(err) if isinstance(err, OSError) else "the path cannot be used"
        return f"cannot be read: {reason}"
    if stat.S_ISREG(mode):
        return None
    return "is a directory" if stat.S_ISDIR(mode) else "is not a regular file"


def _builtin_hint(target: str) -> str | None:
    stem = Path(target).stem
    if stem in builtin_names():
        return f"did you mean `builtin:{stem}`?"
    return suggest_builtin(stem)


def _cycle(layers: list[Layer], label: str) -> Problem:
    chain = " -> ".join([layer.label for layer in layers] + [label])
    node = _extends(layers[-1])
    return Problem(f"`extends` cycle: {chain}", node.span.location if node else Location(label), key="extends", code="profile.extends-cycle")
