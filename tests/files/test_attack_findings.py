"""Issue 21's attack findings: a symbolic-link loop given as a profile, a message whose
``role`` is an object, a torn last line too long to read, each a located problem and
never a traceback; a failed command leaves the session file as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import ROOT, cli, one_line_error

SESSION = ROOT / "tests" / "data" / "sessions" / "real" / "long-coding.jsonl"


# --------------------------------------------------------------------------- item 20: symlink loops


@pytest.fixture
def looped(tmp_path: Path) -> Path:
    (tmp_path / "a.yaml").symlink_to("b.yaml")
    (tmp_path / "b.yaml").symlink_to("a.yaml")
    return tmp_path / "a.yaml"


@pytest.mark.parametrize("command", ["validate", "render", "explain"])
def test_a_symlink_loop_given_as_profile_is_one_located_line(looped, command):
    run = cli(command, str(looped))
    assert run.code == 1
    text = run.out.decode() + run.err  # validate reports on stdout, the others on stderr
    assert "Traceback" not in text and "RuntimeError" not in text, text
    assert text.splitlines() == [f"{looped}: cannot read profile: too many levels of symbolic links"]


def test_a_symlink_loop_as_extends_target_is_located_at_the_key(looped, tmp_path):
    child = tmp_path / "child.yaml"
    child.write_text("extends: a.yaml\n")
    run = cli("render", str(child))
    assert run.code == 1
    one_line_error(run, f"{child}:1:10: extends:", "cannot be read: too many levels of symbolic links")


def test_a_symlink_loop_as_session_is_one_located_line(tmp_path):
    (tmp_path / "x.jsonl").symlink_to("y.jsonl")
    (tmp_path / "y.jsonl").symlink_to("x.jsonl")
    run = cli("context", str(tmp_path / "x.jsonl"))
    assert run.code == 1
    one_line_error(run, "x.jsonl: cannot read session file: too many levels of symbolic links")


# --------------------------------------------------------------------------- item 21: role objects


@pytest.fixture
def odd_roles(tmp_path: Path) -> Path:
    """The shipped session with two messages whose ``role`` is not a string spliced in."""
    lines = SESSION.read_text().splitlines()
    tail = json.loads(lines[-1])
    odd = [
        {"type": "message", "id": "odd00001", "parentId": tail["id"], "timestamp": tail["timestamp"],
         "message": {"role": {"type": "toolCall"}, "content": "x"}},
        {"type": "message", "id": "odd00002", "parentId": "odd00001", "timestamp": tail["timestamp"],
         "message": {"role": ["user"], "content": "y"}},
    ]
    path = tmp_path / "odd.jsonl"
    path.write_text("\n".join(lines + [json.dumps(o) for o in odd]) + "\n")
    return path


@pytest.mark.parametrize("command, flags", [
    (("context",), ()), (("session", "check"), ()), (("session", "tree"), ()),
    (("compact",), ("--plan", "--keep-recent", "1000")), (("compact",), ("--keep-recent", "1000")),
])
def test_a_role_that_is_an_object_is_a_located_warning(odd_roles, command, flags):
    run = cli(*command, str(odd_roles), *flags)
    text = run.out.decode() + run.err
    assert "Traceback" not in text and "unhashable" not in text, text
    assert run.code == 0, text
    count = len(SESSION.read_text().splitlines())
    assert f'{odd_roles}:{count + 1}: warning: unknown message role {{"type": "toolCall"}}' in text
    assert f'{odd_roles}:{count + 2}: warning: unknown message role ["user"]' in text
