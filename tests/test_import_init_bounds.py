"""`pipeline import` and `pipeline init` read settings.json and .pre-commit-config.yaml through
the bounded reader: a FIFO, a device or an oversize file is one located line, never a hang;
bytes that are not UTF-8 in a file `init` rewrites are a located error, not a traceback.

Each command runs in a real process with a timeout, so a read that blocks fails the test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline import files

FIFO_LINE = "cannot read {kind}: it is a FIFO (named pipe), not a regular file (name a regular file)"


def pipeline(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PI_CODING_AGENT_DIR"}
    env.update(HOME=str(cwd / "home"), PYTHONIOENCODING="utf-8")
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=120)


def sparse(path: Path, size: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.truncate(size)
    return path


@pytest.fixture
def agent(tmp_path) -> Path:
    (tmp_path / "home").mkdir()
    (tmp_path / "agent").mkdir()
    return tmp_path / "agent"


def test_import_pi_refuses_a_fifo_settings_file(tmp_path, agent):
    os.mkfifo(agent / "settings.json")
    run = pipeline("import", "pi", str(agent), cwd=tmp_path)
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == f"agent/settings.json: {FIFO_LINE.format(kind='settings file')}\n"


def test_import_pi_refuses_an_oversize_project_settings_file(tmp_path, agent):
    (agent / "settings.json").write_text('{"compaction": {"reserveTokens": 9000}}')
    size = files.limit("settings file") + 1
    sparse(tmp_path / "proj" / ".pi" / "settings.json", size)
    run = pipeline("import", "pi", str(agent), "--project", str(tmp_path / "proj"), cwd=tmp_path)
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == (f"proj/.pi/settings.json: file too large: {size} bytes (the limit for a settings file is "
                          f"{size - 1} bytes) (see docs/limits.md)\n")


def test_import_pi_reads_settings_as_pi_does(tmp_path, agent):
    """Bytes that are not UTF-8 become U+FFFD, as in pi; the numbers are still imported."""
    (agent / "settings.json").write_bytes(b'{"theme": "caf\xe9", "compaction": {"reserveTokens": 9000}}')
    run = pipeline("import", "pi", str(agent), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "reserve_tokens: 9000" in run.stdout


def test_import_gemini_warns_about_a_fifo_settings_file_and_keeps_the_defaults(tmp_path):
    home = tmp_path / "gem"
    home.mkdir(parents=True)
    (tmp_path / "home").mkdir()
    os.mkfifo(home / "settings.json")
    run = pipeline("import", "gemini", str(home), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stderr == f"gem/settings.json: warning: {FIFO_LINE.format(kind='settings file')}\n"
    assert "GEMINI.md" in run.stdout


@pytest.fixture
def repo(tmp_path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path


@pytest.mark.parametrize("make, line", [
    (lambda p: os.mkfifo(p), f"{{path}}: {FIFO_LINE.format(kind='pre-commit config')}"),
    (lambda p: sparse(p, files.limit("pre-commit config") + 1),
     "{path}: file too large: 1048577 bytes (the limit for a pre-commit config is 1048576 bytes) (see docs/limits.md)"),
    (lambda p: p.write_bytes(b"repos:\n  - repo: caf\xe9\n"),
     "{path}:2:14: not UTF-8 text: invalid byte 0xe9 at byte offset 20 (save the file as UTF-8)"),
], ids=["fifo", "oversize", "not-utf8"])
def test_init_reads_the_pre_commit_config_through_the_bounded_reader(repo, make, line):
    config = repo / ".pre-commit-config.yaml"
    make(config)
    run = pipeline("init", str(repo), "--install", "context-pipeline==0.1.0", cwd=repo)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert line.format(path=config.relative_to(repo)) in run.stderr.splitlines()  # relative to the cwd


def test_init_force_never_writes_into_a_fifo(repo):
    (repo / "agent-profiles").mkdir()
    os.mkfifo(repo / "agent-profiles" / "team.yaml")
    run = pipeline("init", str(repo), "--force", cwd=repo)
    assert run.returncode == 1
    assert run.stderr.splitlines()[-1].startswith("agent-profiles/team.yaml: not a regular file")
