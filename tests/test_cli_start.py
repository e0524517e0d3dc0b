"""A command that shows no help builds its own parser alone; help and unknown commands see them all."""

from __future__ import annotations

import ast
import subprocess
import sys

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
    assert ast.literal_eval(modules) == ["tokens", "triggers"]
