"""Overlay merge: the files of an ``extends:`` chain combined into one tree.

Rules (documented in ``docs/profile.md``):

* mappings merge deeply; the later file wins for every key it writes;
* lists are replaced wholesale (``KEY+:`` appends to the inherited list instead, see
  :mod:`pipeline.source.lists`), except ``system_prompt.sections``, which merge by
  ``id``: a section with a known id is merged deeply into it in place (``replace:
  true`` replaces it wholesale), ``remove: true`` deletes it, ``before: ID`` /
  ``after: ID`` place a new or an existing section; a new section without a
  placement goes at the end;
* ``extends`` itself and the placement keys never reach the merged profile.

Every file is merged onto the one it extends (the first onto nothing), so a
standalone profile goes through the same rules: its section ids must be unique and
its placement keys must name ids that exist.

Sections are held in a linked order with an index by id (:class:`_Order`), so the
merge is linear in the number of sections however they are placed. Besides the tree
it reports (:class:`Merged`) which sections an overlay removed or replaced and where
(``pipeline explain`` names them), and a warning for a new section whose id is one
edit away from an existing one (``identiy`` for ``identity``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.errors import Problem, ProfileError
from pipeline.model.base import SECTION_DIRECTIVES
from pipeline.source import lists
from pipeline.source.chain import Layer
from pipeline.source.nearmiss import NearMiss
from pipeline.source.tree import Dropped, Entry, Map, Node, Scalar, Seq, Span

SECTIONS_PATH = ("system_prompt", "sections")
DIRECTIVES = SECTION_DIRECTIVES
#: "known ids" hints list at most this many ids.
LISTED = 20
#: Unknown-id problems after this many get no "did you mean" (each costs a pass over the ids).
HINTED = 50


@dataclass
class Merged:
    """The merged tree, the sections an overlay removed or replaced, and merge warnings."""

    tree: Map
    dropped: dict[tuple, Dropped] = field(default_factory=dict)
    warnings: list[Problem] = field(default_factory=list)


def merge_layers(layers: list[Layer]) -> Merged:
    """The merged tree of a chain given top first (the base is merged first)."""
    problems: list[Problem] = []
    merged = Merged(Map({}, layers[-1].tree.span))
    for layer in reversed(layers):
        tree = Map({k: e for k, e in layer.tree.entries.items() if k != "extends"}, layer.tree.span)
        problems.extend(_duplicate_ids(tree))
        merged.tree = _merge_map(merged.tree, tree, (), _Run(problems, merged))
    if problems:
        raise ProfileError(problems)
    return merged


@dataclass
class _Run:
    """What one merge collects: errors, and the record of what it dropped or suspects."""

    problems: list[Problem]
    merged: Merged
    hinted: int = 0

    def append(self, problem: Problem) -> None:
        self.problems.append(problem)


def _merge_map(base: Map, over: Map, path: tuple, problems: _Run) -> Map:
    entries = dict(base.entries)
    for key, entry in over.entries.items():
        node: Node
        target = lists.append_target(key)
        if target is not None:
            wrong = lists.append_problem(over, key, target, entry, path, path + (target,) == SECTIONS_PATH)
            if wrong is not None:
                problems.append(wrong)
                continue
            added = _fresh(entry.node, path + (target,), problems)
            assert isinstance(added, Seq)  # append_problem refuses anything else
            key, node = target, lists.appended(entries.get(target), added)
        else:
            node = _merge_value(entries.get(key), entry, path + (key,), problems)
        entries[key] = Entry(entry.key_span, node)
    return Map(entries, over.span)


def _merge_value(old: Entry | None, entry: Entry, path: tuple, problems: _Run) -> Node:
    node = entry.node
    if path == SECTIONS_PATH and isinstance(node, Seq):
        old_seq = old.node if old is not None and isinstance(old.node, Seq) else Seq((), node.span)
        return _merge_sections(old_seq, node, problems)
    if isinstance(node, Map):
        old_map = old.node if old is not None and isinstance(old.node, Map) else Map({}, node.span)
        return _merge_map(old_map, node, path, problems)
    if isinstance(node, Seq):
        warning = lists.dropped_from(old, node, entry, str(path[-1]), path[:-1])
        if warning is not None:
            problems.merged.warnings.append(warning)
    return _fresh(node, path, problems)


def _fresh(node: Node, path: tuple, problems: _Run) -> Node:
    """A node merged onto nothing: append keys (``rules+``) inside it become plain keys."""
    if isinstance(node, Map):
        return _merge_map(Map({}, node.span), node, path, problems)
    if isinstance(node, Seq):
        return Seq(tuple(_fresh(item, path + (i,), problems) for i, item in enumerate(node.items)), node.span)
    return node


# --------------------------------------------------------------------------- sections


@dataclass
class _Directives:
    remove: bool = False
    replace: bool = False
    before: Scalar | None = None
    after: Scalar | None = None
    remove_span: Span | None = None  # where `remove:` / `replace:` is written
    replace_span: Span | None = None

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


def _merge_sections(base: Seq, over: Seq, problems: _Run) -> Seq:
    order = _Order(base.items)
    existing = NearMiss(order.ids())
    for node in over.items:
        sid = section_id(node)
        if not isinstance(node, Map) or sid is None:
            order.append(_fresh(_strip(node, problems, sid), SECTIONS_PATH, problems))
            continue
        directives = _directives(node, sid, problems)
        body = _strip(node, problems, sid)
        if order.find(sid) is None and not (directives.remove or directives.replace):
            _near_miss(sid, body, existing, problems)
        _apply(order, sid, directives, body, problems)
    return Seq(tuple(order), over.span)


def _near_miss(sid: str, body: Map, existing: NearMiss, run: _Run) -> None:
    """A new section whose id is one edit away from an existing one is likely a typo."""
    typo_of = existing.typo_of(sid)
    if typo_of is None:
        return
    run.merged.warnings.append(
        Problem(
            f"new section `{sid}` is one edit away from the existing section `{typo_of}`: it is added "
            f"as a separate section instead of changing `{typo_of}`",
            body.entries["id"].node.span.location,
            key=".".join(SECTIONS_PATH + (sid, "id")),
            hint=f"did you mean `{typo_of}`? For a separate section on purpose, pick a clearly different id",
            severity="warning",
            code="profile.near-miss-section",
        )
    )


class _Order:
    """The sections being merged: a linked order with an index by id.

    Finding, replacing, removing and moving a section are O(1), so merging an overlay
    of n sections onto a base of m is O(n + m), however many sections there are.
    """

    _END = 0

    def __init__(self, nodes) -> None:
        self._node: dict[int, Node] = {}
        self._next: dict[int, int] = {self._END: self._END}
        self._prev: dict[int, int] = {self._END: self._END}
        self._ids: dict[str, int] = {}
        self._count = 0
        for node in nodes:
            self.append(node)

    def __iter__(self):
        key = self._next[self._END]
        while key != self._END:
            yield self._node[key]
            key = self._next[key]

    def find(self, sid: str) -> int | None:
        return self._ids.get(sid)

    def node(self, key: int) -> Node:
        return self._node[key]

    def append(self, node: Node) -> int:
        return self._link(node, self._END)

    def replace(self, key: int, node: Node) -> None:
        self._node[key] = node

    def remove(self, key: int) -> None:
        self._unlink(key)
        sid = section_id(self._node.pop(key))
        if sid is not None and self._ids.get(sid) == key:
            del self._ids[sid]

    def move(self, key: int, target: int, before: bool) -> None:
        node = self._node[key]
        self.remove(key)
        self._link(node, target if before else self._next[target], key)

    def ids(self) -> list[str]:
        return list(self._ids)

    def _link(self, node: Node, before: int, key: int | None = None) -> int:
        if key is None:
            self._count += 1
            key = self._count
        prev = self._prev[before]
        self._next[prev], self._prev[key], self._next[key], self._prev[before] = key, prev, before, key
        self._node[key] = node
        sid = section_id(node)
        if sid is not None:
            self._ids.setdefault(sid, key)
        return key

    def _unlink(self, key: int) -> None:
        prev, nxt = self._prev.pop(key), self._next.pop(key)
        self._next[prev], self._prev[nxt] = nxt, prev


def _apply(order: _Order, sid: str, d: _Directives, body: Map, problems: _Run) -> None:
    key = order.find(sid)
    if d.remove:
        if key is None:
            problems.append(_unknown(sid, body.entries["id"].node, order, "no section `{}` to remove", problems))
        else:
            order.remove(key)
            _dropped(problems, sid, "removed", d.remove_span or body.span)
        return
    if key is None:
        if d.replace:
            problems.append(_unknown(sid, body.entries["id"].node, order, "no section `{}` to replace", problems))
        key = order.append(_fresh(body, SECTIONS_PATH + (sid,), problems))
        problems.merged.dropped.pop(SECTIONS_PATH + (sid,), None)  # removed by a base, added again
    elif d.replace:
        order.replace(key, _fresh(body, SECTIONS_PATH + (sid,), problems))
        _dropped(problems, sid, "replaced", d.replace_span or body.span)
    else:
        merged = _merge_map(order.node(key), body, SECTIONS_PATH + (sid,), problems)  # type: ignore[arg-type]
        order.replace(key, merged)
    if d.target is not None:
        _place(order, key, sid, d, problems)


def _dropped(run: _Run, sid: str, how: str, span: Span) -> None:
    run.merged.dropped[SECTIONS_PATH + (sid,)] = Dropped(how, span)


def _place(order: _Order, key: int, sid: str, d: _Directives, problems: _Run) -> None:
    target = d.target
    assert target is not None
    name = target.value
    if name == sid:
        problems.append(_problem(sid, target, "a section cannot be placed relative to itself", d))
        return
    where = order.find(str(name))
    if where is None:
        problems.append(_unknown(sid, target, order, "unknown section id `{}`", problems, key=_key(sid, d)))
        return
    order.move(key, where, before=d.before is not None)


def _unknown(sid: str, node: Node, order: _Order, message: str, run: _Run, key: str | None = None) -> Problem:
    name = node.value if isinstance(node, Scalar) else sid
    run.hinted += 1
    hint = None
    if run.hinted <= HINTED:
        known = [s for s in order.ids() if s != sid or key is None]
        hint = NearMiss(known).hint(str(name)) or _listing(known)
    return Problem(
        message.format(name),
        node.span.location,
        key=key or ".".join(SECTIONS_PATH + (sid,)),
        hint=hint,
        code="profile.unknown-section",
    )


def _listing(known: list[str]) -> str:
    if not known:
        return "there are no sections yet"
    shown = ", ".join(known[:LISTED])
    return "known ids: " + shown + (f" … ({len(known) - LISTED} more)" if len(known) > LISTED else "")


def _key(sid: str, d: _Directives) -> str:
    return ".".join(SECTIONS_PATH + (sid, "before" if d.before is not None else "after"))


def _problem(sid: str, node: Node, message: str, d: _Directives) -> Problem:
    return Problem(message, node.span.location, key=_key(sid, d), code="profile.bad-placement")


def _directives(node: Map, sid: str, problems: _Run) -> _Directives:
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
        if want_bool:
            setattr(d, name + "_span", entry.key_span)
    _check_combination(node, sid, d, problems)
    return d


def _check_combination(node: Map, sid: str, d: _Directives, problems: _Run) -> None:
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


def _strip(node: Node, problems: _Run, sid: str | None) -> Node:
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
