"""Malformed profiles: each prints exactly the expected lines, exits 1, never a traceback."""

from __future__ import annotations

import pytest

from cases import CASES, STANDALONE, Case
from conftest import run_process, write_files


def test_the_table_is_large_enough():
    assert len(CASES) >= 40
    assert len({case.id for case in CASES}) == len(CASES)


def test_the_standalone_base_is_valid(cli, tmp_path):
    write_files(tmp_path, {"p.yaml": STANDALONE})
    run = cli("validate", "p.yaml")
    assert (run.code, run.out, run.err) == (0, "1 profile ok\n", "")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_malformed_profile(case: Case, cli, tmp_path):
    write_files(tmp_path, case.files)
    run = cli("validate", case.main)
    assert run.lines == list(case.expected)
    assert run.code == 1
    assert run.err == ""


def test_no_traceback_in_a_real_process(tmp_path):
    """Every malformed file at once, through the installed command in a fresh process.

    Messages may name files (relative to the run's directory), so this compares the
    locations; the exact lines are checked in-process above.
    """
    args = []
    for case in CASES:
        write_files(tmp_path / case.id, case.files)
        args.append(f"{case.id}/{case.main}")
    run = run_process("validate", *args, cwd=tmp_path)
    assert run.code == 1
    assert "Traceback" not in run.err and "Traceback" not in run.out
    assert run.err == ""
    for case in CASES:
        got = [line.split(": ")[0] for line in run.lines if line.startswith(case.id + "/")]
        assert got == [f"{case.id}/{line.split(': ')[0]}" for line in case.expected], case.id
