"""Issue 10, "only regular files, bounded": the one reader (pipeline/files.py) and every input
that goes through it. FIFOs, devices, directories, sparse giants and undecodable bytes are
one located line each, within a hang guard."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pipeline import files
from pipeline.errors import PipelineError
from pipeline.limits import FILE_LIMITS

from .conftest import cli, one_line_error


def sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as handle:
        handle.truncate(size)  # no disk space used: reading it would be the problem
    return path


# --------------------------------------------------------------------------- the reader itself


@pytest.mark.parametrize("special, what", [
    ("fifo", "a FIFO (named pipe)"), ("/dev/zero", "a device"), ("/dev/urandom", "a device"), ("dir", "a directory"),
])
def test_only_regular_files_are_read(tmp_path, special, what):
    path = {"fifo": tmp_path / "f", "dir": tmp_path}.get(special, Path(special))
    if special == "fifo":
        os.mkfifo(path)  # opening it for reading without O_NONBLOCK would wait for a writer forever
    with pytest.raises(PipelineError) as err:
        files.read_text(path, "context file")
    assert str(err.value) == f"{path}: cannot read context file: it is {what}, not a regular file (name a regular file)"


def test_a_sparse_giant_is_refused_from_its_size(tmp_path):
    big = sparse(tmp_path / "AGENTS.md", 1 << 30)
    with pytest.raises(PipelineError) as err:
        files.read_text(big, "context file")
    [problem] = err.value.problems
    assert problem.message == f"file too large: {1 << 30} bytes (the limit for a context file is {FILE_LIMITS['context file']} bytes)"
    assert problem.location.file == str(big)


def test_undecodable_bytes_name_line_column_and_byte_offset(tmp_path):
    path = tmp_path / "a.md"
    path.write_bytes(b"ok\ncaf\xe9!\n")
    with pytest.raises(PipelineError) as err:
        files.read_text(path, "context file")
    assert str(err.value).startswith(f"{path}:2:4: not UTF-8 text: invalid byte 0xe9 at byte offset 6")
    assert files.read_text(path, "template", lenient=True) == "ok\ncaf\ufffd!\n"  # pi's reading, kept for discovery


def test_paths_the_system_cannot_take_are_located_errors(tmp_path):
    for path, reason in ((tmp_path / ("x" * 300), "the path is longer than the system allows"),
                         (tmp_path / "\ud800", "the path cannot be used")):
        with pytest.raises(PipelineError) as err:
            files.read_text(path, "profile")
        assert reason in str(err.value)


def test_stdin_is_capped_and_strict():
    import io

    with pytest.raises(PipelineError, match="stdin too large: more than"):
        files.read_stream(io.BytesIO(b"a" * (FILE_LIMITS["stdin"] + 10)), "stdin", "<stdin>")
    with pytest.raises(PipelineError, match=r"<stdin>:1:4: not UTF-8 text: invalid byte 0xff at byte offset 3"):
        files.read_stream(io.BytesIO(b"/x \xff"), "stdin", "<stdin>")


def test_visited_dirs_detect_a_directory_reached_again(tmp_path):
    (tmp_path / "loop").symlink_to(tmp_path)
    seen = files.VisitedDirs()
    assert seen.enter(tmp_path) and not seen.enter(tmp_path / "loop") and not seen.enter(tmp_path / "loop" / "loop")


# --------------------------------------------------------------------------- every input through it


@pytest.mark.parametrize("flag, what", [
    ("--context-file", "context file"), ("--append", "append prompt"), ("--custom-prompt", "custom prompt"),
    ("--scenario", "scenario"),
])
def test_a_fifo_as_render_input_is_an_error_not_a_hang(fifo, flag, what):
    run = cli("render", "default", flag, str(fifo))
    assert run.code == 1
    one_line_error(run, f"{fifo}: cannot read {what}: it is a FIFO (named pipe), not a regular file")


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_as_context_file_is_an_error_not_a_memory_error(device):
    run = cli("render", "default", "--context-file", device)
    assert run.code == 1
    one_line_error(run, f"{device}: cannot read context file: it is a device, not a regular file")


def test_a_discovered_fifo_system_md_is_an_error_not_a_hang(tmp_path):
    (tmp_path / ".pi").mkdir()
    os.mkfifo(tmp_path / ".pi" / "SYSTEM.md")
    run = cli("render", "default", "--discover", cwd=tmp_path)
    assert run.code == 1
    one_line_error(run, "SYSTEM.md: cannot read prompt file: it is a FIFO (named pipe), not a regular file")


def test_a_discovered_directory_system_md_stands_for_itself_as_in_pi(tmp_path):
    (tmp_path / ".pi" / "SYSTEM.md").mkdir(parents=True)
    run = cli("render", "default", "--discover", cwd=tmp_path)
    assert run.code == 0 and run.out.startswith(str(tmp_path / ".pi" / "SYSTEM.md").encode())


def test_a_sparse_1gb_agents_md_is_a_located_error(tmp_path):
    sparse(tmp_path / "AGENTS.md", 1 << 30)
    run = cli("render", "default", "--discover", cwd=tmp_path)
    assert run.code == 1
    one_line_error(run, "AGENTS.md: file too large: 1073741824 bytes", "limit for a context file")  # the cwd's
    assert "MemoryError" not in run.err


def test_a_fifo_named_agents_md_is_skipped_as_pi_skips_non_files(tmp_path):
    os.mkfifo(tmp_path / "AGENTS.md")
    (tmp_path / "CLAUDE.md").write_text("claude rules\n")
    run = cli("render", "default", "--discover", cwd=tmp_path)
    assert run.code == 0 and b"claude rules" in run.out and "Traceback" not in run.err


def test_undecodable_context_file_names_the_byte_offset(tmp_path):
    bad = tmp_path / "ctx.md"
    bad.write_bytes(b"line one\n\xff\xfe\n")
    run = cli("render", "default", "--context-file", str(bad))
    assert run.code == 1
    one_line_error(run, f"{bad}:2:1: cannot use context file: not UTF-8 text: invalid byte 0xff at byte offset 9")


def test_fifo_and_device_profiles_and_extends_targets(tmp_path, fifo):
    run = cli("validate", str(fifo))  # validate reports on stdout
    assert run.code == 1 and b"it is a FIFO (named pipe), not a regular file" in run.out and "Traceback" not in run.err
    run = cli("validate", "/dev/zero")
    assert run.code == 1 and b"it is a device, not a regular file" in run.out
    child = tmp_path / "child.yaml"
    child.write_text(f"extends: {fifo}\n")
    run = cli("render", str(child))
    assert run.code == 1
    one_line_error(run, f"{child}:1:10: extends: `extends` target {fifo} is not a regular file")


def test_an_extends_path_longer_than_the_os_allows_is_located(tmp_path):
    child = tmp_path / "child.yaml"
    child.write_text("extends: " + "a" * 5000 + "\n")
    run = cli("render", str(child))
    assert run.code == 1
    one_line_error(run, f"{child}:1:10: extends:", "cannot be read: the path is longer than the system allows")
    run = cli("render", "b" * 300)  # a profile argument too long to stat
    assert run.code == 1
    one_line_error(run, "cannot read profile: the path is longer than the system allows")


@pytest.mark.parametrize("command", [["templates"], ["expand", "/a b"], ["render", "default", "--discover"]])
def test_a_5000_character_agent_dir_is_a_clear_error(command):
    run = cli(*command, env={"PI_CODING_AGENT_DIR": "/x" * 2500})
    assert run.code == 1
    one_line_error(run, "$PI_CODING_AGENT_DIR: cannot use the agent directory: the path is 5000 bytes long")


def test_a_session_beyond_its_limit_is_refused_from_its_size(tmp_path):
    big = sparse(tmp_path / "s.jsonl", FILE_LIMITS["session file"] + 1)
    run = cli("context", str(big))
    assert run.code == 1
    one_line_error(run, f"{big}: file too large: {FILE_LIMITS['session file'] + 1} bytes")


def test_a_session_line_beyond_the_line_limit_is_streamed_past(tmp_path, monkeypatch):
    from pipeline.session import reader
    from pipeline.session.reader import Overlong

    monkeypatch.setattr(reader, "_BLOCK", 64)  # many reads per line: the skip spans blocks

    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a":1}\n' + b"x" * 5000 + b"\n" + b'{"b":2}\n' + b"y" * 3000)
    with open(path, "rb") as handle:
        lines = list(reader._blocks(handle, max_line=1000))
    assert lines == [b'{"a":1}\n', Overlong(5001, True), b'{"b":2}\n', Overlong(3000, False)]


def test_a_session_fifo_is_refused_without_blocking(fifo):
    run = cli("context", str(fifo))
    assert run.code == 1
    one_line_error(run, "cannot read session file: it is a FIFO (named pipe), not a regular file")


def test_big_stdin_is_capped_not_hung():
    run = cli("expand", "-", input=b"/x " + b"a" * (50 * 1000 * 1000))
    assert run.code == 1
    one_line_error(run, "<stdin>: stdin too large: more than 16777216 bytes")


def test_non_utf8_stdin_is_one_line_even_with_a_strict_locale():
    run = cli("expand", "-", input=b"/x caf\xe9", env={"PYTHONIOENCODING": "utf-8:strict"})
    assert run.code == 1
    one_line_error(run, "<stdin>:1:7: not UTF-8 text: invalid byte 0xe9 at byte offset 6")


def test_the_session_loader_reads_past_an_overlong_line(tmp_path, monkeypatch):
    """The indexing loader (blocks of lines) streams past a line beyond the limit, reports it, keeps the rest."""
    from pipeline.session import reader

    monkeypatch.setattr(reader, "SESSION_MAX_LINE", 1000)
    monkeypatch.setattr(reader, "_BLOCK", 64)
    header = b'{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n'
    def message(i, parent):
        return ('{"type":"message","id":"m%d","parentId":%s,"timestamp":"2026-01-01T00:00:0%d.000Z",'
                '"message":{"role":"user","content":"hi %d","timestamp":%d}}\n' % (i, parent, i, i, i)).encode()
    path = tmp_path / "s.jsonl"
    path.write_bytes(header + message(1, "null") + b"x" * 5000 + b"\n" + message(2, '"m1"') + b"y" * 3000)
    loaded = reader.load(path)
    assert [entry.id for entry in loaded.entries] == ["m1", "m2"]
    codes = [(problem.code, problem.location.line) for problem in loaded.problems]
    assert ("session.line-too-long", 3) in codes and ("session.line-too-long", 5) in codes


def test_errors_say_what_went_wrong_for_callers_that_word_it_themselves(tmp_path):
    """``files.reason``: the runtime's tools turn these into the profile's texts."""
    os.mkfifo(tmp_path / "pipe")
    big = sparse(tmp_path / "big.log", FILE_LIMITS["tool file"] + 1)
    found = {}
    for name in ("pipe", "big.log", "missing.txt"):
        with pytest.raises(PipelineError) as err:
            files.read_bytes(tmp_path / name, "tool file")
        found[name] = (files.reason(err.value), err.value.size)
    assert found == {"pipe": ("not-regular", None), "big.log": ("file-too-large", big.stat().st_size),
                     "missing.txt": ("unreadable", None)}
    assert files.reason(PipelineError("other")) is None
    with pytest.raises(PipelineError) as err:  # a refused FIFO keeps its domain's code
        files.read_bytes(tmp_path / "pipe", "profile")
    assert err.value.problems[0].code == "profile.unreadable"
