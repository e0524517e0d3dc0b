"""A command that shows no help builds its own parser alone; help and unknown commands see them all."""

from __future__ import annotations

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
