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


# --------------------------------------------------------------------------- item 22: a 50 MB torn last line


def _with_torn_tail(tmp_path: Path, size: int) -> Path:
    path = tmp_path / "torn.jsonl"
    path.write_bytes(SESSION.read_bytes() + b'{"type":"message","id":"zz","message":{"role":"user","content":"'
                     + b"a" * size)
    return path


def _address_space(limit: int):
    def apply() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return apply


def test_compact_over_a_50_mb_torn_line_within_bounded_memory(tmp_path):
    """Classifying the torn line once the append ends it scanned the string with a regular
    expression that kept state per character (gigabytes for 50 MB): a MemoryError after the
    entry was written. Now it runs in a 3 GiB address space, and reports the line."""
    import subprocess
    import sys

    from .conftest import HANG_GUARD

    path = _with_torn_tail(tmp_path, 50_000_000)
    done = subprocess.run([sys.executable, "-m", "pipeline", "compact", str(path), "--keep-recent", "1000"],
                          cwd=ROOT, capture_output=True, timeout=HANG_GUARD * 6, preexec_fn=_address_space(3 << 30))
    err = done.stderr.decode()
    assert "Traceback" not in err and "MemoryError" not in err, err[-3000:]
    assert done.returncode == 0, err[-3000:]
    count = len(SESSION.read_text().splitlines())
    assert f"{path}:{count + 1}: warning: torn last line" in err
    check = cli("session", "check", str(path))
    assert check.code == 0
    assert f"{path}:{count + 1}: warning: torn line (a write was cut short), repaired by a later append" in check.out.decode()


def test_the_torn_line_is_read_before_the_append_so_a_failure_changes_nothing(tmp_path, monkeypatch):
    from pipeline.session import SessionFile
    from pipeline.session.reader import Scanner

    path = _with_torn_tail(tmp_path, 1000)
    before = path.read_bytes()
    session = SessionFile.open(path)

    def fails(self, raw):
        raise RuntimeError("reading the torn line failed")

    monkeypatch.setattr(Scanner, "tail_problems", fails)
    with pytest.raises(RuntimeError):
        session.append_message({"role": "user", "content": [{"type": "text", "text": "x"}], "timestamp": 1})
    assert path.read_bytes() == before


def test_a_torn_line_too_large_for_memory_is_a_located_problem(tmp_path, monkeypatch):
    from pipeline.session import SessionFile
    from pipeline.session import reader

    path = _with_torn_tail(tmp_path, 1000)
    session = SessionFile.open(path)

    def no_memory(text):
        raise MemoryError

    monkeypatch.setattr(reader, "is_cut_object", no_memory)
    session.append_message({"role": "user", "content": [{"type": "text", "text": "x"}], "timestamp": 1})
    count = len(SESSION.read_text().splitlines())
    [problem] = [p for p in session.problems if p.location.line == count + 1]
    assert problem.code == "session.line-too-long"
    assert problem.message == "line too large to read in the memory available (1064 bytes); skipped"


def test_a_command_folder_with_links_back_to_itself_is_walked_once(tmp_path):
    commands = tmp_path / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "a.md").write_text("Hi $0\n")
    (commands / "up").symlink_to("..")
    (commands / "self").symlink_to("../commands")
    run = cli("templates", "--templates-dir", str(commands), "--dialect", "claude-code", cwd=tmp_path)
    assert run.code == 0 and "too many levels" not in run.err and "Traceback" not in run.err, run.err
    assert run.out.count(b"/a ") + run.out.count(b"/a\n") == 1, run.out
