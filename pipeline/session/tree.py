"""The entry tree: lookup, paths, children, common ancestors, labels, integrity.

Entries form a tree through ``parentId``. Lookups follow pi: when an id occurs twice
the later entry wins; a ``parentId`` that names no entry ends the path there (the entry
acts as a root). Unlike pi, which would loop forever on a ``parentId`` cycle, paths
stop at the first repeated entry; :meth:`SessionTree.problems` reports duplicates,
dangling parents and cycles with their lines.
"""

from __future__ import annotations

from typing import Iterator, Sequence

from pipeline.errors import Location, Problem
from pipeline.js import js_trim
from pipeline.session.entries import Entry, LabelEntry, SessionInfoEntry


class SessionTree:
    """An index over entries in file order; :meth:`add` keeps it current as entries are appended.

    While every entry is the child of the one before it (a session never branched: the
    first entry a root, ids unique), the tree is a *chain* and the path to its last entry
    is the entries in file order, given without a walk.
    """

    def __init__(self, entries: Sequence[Entry] = ()) -> None:
        self._entries: list[Entry] = []
        self._by_id: dict[str, Entry] = {}
        self._chain = True
        self._children: dict[str | None, list[Entry]] | None = None
        self._labels: dict[str, str] = {}
        self._name: str | None = None
        for entry in entries:
            self.add(entry)

    # ----------------------------------------------------------------- building

    def add(self, entry: Entry) -> None:
        """Index one more entry (file order)."""
        if self._chain:
            self._chain = self._extends_chain(entry)
        self._entries.append(entry)
        self._by_id[entry.id] = entry
        if self._children is not None:
            self._children.setdefault(entry.parent_id, []).append(entry)
        if isinstance(entry, LabelEntry):
            self._set_label(entry)
        elif isinstance(entry, SessionInfoEntry):
            self._name = js_trim(entry.name) if entry.name else None

    def _extends_chain(self, entry: Entry) -> bool:
        """``entry`` (not yet added) is a new id whose parent is the last entry (or, first, no parent)."""
        if entry.id in self._by_id:
            return False
        if not self._entries:
            return entry.parent_id is None
        last = self._entries[-1].id
        return bool(last) and entry.parent_id == last

    def _set_label(self, entry: LabelEntry) -> None:
        if entry.target_id is None:
            return
        if entry.label:
            self._labels[entry.target_id] = entry.label
        else:
            self._labels.pop(entry.target_id, None)

    # ----------------------------------------------------------------- lookup

    @property
    def entries(self) -> Sequence[Entry]:
        """All entries in file order (a read-only view)."""
        return _View(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._by_id

    def get(self, entry_id: str) -> Entry | None:
        """The entry with this id (the later one when an id is duplicated)."""
        return self._by_id.get(entry_id)

    @property
    def last_id(self) -> str | None:
        """The id of the last entry in file order (pi's leaf after loading)."""
        return self._entries[-1].id if self._entries else None

    # ----------------------------------------------------------------- navigation

    def path_to(self, entry_id: str | None) -> list[Entry]:
        """Entries from the root down to ``entry_id`` (inclusive); ``[]`` for None or an unknown id."""
        if self._chain and self._entries and entry_id == self._entries[-1].id and entry_id is not None:
            return list(self._entries)
        by_id = self._by_id
        current = by_id.get(entry_id) if entry_id is not None else None
        path: list[Entry] = []
        append, limit = path.append, len(by_id)
        while current is not None:
            append(current)
            parent = current.parent_id
            current = by_id.get(parent) if parent else None
            if len(path) > limit:  # longer than the tree: a parentId cycle
                return self._path_with_cycle(entry_id)
        path.reverse()
        return path

    def _path_with_cycle(self, entry_id: str | None) -> list[Entry]:
        """:meth:`path_to` stopping at the first repeated entry."""
        path: list[Entry] = []
        seen: set[int] = set()
        current = self._by_id.get(entry_id) if entry_id is not None else None
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            path.append(current)
            current = self._by_id.get(current.parent_id) if current.parent_id else None
        path.reverse()
        return path

    def children(self, entry_id: str | None) -> list[Entry]:
        """Direct children in file order; ``None`` gives the entries whose ``parentId`` is null."""
        if self._children is None:
            self._children = {}
            for entry in self._entries:
                self._children.setdefault(entry.parent_id, []).append(entry)
        return list(self._children.get(entry_id, ()))

    def roots(self) -> list[Entry]:
        """Entries with no parent, or whose parent is missing (pi shows those as roots too)."""
        return [e for e in self._entries if e.parent_id is None or e.parent_id not in self._by_id]

    def common_ancestor(self, a: str, b: str) -> str | None:
        """The deepest entry on both paths (an id may be its own ancestor); None if disjoint."""
        on_a = {e.id for e in self.path_to(a)}
        deepest = None
        for entry in self.path_to(b):
            if entry.id in on_a:
                deepest = entry.id
        return deepest

    def labels(self) -> dict[str, str]:
        """Current labels by target id: label entries in file order, the latest wins, empty clears."""
        return dict(self._labels)

    def label(self, entry_id: str) -> str | None:
        """The current label of an entry, or None."""
        return self._labels.get(entry_id)

    @property
    def name(self) -> str | None:
        """The session name: the latest ``session_info`` entry's trimmed name (empty clears)."""
        return self._name or None

    # ----------------------------------------------------------------- integrity

    def problems(self, file: str | None) -> list[Problem]:
        """Duplicate ids, dangling parents and parent cycles, each located at its line."""
        found = list(self._duplicates(file))
        found.extend(self._dangling(file))
        found.extend(self._cycles(file))
        return sorted(found, key=lambda p: (p.location.line or 0) if p.location else 0)

    def _duplicates(self, file: str | None) -> Iterator[Problem]:
        first: dict[str, Entry] = {}
        for entry in self._entries:
            earlier = first.setdefault(entry.id, entry)
            if earlier is not entry:
                yield Problem(
                    f"duplicate entry id {entry.id!r} (first at line {earlier.line}); the later entry wins",
                    Location(file, entry.line), key="id", code="session.duplicate-id",
                )

    def _dangling(self, file: str | None) -> Iterator[Problem]:
        for entry in self._entries:
            if entry.parent_id is not None and entry.parent_id not in self._by_id:
                yield Problem(
                    f"parent {entry.parent_id!r} of entry {entry.id!r} does not exist; the entry acts as a root",
                    Location(file, entry.line), key="parentId", code="session.dangling-parent",
                )

    def _cycles(self, file: str | None) -> Iterator[Problem]:
        state: dict[int, int] = {}  # id(entry) -> 1 visiting, 2 done
        for start in self._entries:
            chain: list[Entry] = []
            current: Entry | None = start
            while current is not None and id(current) not in state:
                state[id(current)] = 1
                chain.append(current)
                current = self._by_id.get(current.parent_id) if current.parent_id else None
            if current is not None and state[id(current)] == 1:
                yield Problem(
                    f"entry {current.id!r} is its own ancestor (parentId cycle); paths through it stop there",
                    Location(file, current.line), key="parentId", code="session.cycle",
                )
            for entry in chain:
                state[id(entry)] = 2


class _View(Sequence):
    """A read-only view of a list."""

    __slots__ = ("_items",)

    def __init__(self, items: list) -> None:
        self._items = items

    def __getitem__(self, index):  # type: ignore[override]
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self):
        return iter(self._items)
