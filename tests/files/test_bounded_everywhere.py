"""Issue 21 item 23: the readers the last round named go through the bounded reader. Each
is given a FIFO and a file over its limit, in a real process with a hang guard: the
runtime's ``read`` tool, ``git show`` in ``pipeline diff``, the readers of ``pipeline
import`` (pi's settings, SYSTEM.md, APPEND_SYSTEM.md; another tool's setup) and
``pipeline init`` (its pre-commit config)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.files import limit

from .conftest import HANG_GUARD, ROOT, cli, one_line_error

GIT = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
FIFO = "it is a FIFO (named pipe), not a regular file"


def sparse(path: Path, size: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.truncate(size)
    return path


# --------------------------------------------------------------------------- runtime read tool


def test_the_read_tool_refuses_a_fifo_and_an_oversize_file(tmp_path):
    """(tests/runtime/test_tool_bounds.py holds the exact texts; here: in a process of its own,
    so a read that blocks on the FIFO fails by the hang guard.)"""
    os.mkfifo(tmp_path / "pipe")
    sparse(tmp_path / "huge.log", limit("tool file") + 1)
    code = ("import json, sys\n"
            "from pipeline import compile_profile\n"
            "from pipeline.runtime.tools import builtin_tools\n"
            "[read] = builtin_tools(['read'], sys.argv[1], compile_profile('default').run_plan)\n"
            "for name in ('pipe', 'huge.log'):\n"
            "    out = read.function({'path': name})\n"
            "    print(json.dumps([out.is_error, out.blocks()[0]['text']]))\n")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                          timeout=HANG_GUARD)
    assert done.returncode == 0, done.stderr
    (fifo_error, fifo), (huge_error, huge) = map(json.loads, done.stdout.splitlines())
    assert fifo_error and "pipe" in fifo and "regular file" in fifo, fifo
    assert huge_error and str(limit("tool file") + 1) in huge, huge


# --------------------------------------------------------------------------- git show in diff


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run([*GIT, "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "p.yaml").write_text((ROOT / "configs" / "minimal.yaml").read_text())
    (tmp_path / "big.yaml").write_bytes(b"# " + b"x" * limit("profile") + b"\n")
    subprocess.run([*GIT, "add", "p.yaml", "big.yaml"], cwd=tmp_path, check=True)
    subprocess.run([*GIT, "commit", "-qm", "x"], cwd=tmp_path, check=True)
    return tmp_path


def test_diff_refuses_an_oversize_blob_before_reading_it(repo):
    run = cli("diff", "HEAD:big.yaml", "p.yaml", cwd=repo)
    assert run.code == 2
    one_line_error(run, "HEAD:big.yaml: file too large:", f"the limit for a profile is {limit('profile')} bytes")


def test_diff_against_a_fifo_does_not_hang(repo):
    os.mkfifo(repo / "pipe.yaml")
    run = cli("diff", "HEAD:p.yaml", "pipe.yaml", cwd=repo)
    assert run.code == 2
    one_line_error(run, "pipe.yaml: cannot read profile:", FIFO)


# --------------------------------------------------------------------------- import and init


@pytest.fixture
def agent(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    (tmp_path / "agent").mkdir()
    return tmp_path / "agent"


def _env(tmp_path: Path) -> dict:
    return {"HOME": str(tmp_path / "home")}


def test_import_pi_refuses_a_fifo_system_md(tmp_path, agent):
    os.mkfifo(agent / "SYSTEM.md")
    run = cli("import", "pi", str(agent), "-o", str(tmp_path / "out.yaml"), cwd=tmp_path, env=_env(tmp_path))
    assert run.code == 1
    one_line_error(run, f"{(agent / 'SYSTEM.md').relative_to(tmp_path)}: cannot read prompt file: {FIFO}")
    assert not (tmp_path / "out.yaml").exists()


def test_import_pi_refuses_an_oversize_append_system_md(tmp_path, agent):
    sparse(agent / "APPEND_SYSTEM.md", 1 << 31)
    run = cli("import", "pi", str(agent), "-o", str(tmp_path / "out.yaml"), cwd=tmp_path, env=_env(tmp_path))
    assert run.code == 1
    one_line_error(run, f"{(agent / 'APPEND_SYSTEM.md').relative_to(tmp_path)}: file too large: {1 << 31} bytes")


@pytest.mark.parametrize("make", ["fifo", "huge"])
def test_import_gemini_settings_fifo_or_oversize_is_a_warning(tmp_path, make):
    home = tmp_path / "gem"
    home.mkdir()
    (tmp_path / "home").mkdir()
    settings = home / "settings.json"
    if make == "fifo":
        os.mkfifo(settings)
    else:
        sparse(settings, limit("settings file") + 1)
    run = cli("import", "gemini", str(home), cwd=tmp_path, env=_env(tmp_path))
    assert run.code == 0 and "Traceback" not in run.err
    assert run.err.startswith(f"{settings.relative_to(tmp_path)}: warning: ")  # inside the cwd: relative
    assert (FIFO in run.err) if make == "fifo" else ("file too large" in run.err)


@pytest.mark.parametrize("make", ["fifo", "huge"])
def test_init_pre_commit_config_fifo_or_oversize(tmp_path, make):
    subprocess.run([*GIT, "init", "-q"], cwd=tmp_path, check=True)
    config = tmp_path / ".pre-commit-config.yaml"
    if make == "fifo":
        os.mkfifo(config)
    else:
        sparse(config, limit("pre-commit config") + 1)
    run = cli("init", cwd=tmp_path, env=_env(tmp_path) | {"HOME": str(tmp_path)})
    assert "Traceback" not in run.err
    assert run.code == 1
    assert str(config.name) in run.err
    assert (FIFO in run.err) if make == "fifo" else ("file too large" in run.err)
