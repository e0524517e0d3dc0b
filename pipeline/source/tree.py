"""The positioned YAML tree: plain values that remember where they were written.

The reader turns a YAML file into :class:`Map`, :class:`Seq` and :class:`Scalar`
nodes; the merger combines the trees of an ``extends:`` chain; :func:`flatten` turns
the result into plain Python data (what the pydantic models validate) plus a
:class:`SourceMap` from key paths to the places that set them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Union

from pipeline.errors import Location

Key = Union[str, int]
Path = tuple[Key, ...]


@dataclass(frozen=True)
class Span:
    """Where a node starts (1-based line and column) and, for scalars, its source text.

    ``source`` is the exact text of the scalar in the file (quotes, escapes and block
    indicators included); it lets the compiler point at a ``${name}`` inside it.
    """

    file: str
    line: int | None  # None (with ``col``) for a value set by a flag or an override
    col: int | None
    source: str | None = None
    style: str | None = None

    @property
    def location(self) -> Location:
        return Location(self.file, self.line, self.col)


@dataclass(frozen=True)
class Scalar:
    value: object
    span: Span


@dataclass(frozen=True)
class Entry:
    """One ``key: value`` pair of a mapping; ``key_span`` is where the key is written."""

    key_span: Span
    node: "Node"


@dataclass(frozen=True)
class Map:
    entries: dict[str, Entry]
    span: Span


@dataclass(frozen=True)
class Seq:
    items: tuple["Node", ...]
    span: Span


Node = Union[Scalar, Map, Seq]


@dataclass(frozen=True)
class SourceEntry:
    """Where one value of the merged profile was set: the value, and its key if any."""

    value: Span
    key: Span | None = None


@dataclass(frozen=True)
class Dropped:
    """A section an overlay removed (``remove: true``) or replaced (``replace: true``), and where."""

    how: str  # "removed" or "replaced"
    span: Span


@dataclass(frozen=True)
class SourceMap:
    """Key path -> :class:`SourceEntry` for every value of a (merged) profile.

    Paths are tuples of keys and list indices into the merged data, e.g.
    ``("compaction", "reserve_tokens")`` or ``("system_prompt", "sections", 3, "item")``.
    ``files`` lists the profile files involved, the file asked for first.
    ``dropped`` names the sections (``("system_prompt", "sections", ID)``) an overlay
    removed or replaced, with where it said so.
    """

    entries: dict[Path, SourceEntry] = field(default_factory=dict)
    files: tuple[str, ...] = ()
    dropped: dict[Path, Dropped] = field(default_factory=dict)

    def get(self, path: Path) -> SourceEntry | None:
        return self.entries.get(tuple(path))

    def nearest(self, path: Path) -> tuple[Path, SourceEntry] | None:
        """The entry of ``path`` or of its closest ancestor that has one."""
        path = tuple(path)
        while True:
            entry = self.entries.get(path)
            if entry is not None:
                return path, entry
            if not path:
                return None
            path = path[:-1]

    def value_location(self, path: Path) -> Location | None:
        found = self.nearest(path)
        return found[1].value.location if found else None

    def key_location(self, path: Path) -> Location | None:
        """Where the key of ``path`` is written (falls back to the value, then ancestors)."""
        found = self.nearest(path)
        if found is None:
            return None
        entry = found[1]
        return (entry.key or entry.value).location

    def key_text(self, path: Path) -> str | None:
        """The key of ``path`` as the file writes it (``rules+`` for a merged ``rules``), if known."""
        entry = self.entries.get(tuple(path))
        return entry.key.source if entry is not None and entry.key is not None else None

    def __iter__(self) -> Iterator[Path]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)


def flatten(node: Node) -> tuple[object, SourceMap]:
    """Plain data (dicts, lists, scalars) and the source map of a positioned tree."""
    entries: dict[Path, SourceEntry] = {}
    data = _flatten(node, (), None, entries)
    files = tuple(dict.fromkeys(entry.value.file for entry in entries.values()))
    return data, SourceMap(entries, files)


def _flatten(node: Node, path: Path, key_span: Span | None, out: dict[Path, SourceEntry]) -> object:
    out[path] = SourceEntry(node.span, key_span)
    if isinstance(node, Map):
        return {k: _flatten(e.node, path + (k,), e.key_span, out) for k, e in node.entries.items()}
    if isinstance(node, Seq):
        return [_flatten(item, path + (i,), None, out) for i, item in enumerate(node.items)]
    return node.value
