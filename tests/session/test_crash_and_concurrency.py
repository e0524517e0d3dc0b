"""Real processes: a writer killed mid-append, two writers at once, the lock.

A torn last line must leave every earlier entry loadable, be reported with its line
number, stay out of the context, and the next append must start on a fresh line so
the file stays loadable (pi 0.84.0 loading such a repaired file is recorded in
``tests/data/sessions/written/torn.jsonl`` + ``vectors/open.json``).
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from pipeline.session import LAST, SessionFile, build_context

from .conftest import mask_texts

CHILD_PRELUDE = textwrap.dedent(
    """
    import os, signal, sys, time
    from pipeline.session import SessionFile
    import pipeline.session.log as log

    def user(text):
        return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1}
    """
)


def _run_child(body: str, *args: str) -> subprocess.CompletedProcess:
    code = CHILD_PRELUDE + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60)


def _start_child(body: str, *args: str) -> subprocess.Popen:
    code = CHILD_PRELUDE + textwrap.dedent(body)
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


KILLED_MID_APPEND = """
    session = SessionFile.open(sys.argv[1])
    for i in range(3):
        session.append_message(user(f"entry {i}"))

    def half_then_die(fd, data):  # the real append path, cut short by a crash
        os.write(fd, data[: len(data) // 2])
        os.kill(os.getpid(), signal.SIG{how})

    log._write_all = half_then_die
    session.append_message(user("never completed " * 20))
"""

EXITS_MID_APPEND = """
    session = SessionFile.open(sys.argv[1])
    session.append_message(user("complete"))

    def half_then_exit(fd, data):
        os.write(fd, data[: len(data) // 3])
        os._exit(3)

    log._write_all = half_then_exit
    session.append_message(user("cut"))
"""


def test_writer_killed_mid_append_leaves_a_loadable_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    SessionFile.create(path, cwd="/w").append_model_change("p", "m")
    proc = _run_child(KILLED_MID_APPEND.replace("{how}", "KILL"), str(path))
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert not path.read_bytes().endswith(b"\n")

    session = SessionFile.open(path)
    assert [e.raw["type"] for e in session.entries] == ["model_change"] + ["message"] * 3
    assert session.torn_line == 6
    torn = [p for p in session.problems if p.code == "session.torn-line"]
    assert len(torn) == 1 and torn[0].location.line == 6 and str(torn[0]).startswith(f"{path}:6: ")
    texts = [m.content[0].text for m in build_context(session, mask_texts()).messages]
    assert texts == ["entry 0", "entry 1", "entry 2"]

    after = session.append_message({"role": "user", "content": "after the crash", "timestamp": 2})
    assert after.line == 7 and after.parent_id == session.entries[3].id
    repaired = [("session.repaired-torn-line", 6, "warning")]
    assert [(p.code, p.location.line, p.severity) for p in session.problems] == repaired  # updated in memory
    reopened = SessionFile.open(path)
    assert [e.id for e in reopened.entries] == [e.id for e in session.entries]
    assert [(p.code, p.location.line, p.severity) for p in reopened.problems] == repaired
    assert reopened.torn_line is None
    assert [m.role for m in build_context(reopened, mask_texts(), LAST).messages] == ["user"] * 4


def test_writer_exiting_mid_append(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    SessionFile.create(path, cwd="/w")
    proc = _run_child(EXITS_MID_APPEND, str(path))
    assert proc.returncode == 3, proc.stderr
    session = SessionFile.open(path)
    assert len(session.entries) == 1 and session.torn_line == 3
    session.append_message({"role": "user", "content": "next", "timestamp": 2})
    lines = path.read_text().split("\n")
    assert json.loads(lines[3])["message"]["content"] == "next" and lines[4] == ""


def test_open_session_catches_up_before_appending(tmp_path: Path) -> None:
    """A writer sees entries another process appended (and a torn line it left) before it appends."""
    path = tmp_path / "s.jsonl"
    mine = SessionFile.create(path, cwd="/w")
    first = mine.append_message({"role": "user", "content": "mine", "timestamp": 1})
    proc = _run_child(KILLED_MID_APPEND.replace("{how}", "KILL"), str(path))
    assert proc.returncode == -signal.SIGKILL
    entry = mine.append_message({"role": "user", "content": "mine again", "timestamp": 3})
    assert entry.parent_id == first.id
    assert len(mine.entries) == 5 and mine.torn_line is None  # repaired by the append
    # seen while catching up as a torn last line, then repaired by this very append
    assert [(p.code, p.location.line) for p in mine.problems] == [("session.repaired-torn-line", 6)]
    reopened = SessionFile.open(path)
    assert [e.id for e in reopened.entries] == [e.id for e in mine.entries]
    assert entry.line == reopened.entries[-1].line == 7


CONCURRENT_WRITER = """
    path, tag, go = sys.argv[1], sys.argv[2], sys.argv[3]
    session = SessionFile.open(path)
    print("ready", flush=True)
    while not os.path.exists(go):
        time.sleep(0.001)
    for i in range(40):
        session.append_message(user(f"{tag}{i}"))
"""


def test_two_processes_appending_produce_a_valid_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    root = SessionFile.create(path, cwd="/w").append_message({"role": "user", "content": [{"type": "text", "text": "root"}], "timestamp": 0})
    go = tmp_path / "go"
    procs = [_start_child(CONCURRENT_WRITER, str(path), tag, str(go)) for tag in ("a", "b")]
    assert [proc.stdout.readline().strip() for proc in procs] == ["ready", "ready"]  # both opened the file
    go.touch()
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err

    session = SessionFile.open(path)
    assert session.problems == []
    assert len(session.entries) == 81
    assert len({e.id for e in session.entries}) == 81
    for tag in ("a", "b"):  # each writer's entries form one chain under the root
        chain = [e for e in session.entries if e.message.content[0].text.startswith(tag)]
        assert [e.message.content[0].text for e in chain] == [f"{tag}{i}" for i in range(40)]
        assert chain[0].parent_id == root.id
        assert all(b.parent_id == a.id for a, b in zip(chain, chain[1:]))


LOCK_WAITER = """
    session = SessionFile.open(sys.argv[1])
    print("ready", flush=True)
    session.append_message(user("after the lock"))
    print("done", flush=True)
"""


def test_append_waits_for_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    SessionFile.create(path, cwd="/w")
    size = path.stat().st_size
    fd = os.open(path, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        proc = _start_child(LOCK_WAITER, str(path))
        assert proc.stdout.readline().strip() == "ready"
        try:
            proc.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            pass
        assert proc.poll() is None and path.stat().st_size == size  # blocked, nothing written
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and out.strip() == "done", err
    assert len(SessionFile.open(path).entries) == 1
