"""Reading template files imports none of the argument language: a start that loads a
project's templates parses a body only when that template is used (or analyzed)."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import sys
from pipeline.templates.discovery import load_templates
from pipeline.templates.invoke import expand_input
from pathlib import Path
loaded = load_templates(cwd=Path(sys.argv[1]), agent=Path(sys.argv[1]) / "agent")
before = [m for m in ("pipeline.templates.plan", "pipeline.templates.scanner", "pipeline.templates.analysis") if m in sys.modules]
print(before, [t.name for t in loaded.templates], expand_input("/review a.py", loaded.templates))
print("pipeline.templates.plan" in sys.modules)
"""


def test_loading_templates_parses_no_body(tmp_path):
    prompts = tmp_path / ".pi" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text("Review $1 ${2:-closely}", encoding="utf-8")
    out = subprocess.run([sys.executable, "-c", CODE, str(tmp_path)], capture_output=True, text=True, check=True)
    assert out.stdout == "[] ['review'] Review a.py closely\nTrue\n", out.stderr
