"""`pipeline proxy`'s flags: a value it cannot take is a usage error (exit 2) naming the flag and the
problem's code, before anything listens or any store is opened."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("flag, value, words", [
    ("--listen", "localhost", "is not HOST:PORT"),
    ("--openai-url", "ftp://x", "is not an http(s) URL"),
    ("--store", "postgres://x", "is not sqlite:PATH or redis://HOST:PORT/DB"),
    ("--store", "redis://127.0.0.1:6379/zero", "is not redis://HOST:PORT/DB"),
    ("--store", "redis://127.0.0.1:notaport/0", "is not redis://HOST:PORT/DB"),
    ("--store", "redis:///0", "is not redis://HOST:PORT/DB"),
    ("--max-body", "0", "is not a size in bytes"),
    ("--context-window", "0", "is not a number of tokens"),
    ("--prepare-at", "1.5", "is not a share below 1"),
])
def test_a_bad_flag_is_a_usage_error_naming_it(tmp_path, flag, value, words):
    done = subprocess.run([sys.executable, "-m", "pipeline", "proxy", flag, value, "--store" if flag != "--store"
                           else "--graceful", f"sqlite:{tmp_path / 's.db'}" if flag != "--store" else "1"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert flag in done.stderr and words in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "s.db").exists()
