"""A command that shows no help builds its own parser alone; help and unknown commands see them all."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import pytest

CODE = """
import sys, io, contextlib
from pipeline.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as done:  # --help
        code = done.code
print(code, sorted(m.rsplit('.', 1)[1] for m in sys.modules if m.startswith('pipeline.cli.') and '._' not in m))
"""


def run(*argv: str) -> str:
    return subprocess.run([sys.executable, "-c", CODE, *argv], capture_output=True, text=True, check=True).stdout


def test_one_command_imports_its_module_alone():
    assert run("schema") == "0 ['schema']\n"


def test_help_and_a_misspelt_command_list_every_command():
    for argv in (("schema", "--help"), ("shema",), ()):
        code, modules = run(*argv).split(" ", 1)
        assert "render" in modules and "validate" in modules and code in ("0", "2"), argv


def test_a_run_that_does_not_compact_imports_no_summary_machinery(tmp_path):
    """``pipeline run`` checks the threshold (token estimates) but plans, summarizes and
    reads template bodies only when it must: a plain answer imports none of that."""
    import os

    from pipeline.testing.loopback import LoopbackServer

    code = CODE.replace("m.startswith('pipeline.cli.') and '._' not in m", "m.startswith('pipeline.compaction.')")
    server = LoopbackServer(["hello"]).start()
    try:
        env = {**os.environ, "OPENAI_API_KEY": "none", "XDG_CACHE_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)}
        done = subprocess.run([sys.executable, "-c", code, "run", "--session", str(tmp_path / "s.jsonl"), "--new",
                               "--base-url", server.openai_base_url, "--model", "m", "say hi"],
                              capture_output=True, text=True, check=True, env=env, cwd=tmp_path)
    finally:
        server.stop()
    code_, modules = done.stdout.split(" ", 1)
    assert code_ == "0"
    assert ast.literal_eval(modules) == ["tokens"]


def test_the_console_entry_exits_with_mains_status_and_a_frozen_heap(monkeypatch):
    """``pipeline.cli.command`` (the console script, ``python -m pipeline``): main's status as the
    exit status, every object frozen first (the shutdown then skips a full collection)."""
    import gc

    import pipeline.cli as cli

    monkeypatch.setattr(cli, "main", lambda: 3)
    try:
        with pytest.raises(SystemExit) as ended:
            cli.command()
        assert ended.value.code == 3 and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_a_run_sends_its_turn_without_importing_httpx(tmp_path):
    """``pipeline run`` answers over http.client (``pipeline.llm.post``): httpx, imported only by
    a summary call, is not among the modules a run imports."""
    from pipeline.testing.loopback import LoopbackServer

    env = {**os.environ, "OPENAI_API_KEY": "none", "XDG_CACHE_HOME": str(tmp_path / "cache"),
           "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    with LoopbackServer(["hi there"]) as server:
        done = subprocess.run([sys.executable, "-X", "importtime", "-m", "pipeline", "run", "--session",
                               str(tmp_path / "s.jsonl"), "--new", "--base-url", server.openai_base_url,
                               "--model", "m", "--cwd", str(tmp_path), "say hi"],
                              capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == "hi there\n", done.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "pipeline.llm.post" in imported
    assert not {name for name in imported if name.split(".")[0] in ("httpx", "httpcore")}


def test_a_warm_run_starts_from_the_cached_run_plan_without_pydantic(tmp_path):
    """A warm ``pipeline run`` (the built-in and its flags compiled once, by the first run) reads
    the run plan from the cache's head: no pydantic module is imported. A run that compacts
    loads the whole profile when the compaction asks for it, and compacts."""
    import json

    from pipeline.testing.loopback import LoopbackServer

    env = {**os.environ, "OPENAI_API_KEY": "none", "XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path),
           "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    session = tmp_path / "s.jsonl"
    with LoopbackServer(["a long answer " * 50] * 10) as server:
        def run(*extra: str) -> subprocess.CompletedProcess:
            return subprocess.run([sys.executable, "-X", "importtime", "-m", "pipeline", "run", "--session", str(session),
                                   "--base-url", server.openai_base_url, "--model", "m", "--keep-recent", "50",
                                   "--cwd", str(tmp_path), *extra], capture_output=True, text=True, env=env, cwd=tmp_path)

        def imported(done: subprocess.CompletedProcess) -> set[str]:
            return {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}

        cold = run("--new", "first")
        warm = run("second")
        compacting = run("--compact", "third")
    assert cold.returncode == warm.returncode == compacting.returncode == 0, compacting.stderr[-2000:]
    assert warm.stdout.startswith("a long answer") and "pipeline.model.run_plan" in imported(warm)
    assert "pydantic" in imported(cold)  # the first run compiles the profile (and fills the cache)
    assert not {name for name in imported(warm) if name.split(".")[0] in ("pydantic", "pydantic_core")}
    assert "compacted:" in compacting.stderr
    assert "compaction" in [json.loads(line)["type"] for line in session.read_text(encoding="utf-8").splitlines()]
