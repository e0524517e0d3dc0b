"""Every effective value of a merged profile with the file and line that set it.

Values a file did not set come from the models' defaults and are shown as such.
Lists of plain values (``default_tools``, ``sources``) are one value, since a list
is always set as a whole by one file; other lists (sections, rules, schema) are
walked into, sections named by id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from pipeline.errors import Location
from pipeline.gcpause import gc_paused
from pipeline.source.locate import KeyNames
from pipeline.source.tree import SourceMap


@dataclass(frozen=True)
class Value:
    """One leaf of the profile: its key path, value, and where it was set (None: default)."""

    key: str
    value: Any
    location: Location | None

    def to_json(self) -> dict:
        loc = self.location
        return {
            "key": self.key,
            "value": self.value,
            "file": loc.file if loc else None,
            "line": loc.line if loc else None,
            "col": loc.col if loc else None,
            "default": loc is None,
        }


def effective_values(data: dict, source_map: SourceMap) -> list[Value]:
    """The leaves of ``data`` (a dumped, merged profile) in document order."""
    name = KeyNames(data)
    with gc_paused():  # many small objects: the cyclic collector would make it superlinear
        return [
            Value(name(path), value, _where(source_map, path))
            for path, value in _leaves(data, ())
            if not (path == ("$schema",) and value is None)
        ]


def select(values: list[Value], key: str | None) -> list[Value]:
    """The values at or under ``key`` (a dotted path); all when ``key`` is None."""
    if not key:
        return values
    key = key.strip(".")
    return [v for v in values if v.key == key or v.key.startswith(key + ".")]


def dropped_by(source_map: SourceMap, key: str | None) -> tuple[str, str, Location] | None:
    """For a ``key`` that is not in the profile: the section an overlay removed or replaced
    that held it, as (the section's dotted key, ``removed``/``replaced``, where), or None."""
    from pipeline.source.chain import shown_location

    if not key:
        return None
    parts = key.strip(".").split(".")
    for path, dropped in source_map.dropped.items():
        if tuple(parts[: len(path)]) == tuple(path):
            return ".".join(path), dropped.how, shown_location(dropped.span.location)
    return None


def known_prefixes(values: list[Value]) -> list[str]:
    """Every dotted prefix of every key, for "did you mean" hints."""
    out: dict[str, None] = {}
    for value in values:
        parts = value.key.split(".")
        for i in range(1, len(parts) + 1):
            out[".".join(parts[:i])] = None
    return list(out)


def _where(source_map: SourceMap, path: tuple) -> Location | None:
    """Where the value at ``path`` was set, its file named for review (``builtin:default``)."""
    from pipeline.source.chain import shown_location

    entry = source_map.get(path)
    return shown_location(entry.value.location) if entry else None


def _leaves(value: Any, path: tuple) -> Iterator[tuple[tuple, Any]]:
    if isinstance(value, dict) and value:
        for key, child in value.items():
            yield from _leaves(child, path + (key,))
    elif isinstance(value, list) and value and not all(_plain(v) for v in value):
        for i, child in enumerate(value):
            yield from _leaves(child, path + (i,))
    else:
        yield path, value


def _plain(value: Any) -> bool:
    return not isinstance(value, (dict, list))
