"""Issue 10: output that cannot be written (a full disk) is one line and an exit status
that tells the truth about what was written; a closed pipe (issue 21: `| head -1`) ends
quietly, as git, grep and cat do; Ctrl-C during start-up is one line, never a traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import HANG_GUARD, ROOT, cli, one_line_error

EXIT_OUTPUT = 4
SESSION = ROOT / "tests" / "data" / "sessions" / "real" / "long-coding.jsonl"


def to_dev_full(*argv: str, cwd: Path | None = None):
    with open("/dev/full", "wb") as full:
        return cli(*argv, cwd=cwd, stdout=full)


@pytest.fixture
def session(tmp_path: Path) -> Path:
    copy = tmp_path / "s.jsonl"
    copy.write_bytes(SESSION.read_bytes())
    return copy


@pytest.fixture
def warned_profile(tmp_path: Path) -> Path:
    profile = tmp_path / "p.yaml"
    profile.write_text("extends: builtin:default\nbogus_key: 1\n")  # a problem to report
    return profile


def test_render_to_a_full_disk(tmp_path):
    run = to_dev_full("render", "default")
    assert run.code == EXIT_OUTPUT
    one_line_error(run, "pipeline render: cannot write the output: no space left on the device; the output is incomplete")


def test_context_to_a_full_disk(session):
    run = to_dev_full("context", str(session))
    assert run.code == EXIT_OUTPUT
    one_line_error(run, "pipeline context: cannot write the output: no space left on the device")


def test_validate_github_format_to_a_full_disk_is_not_exit_0(warned_profile):
    assert cli("validate", str(warned_profile), "--format", "github").code == 1  # the output itself: fine
    run = to_dev_full("validate", str(warned_profile), "--format", "github")
    assert run.code == EXIT_OUTPUT
    one_line_error(run, "pipeline validate: cannot write the output: no space left on the device")


def test_compact_to_a_full_disk_says_the_entry_was_written(session):
    lines_before = session.read_bytes().count(b"\n")
    run = to_dev_full("compact", str(session), "--keep-recent", "1000")
    assert run.code == 0 and "Traceback" not in run.err
    assert session.read_bytes().count(b"\n") == lines_before + 1  # the entry is there
    [warning] = [line for line in run.lines if "warning:" in line]
    assert warning.startswith(f"{session}: warning: the compaction entry ")
    assert "WAS appended, but its summary could not be printed: no space left on the device" in warning


EXIT_CLOSED_PIPE = 141  # 128 + SIGPIPE, what `git log | head -1` ends with


def _closed_after_first_byte(*argv: str) -> tuple[bytes, int, str]:
    proc = subprocess.Popen([sys.executable, "-m", "pipeline", *argv],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.read(1)
    proc.stdout.close()  # `| head -c1`
    err = proc.stderr.read().decode()
    return first, proc.wait(timeout=HANG_GUARD), err


def test_render_into_a_pipe_closed_early_ends_quietly(tmp_path):
    big = tmp_path / "ctx.md"
    big.write_text("a" * 3_000_000)  # far more than a pipe holds
    first, code, err = _closed_after_first_byte("render", "default", "--context-file", str(big))
    assert first == b"Y"
    assert err == ""  # nothing on stderr, no "Exception ignored" from the interpreter's flush either
    assert code == EXIT_CLOSED_PIPE


def test_context_into_a_pipe_closed_early_ends_quietly(session):
    first, code, err = _closed_after_first_byte("context", str(session), "--format", "json")
    assert first and err == "" and code in (0, EXIT_CLOSED_PIPE)


def test_compact_into_a_pipe_closed_early_ends_quietly(session):
    """The entry is appended (and said so on stderr, as on every run); the summary's reader
    went away: no warning about it, the closed pipe's status."""
    lines_before = session.read_bytes().count(b"\n")
    proc = subprocess.Popen([sys.executable, "-m", "pipeline", "compact", str(session), "--keep-recent", "1000"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the summary is printed
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=HANG_GUARD) == EXIT_CLOSED_PIPE
    assert session.read_bytes().count(b"\n") == lines_before + 1
    assert "warning" not in err and "appended compaction" in err and "Traceback" not in err


def test_head_dash_1_in_a_shell_pipeline(tmp_path):
    big = tmp_path / "ctx.md"
    big.write_text("line\n" * 600_000)
    done = subprocess.run(["bash", "-c", f'set -o pipefail; "{sys.executable}" -m pipeline render default '
                           f'--context-file "{big}" | head -1; echo "status=${{PIPESTATUS[0]}}" >&2'],
                          cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD)
    assert done.stdout.count("\n") == 1
    assert done.stderr == f"status={EXIT_CLOSED_PIPE}\n"


def test_a_complete_write_into_a_pipe_is_success():
    proc = subprocess.Popen([sys.executable, "-m", "pipeline", "render", "default"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=HANG_GUARD)
    assert proc.returncode == 0 and out.startswith(b"Y") and err == b""


# --------------------------------------------------------------------------- SIGINT during start-up

#: What the ``pipeline`` console script runs, with a line that says when ``main`` is about
#: to start. Before that come Python's own start-up (``site``; a signal there is the
#: interpreter's, which no program can handle) and the import of ``pipeline`` and
#: ``pipeline.cli``, which import nothing else (the next test but one holds them to it);
#: everything heavy (argparse, the commands, pydantic, ruamel.yaml) is imported inside
#: ``main``, where Ctrl-C is handled. On a loaded machine the signal can still land in the
#: few steps between the ``print`` (still inside it, once the line is out) and the call of ``main``: that interrupt is
#: raised in this line's own frame (no deeper frame), the starter exits with
#: ``BEFORE_MAIN`` and the attempt is made again; one that escapes ``main`` has frames
#: below this one and is shown as the traceback it is.
BEFORE_MAIN = 99
STARTER = ("import sys\nfrom pipeline.cli import main\n"
           "try:\n    print('ready', flush=True)\n    code = main(sys.argv[1:])\n"
           "except KeyboardInterrupt as stop:\n"
           "    if stop.__traceback__.tb_next is not None: raise\n"
           f"    code = {BEFORE_MAIN}\n"
           "sys.exit(code)")


def _interrupted_start(delay_ms: float, profile) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", STARTER, "validate", str(ROOT / "configs"), str(profile)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline() == b"ready\n"
    time.sleep(delay_ms / 1000)
    proc.send_signal(signal.SIGINT)
    return proc


@pytest.mark.parametrize("delay_ms", [0, 20, 50, 100, 200])
def test_sigint_during_start_up_prints_no_traceback(delay_ms, warned_profile):
    for attempt in range(20):
        # A signal sent the moment "ready" is read can land before ``main`` on every try
        # (the child is still in the print); each retry waits half a millisecond longer.
        proc = _interrupted_start(delay_ms + attempt / 2, warned_profile)
        out, err = proc.communicate(timeout=HANG_GUARD)
        if proc.returncode != BEFORE_MAIN:
            break
    text = err.decode("utf-8", "replace")
    assert proc.returncode != BEFORE_MAIN, "every signal landed before main started"
    assert "Traceback" not in text and "KeyboardInterrupt" not in text and "panicked" not in text, text
    if proc.returncode == 130:
        assert text == "interrupted\n"
    else:
        assert proc.returncode == 1  # it finished first: the profile's own problem, reported in full


def test_sigint_handler_leaves_the_in_process_caller_alone():
    """``main`` handles Ctrl-C itself; it installs no signal handler of its own."""
    from pipeline.cli import main

    before = signal.getsignal(signal.SIGINT)
    hook = sys.unraisablehook
    assert main(["validate", str(ROOT / "configs" / "minimal.yaml")]) == 0
    assert signal.getsignal(signal.SIGINT) is before
    assert sys.unraisablehook is hook


def test_an_interrupt_the_interpreter_swallows_still_ends_the_command(capsys):
    """Ctrl-C inside a callback Python runs itself (an import lock's weakref callback, a
    ``__del__``) is printed as "Exception ignored" and lost; the command notes it instead
    and ends as interrupted, without that traceback."""
    from pipeline.cli import _CtrlC

    class Finalizer:
        def __del__(self):
            raise KeyboardInterrupt

    ctrl_c = _CtrlC()
    ctrl_c.install()
    try:
        Finalizer()  # collected at once: its exception goes to sys.unraisablehook
    finally:
        ctrl_c.restore()
    assert ctrl_c.swallowed
    assert "Exception ignored" not in capsys.readouterr().err


def test_importing_the_cli_runs_no_heavy_import():
    """The window before ``main`` catches Ctrl-C is the import of two small modules."""
    code = ("import sys; before = set(sys.modules); import pipeline.cli; "
            "print(sorted(m for m in set(sys.modules) - before if not m.startswith('pipeline') and m != '__future__'))")
    # (__future__ is the few lines behind `from __future__ import ...`; an editable install has loaded it already)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=HANG_GUARD)
    assert done.returncode == 0
    assert eval(done.stdout) == []  # noqa: S307 - our own output, a list of names
