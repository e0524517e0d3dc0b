"""`python -m pipeline.loopback`: a newcomer's model server, started as a user would, used by `pipeline run`."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import pytest


def _run(base_url: str, tmp_path, text: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline", "run", "--session", str(tmp_path / "s.jsonl"), "--new",
                           "--llm", "openai", "--model", "loopback", "--base-url", base_url, "--api-key-env",
                           "LOOPBACK_KEY", text], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "LOOPBACK_KEY": "any"})


@pytest.mark.parametrize("args, answer", [((), "echo: add a --version flag"), (("--reply", "scripted"), "scripted")])
def test_the_printed_command_gets_an_answer_without_a_key(tmp_path, args, answer):
    proc = subprocess.Popen([sys.executable, "-m", "pipeline.loopback", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        base = re.search(r"--base-url (\S+)", line).group(1)
        assert "pipeline chat --session" in line and base.startswith("http://127.0.0.1:")
        done = _run(base, tmp_path, "add a --version flag")
        assert done.returncode == 0, done.stderr
        assert answer in done.stdout
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
