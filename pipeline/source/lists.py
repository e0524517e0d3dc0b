"""Lists in overlays: the append form ``KEY+:``, and what a replaced list loses.

A list written as ``KEY:`` replaces the inherited list whole; written as ``KEY+:`` its
entries are added after the inherited ones (where nothing is inherited, it is the list
itself). ``system_prompt.sections`` merges by id and has no append form.

A ``KEY:`` list that replaces an inherited list holding ``from:`` entries (the rules a
tool or the caller brings) and leaves some of them out is reported as a warning
(an error under ``validate --strict``): it is usually an overlay that meant to add a
rule and dropped the built-in ones.
"""

from __future__ import annotations

from pipeline.errors import Problem
from pipeline.model.base import APPEND
from pipeline.source.tree import Entry, Map, Scalar, Seq


def append_target(key: str) -> str | None:
    """``rules`` for the key ``rules+``; None for a key that is not an append form."""
    return key[: -len(APPEND)] if key.endswith(APPEND) and len(key) > len(APPEND) else None


def dotted(path: tuple) -> str:
    return ".".join(str(part) for part in path)


def append_problem(over: Map, key: str, target: str, entry: Entry, path: tuple, sections: bool) -> Problem | None:
    """Why ``key`` (``target+``) cannot append here, or None when it can."""
    where = entry.key_span.location
    name = dotted(path + (key,))
    if sections:
        return Problem(
            f"`{key}` is not needed: sections merge by id", where, key=name,
            hint=f"write `{target}:`; a new section without `before`/`after` goes at the end",
            code="profile.bad-overlay",
        )
    if target in over.entries:
        return Problem(
            f"`{target}` and `{key}` are both written", where, key=name,
            hint=f"write `{target}:` to replace the inherited list or `{key}:` to add to it, not both",
            code="profile.bad-overlay",
        )
    if not isinstance(entry.node, Seq):
        return Problem(
            f"`{key}` adds to a list: its value must be a list", entry.node.span.location, key=name,
            hint=f"write `{key}: [...]`", code="profile.bad-overlay",
        )
    return None


def appended(old: Entry | None, new: Seq) -> Seq:
    """The inherited list (if it is one) followed by ``new``'s entries."""
    if old is None or not isinstance(old.node, Seq):
        return new
    return Seq(old.node.items + new.items, new.span)


def dropped_from(old: Entry | None, new: Seq, entry: Entry, key: str, path: tuple) -> Problem | None:
    """A warning when the list ``new`` replaces an inherited list and leaves out its ``from:`` entries."""
    if old is None or not isinstance(old.node, Seq):
        return None
    kept = set(_froms(new))
    lost = [name for name in _froms(old.node) if name not in kept]
    if not lost:
        return None
    names = ", ".join(f"`from: {name}`" for name in dict.fromkeys(lost))
    return Problem(
        f"this list replaces the inherited `{key}` and drops its {names} {'entry' if len(lost) == 1 else 'entries'}",
        entry.key_span.location,
        key=dotted(path + (key,)),
        hint=f"write `{key}{APPEND}:` to add to the inherited list; to drop them on purpose, "
        "replace the section (`replace: true`)",
        severity="warning",
        code="profile.list-drops-from",
    )


def _froms(seq: Seq) -> list[str]:
    names = []
    for item in seq.items:
        entry = item.entries.get("from") if isinstance(item, Map) else None
        if entry is not None and isinstance(entry.node, Scalar) and isinstance(entry.node.value, str):
            names.append(entry.node.value)
    return names
