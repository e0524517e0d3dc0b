"""Tree navigation: paths, children, roots, common ancestors (checked against pi), labels, names."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.session import SessionFile
from pipeline.session.tree import SessionTree

from .conftest import DATA, vectors

TREE_CASES = vectors("tree")


@pytest.fixture(scope="module")
def sessions() -> dict[str, SessionFile]:
    return {name: SessionFile.open(DATA / name) for name in {c["file"] for c in TREE_CASES}}


@pytest.mark.parametrize("case", TREE_CASES, ids=[f"{c['file']}:{c['a']}-{c['b']}" for c in TREE_CASES])
def test_common_ancestor_equals_pi(case, sessions):
    tree = sessions[case["file"]].tree
    assert tree.common_ancestor(case["a"], case["b"]) == case["commonAncestorId"]
    # pi's branch summary covers the old leaf's path below the common ancestor
    below = [e.id for e in tree.path_to(case["a"])]
    start = below.index(case["commonAncestorId"]) + 1 if case["commonAncestorId"] else 0
    assert below[start:] == case["branchEntryIds"]


def test_path_children_and_roots():
    session = SessionFile.open(DATA / "generated" / "roots.jsonl")
    tree = session.tree
    roots = tree.roots()
    assert [r.message.content[0].text for r in roots] == ["first root", "second root"]
    first = roots[0]
    kids = tree.children(first.id)
    assert len(kids) == 2 and kids[0].line < kids[1].line
    leaf_path = session.path_to(session.leaf_id)
    assert leaf_path[0] is first and leaf_path[-1].id == session.leaf_id
    assert all(b.parent_id == a.id for a, b in zip(leaf_path, leaf_path[1:]))
    assert tree.path_to("unknown") == [] and tree.path_to(None) == []
    assert [e.id for e in tree.children(None)] == [r.id for r in roots]


def test_labels_latest_wins_and_empty_clears():
    session = SessionFile.open(DATA / "generated" / "all-types.jsonl")
    label_entries = [e for e in session.entries if e.type == "label"]
    targets = [e.target_id for e in label_entries]
    assert [e.label for e in label_entries] == ["start", "renamed", "tmp", ""]
    assert session.labels() == {targets[0]: "renamed"}
    assert session.tree.label(targets[2]) is None


def test_name_latest_wins_and_empty_clears():
    assert SessionFile.open(DATA / "generated" / "all-types.jsonl").name == "demo name"
    assert SessionFile.open(DATA / "generated" / "roots.jsonl").name is None  # cleared by ""


def test_tree_keeps_up_with_appends(tmp_path):
    session = SessionFile.create(tmp_path / "s.jsonl", cwd="/w")
    a = session.append_message({"role": "user", "content": "a", "timestamp": 1})
    assert session.children(None) == [a]
    b = session.append_message({"role": "user", "content": "b", "timestamp": 2})
    assert session.children(a.id) == [b]
    session.branch(a.id)
    c = session.append_message({"role": "user", "content": "c", "timestamp": 3})
    assert session.children(a.id) == [b, c]
    assert session.tree.common_ancestor(b.id, c.id) == a.id


def _walked_path(entries, entry_id):
    """The path by the definition: follow ``parentId`` (the later of a duplicated id), stop at a repeat."""
    by_id = {e.id: e for e in entries}
    path, current = [], by_id.get(entry_id)
    while current is not None and all(current is not e for e in path):
        path.append(current)
        current = by_id.get(current.parent_id) if current.parent_id else None
    return path[::-1]


def _entries(pairs):
    from pipeline.session.entries import MessageEntry

    return [MessageEntry.from_json({"type": "message", "id": i, "parentId": p, "timestamp": "t",
                                    "message": {"role": "user", "content": "x"}}) for i, p in pairs]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcdef"), st.one_of(st.none(), st.sampled_from("abcdefg"), st.just(""))),
                max_size=8),
       st.booleans())
def test_path_to_equals_the_parent_walk(pairs, chained):
    """A never-branched file (each entry the child of the one before) is a chain, whose last
    entry's path is given without a walk; any other tree is walked. Both equal the definition."""
    if chained:  # unique ids, each the child of the one before
        ids = list(dict.fromkeys(i for i, _ in pairs))
        pairs = [(i, ids[n - 1] if n else None) for n, i in enumerate(ids)]
    entries = _entries(pairs)
    tree = SessionTree(entries)
    for entry_id in [*{i for i, _ in pairs}, "zz", None]:
        assert tree.path_to(entry_id) == _walked_path(entries, entry_id)
    if chained and entries:
        assert tree.path_to(entries[-1].id) == entries
        tree.add(_entries([("new", entries[0].id)])[0])  # a branch: the tree is walked from now on
        assert tree.path_to("new") == [entries[0], tree.get("new")] == _walked_path([*entries, tree.get("new")], "new")
