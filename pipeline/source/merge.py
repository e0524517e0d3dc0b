"""Overlay merge: the files of an ``extends:`` chain combined into one tree.

Rules (documented in ``docs/profile.md``):

* mappings merge deeply; the later file wins for every key it writes;
* lists are replaced wholesale, except ``system_prompt.sections``, which merge by
  ``id``: a section with a known id is merged deeply into it in place (``replace:
  true`` replaces it wholesale), ``remove: true`` deletes it, ``before: ID`` /
  ``after: ID`` place a new or an existing section; a new section without a
  placement goes at the end;
* ``extends`` itself and the placement keys never reach the merged profile.

Every file is merged onto the one it extends (the first onto nothing), so a
standalone profile goes through the same rules: its section ids must be unique and
its placement keys must name ids that exist.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.errors import Problem, ProfileError, did_you_mean
from pipeline.source.chain import Layer
from pipeline.source.tree import Entry, Map, Node, Scalar, Seq

SECTIONS_PATH = ("system_prompt", "sections")
DIRECTIVES = ("remove", "replace", "before", "after")


def merge_layers(layers: list[Layer]) -> Map:
    """The merged tree of a chain given top first (the base is merged first)."""
    problems: list[Problem] = []
    merged = Map({}, layers[-1].tree.span)
    for layer in reversed(layers):
        tree = Map({k: e for k, e in layer.tree.entries.items() if k != "extends"}, layer.tree.span)
        problems.extend(_duplicate_ids(tree))
        merged = _merge_map(merged, tree, (), problems)
    if problems:
        raise ProfileError(problems)
    return merged


def _merge_map(base: Map, over: Map, path: tuple, problems: list[Problem]) -> Map:
    entries = dict(base.entries)
    for key, entry in over.entries.items():
        old = entries.get(key)
        node = entry.node
        if path + (key,) == SECTIONS_PATH and isinstance(node, Seq):
            old_seq = old.node if old is not None and isinstance(old.node, Seq) else Seq((), node.span)
            node = _merge_sections(old_seq, node, problems)
        elif isinstance(node, Map):
            old_map = old.node if old is not None and isinstance(old.node, Map) else Map({}, node.span)
            node = _merge_map(old_map, node, path + (key,), problems)
        entries[key] = Entry(entry.key_span, node)
    return Map(entries, over.span)


# --------------------------------------------------------------------------- sections


@dataclass
class _Directives:
    remove: bool = False
    replace: bool = False
    before: Scalar | None = None
    after: Scalar | None = None

    @property
    def target(self) -> Scalar | None:
        return self.before or self.after


def section_id(node: Node) -> str | None:
    """The id of a section node, when it has a usable one."""
    if isinstance(node, Map) and "id" in node.entries:
        value = node.entries["id"].node
        if isinstance(value, Scalar) and isinstance(value.value, str) and value.value:
            return value.value
    return None


def _merge_sections(base: Seq, over: Seq, problems: list[Problem]) -> Seq:
    items: list[Node] = list(base.items)
    for node in over.items:
        sid = section_id(node)
        if not isinstance(node, Map) or sid is None:
            items.append(_strip(node, problems, sid))
            continue
        directives = _directives(node, sid, problems)
        body = _strip(node, problems, sid)
        _apply(items, sid, directives, body, problems)
    return Seq(tuple(items), over.span)


def _apply(items: list[Node], sid: str, d: _Directives, body: Map, problems: list[Problem]) -> None:
    index = _index(items, sid)
    if d.remove:
        if index is None:
            problems.append(_unknown(sid, body.entries["id"].node, items, "no section `{}` to remove"))
        else:
            del items[index]
        return
    if index is None:
        if d.replace:
            problems.append(_unknown(sid, body.entries["id"].node, items, "no section `{}` to replace"))
        items.append(body)
        index = len(items) - 1
    elif d.replace:
        items[index] = body
    else:
        items[index] = _merge_map(items[index], body, SECTIONS_PATH + (sid,), problems)  # type: ignore[arg-type]
    if d.target is not None:
        _place(items, index, sid, d, problems)


def _place(items: list[Node], index: int, sid: str, d: _Directives, problems: list[Problem]) -> None:
    target = d.target
    assert target is not None
    name = target.value
    if name == sid:
        problems.append(_problem(sid, target, "a section cannot be placed relative to itself", d))
        return
    node = items.pop(index)
    where = _index(items, str(name))
    if where is None:
        items.insert(index, node)
        problems.append(_unknown(sid, target, items, "unknown section id `{}`", key=_key(sid, d)))
        return
    items.insert(where if d.before is not None else where + 1, node)


def _index(items: list[Node], sid: str) -> int | None:
    for i, node in enumerate(items):
        if section_id(node) == sid:
            return i
    return None


def _unknown(sid: str, node: Node, items: list[Node], message: str, key: str | None = None) -> Problem:
    name = node.value if isinstance(node, Scalar) else sid
    known = [s for s in (section_id(n) for n in items) if s]
    listing = "known ids: " + ", ".join(known) if known else "there are no sections yet"
    hint = did_you_mean(str(name), known) or listing
    return Problem(
        message.format(name),
        node.span.location,
        key=key or ".".join(SECTIONS_PATH + (sid,)),
        hint=hint,
        code="profile.unknown-section",
    )


def _key(sid: str, d: _Directives) -> str:
    return ".".join(SECTIONS_PATH + (sid, "before" if d.before is not None else "after"))


def _problem(sid: str, node: Node, message: str, d: _Directives) -> Problem:
    return Problem(message, node.span.location, key=_key(sid, d), code="profile.bad-placement")


def _directives(node: Map, sid: str, problems: list[Problem]) -> _Directives:
    d = _Directives()
    for name in DIRECTIVES:
        entry = node.entries.get(name)
        if entry is None:
            continue
        value = entry.node
        want_bool = name in ("remove", "replace")
        ok = isinstance(value, Scalar) and (
            isinstance(value.value, bool) if want_bool else isinstance(value.value, str) and bool(value.value)
        )
        if not ok:
            what = "true or false" if want_bool else "a section id"
            problems.append(
                Problem(f"`{name}` must be {what}", value.span.location, key=".".join(SECTIONS_PATH + (sid, name)), code="profile.bad-overlay")
            )
            continue
        setattr(d, name, value.value if want_bool else value)
    _check_combination(node, sid, d, problems)
    return d


def _check_combination(node: Map, sid: str, d: _Directives, problems: list[Problem]) -> None:
    key = ".".join(SECTIONS_PATH + (sid,))
    if d.before is not None and d.after is not None:
        problems.append(Problem("use `before` or `after`, not both", d.after.span.location, key=key + ".after", code="profile.bad-placement"))
    if d.remove:
        extra = [k for k in node.entries if k not in ("id", "remove")]
        if extra:
            where = node.entries[extra[0]].key_span.location
            problems.append(
                Problem(f"a removed section takes no other keys (found `{extra[0]}`)", where, key=key + "." + extra[0], code="profile.bad-overlay")
            )


def _strip(node: Node, problems: list[Problem], sid: str | None) -> Node:
    if not isinstance(node, Map):
        return node
    if sid is None:
        for name in DIRECTIVES:
            if name in node.entries:
                where = node.entries[name].key_span.location
                problems.append(Problem(f"a section with `{name}` needs an `id`", where, key=".".join(SECTIONS_PATH), code="profile.bad-overlay"))
                break
    return Map({k: e for k, e in node.entries.items() if k not in DIRECTIVES}, node.span)


def _duplicate_ids(tree: Map) -> list[Problem]:
    """Section ids must be unique within one file (``remove`` entries aside)."""
    sections = _sections(tree)
    if sections is None:
        return []
    seen: dict[str, Node] = {}
    problems = []
    for node in sections.items:
        sid = section_id(node)
        if sid is None or _is_removal(node):
            continue
        id_node = node.entries["id"].node  # type: ignore[union-attr]
        if sid in seen:
            first = seen[sid].span.line  # type: ignore[union-attr]
            problems.append(
                Problem(
                    f"duplicate section id `{sid}`",
                    id_node.span.location,
                    key=".".join(SECTIONS_PATH + (sid, "id")),
                    hint=f"first used at line {first}",
                    code="profile.duplicate-section",
                )
            )
        else:
            seen[sid] = id_node
    return problems


def _sections(tree: Map) -> Seq | None:
    prompt = tree.entries.get("system_prompt")
    if prompt is None or not isinstance(prompt.node, Map):
        return None
    sections = prompt.node.entries.get("sections")
    return sections.node if sections is not None and isinstance(sections.node, Seq) else None


def _is_removal(node: Node) -> bool:
    entry = node.entries.get("remove") if isinstance(node, Map) else None
    return entry is not None and isinstance(entry.node, Scalar) and entry.node.value is True
