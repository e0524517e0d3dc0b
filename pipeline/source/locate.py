"""Naming and finding things in a merged profile: key paths and variable positions.

Key paths name sections by id (``system_prompt.sections.rules.item``), not by index,
because ids are what overlays and people refer to. A ``${name}`` inside a YAML
scalar is located by reading the scalar's own source text, so the position is the
one in the file whatever the style (plain, quoted, literal or folded block).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from pipeline.errors import Location
from pipeline.model.text import Text, Var
from pipeline.model.templates import source_path
from pipeline.source.tree import Span

if TYPE_CHECKING:
    from pipeline.model.profile import Profile
    from pipeline.source.tree import SourceMap

SECTIONS = ("system_prompt", "sections")


def section_ids(data: Any) -> list[Any]:
    """The id of every section in ``data`` (plain data or a Profile), None where absent."""
    prompt = getattr(data, "system_prompt", None)
    if prompt is not None:
        return [s.id for s in prompt.sections]
    if isinstance(data, dict) and isinstance(data.get("system_prompt"), dict):
        sections = data["system_prompt"].get("sections")
        if isinstance(sections, (list, tuple)):
            return [s.get("id") if isinstance(s, dict) else None for s in sections]
    return []


def render_key(path: Sequence[Any], data: Any = None) -> str:
    """``("system_prompt", "sections", 3, "item")`` -> ``system_prompt.sections.tools.item``.

    For many keys of one profile, use :class:`KeyNames` (the section ids are read once).
    """
    return KeyNames(data)(path)


class KeyNames:
    """:func:`render_key` for one profile (plain data or a Profile), the section ids read once."""

    def __init__(self, data: Any = None) -> None:
        self._data = data
        self._ids: list[Any] | None = None

    def __call__(self, path: Sequence[Any]) -> str:
        parts = [str(p) for p in path]
        if len(path) > 2 and tuple(path[:2]) == SECTIONS and isinstance(path[2], int):
            if self._ids is None:
                self._ids = section_ids(self._data) if self._data is not None else []
            ids = self._ids
            if path[2] < len(ids) and isinstance(ids[path[2]], str) and ids[path[2]]:
                parts[2] = ids[path[2]]
        return ".".join(parts)


def var_location(span: Span, value: str, index: int) -> Location:
    """Where the ``index``-th variable of the scalar ``value`` is written in the file.

    The k-th ``${name}`` of the value is the k-th ``${name}`` of the scalar's source
    text (escapes and folding never produce or split one), so the position is exact
    for every style; only a variable spelt with escapes (``"\\x24{cwd}"``) falls back
    to an estimate. For many variables of one scalar use :func:`var_locations`.
    """
    return var_locations(span, value)[index]


def var_locations(span: Span, value: str) -> list[Location]:
    """:func:`var_location` of every variable of ``value``, in one pass over the scalar."""
    written: dict[str, list[Var]] = {}
    for v in Text(span.source).variables if span.source is not None else ():
        written.setdefault(v.name, []).append(v)
    seen: dict[str, int] = {}
    out = []
    for var in Text(value).variables:
        nth = seen.get(var.name, 0)
        seen[var.name] = nth + 1
        same = written.get(var.name, ())
        out.append(_absolute(span, same[nth].line, same[nth].col) if nth < len(same) else _estimate(span, var))
    return out


def _absolute(span: Span, line: int, col: int) -> Location:
    if line == 1:
        return Location(span.file, span.line, span.col + col - 1)
    return Location(span.file, span.line + line - 1, col)


def _estimate(span: Span, var: Var) -> Location:
    """Best effort when the source does not show the variable literally (escapes)."""
    if span.line is None:  # set by a flag or an override: no file position
        return span.location
    opening = 1 if span.style in ("'", '"') else 0
    if var.line == 1:
        return Location(span.file, span.line, span.col + opening + var.col - 1)
    return Location(span.file, span.line + var.line - 1, var.col)


def template_source_path(profile: Profile, source_map: SourceMap, index: int) -> Path:
    """An explicit ``templates.sources`` path, resolved against the file that lists it."""
    raw = profile.templates.sources[index]
    source = Path(source_path(raw) or "").expanduser()
    if source.is_absolute():
        return source
    key = ("templates", "sources", index)
    entry = source_map.get((*key, "path")) or source_map.get(key) or source_map.get(("templates", "sources"))
    base = Path(entry.value.file).parent if entry else Path.cwd()
    return base / source
