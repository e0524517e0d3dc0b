"""`pipeline expand` and `pipeline templates`, run as real processes on real directories."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def pipeline(*args: str, cwd: Path, env: dict | None = None, stdin: str | None = None):
    return subprocess.run(
        [sys.executable, "-m", "pipeline", *args],
        cwd=cwd, env={**os.environ, **(env or {})}, input=stdin,
        capture_output=True, text=True, encoding="utf-8", timeout=60,
    )


@pytest.fixture()
def prompts(tmp_path) -> Path:
    d = tmp_path / "prompts"
    d.mkdir()
    (d / "review.md").write_text(
        "---\ndescription: Review a file\nargument-hint: <file> [focus...]\n---\n"
        "Review $1 focusing on ${@:2}. Keep ${1} literal.\n", encoding="utf-8")
    (d / "bad.md").write_text("---\ndescription: [never closed\n---\nbody\n", encoding="utf-8")
    os.symlink(d / "gone.md", d / "broken.md")
    return d


def test_expand_uses_the_valid_template_and_reports_the_others(prompts, tmp_path):
    done = pipeline("expand", "/review src/a.py speed 'memory use'", "--templates-dir", str(prompts), cwd=tmp_path)
    assert done.returncode == 0
    assert done.stdout == "Review src/a.py focusing on speed memory use. Keep ${1} literal.\n"
    lines = done.stderr.splitlines()
    assert lines[2:] == ["    2 | description: [never closed", "      |                           ^", "2 warnings in 2 files"]  # its end, as pi
    broken = next(l for l in lines if l.startswith("prompts/broken.md: "))  # relative to the cwd, as validate
    bad = next(l for l in lines if l.startswith("prompts/bad.md:2:27: "))
    assert "broken symbolic link" in broken and "No such file" in broken
    assert "invalid YAML frontmatter" in bad and "warning" in bad


def test_expand_json(prompts, tmp_path):
    done = pipeline("expand", "/review\ta.py", "--templates-dir", str(prompts), "--format", "json", cwd=tmp_path)
    assert done.returncode == 0
    out = json.loads(done.stdout)
    assert out == {
        "input": "/review\ta.py", "template": "review", "file": str(prompts / "review.md"),
        "args": ["a.py"], "expansion": "Review a.py focusing on . Keep ${1} literal.",
    }


@pytest.mark.parametrize("text", ["/unknown a b", "review a", "/REVIEW a", "/ review"])
def test_expand_leaves_other_input_unchanged(prompts, tmp_path, text):
    done = pipeline("expand", text, "--templates-dir", str(prompts), "--format", "json", cwd=tmp_path)
    out = json.loads(done.stdout)
    assert (done.returncode, out["template"], out["args"], out["expansion"]) == (0, None, [], text)


def test_expand_reads_stdin(prompts, tmp_path):
    done = pipeline("expand", "-", "--templates-dir", str(prompts), cwd=tmp_path, stdin="/review\nx.py\ny")
    assert done.stdout == "Review x.py focusing on y. Keep ${1} literal.\n"


def test_expand_default_locations(tmp_path):
    home, proj = tmp_path / "home", tmp_path / "proj"
    (proj / ".pi" / "prompts").mkdir(parents=True)
    (home / ".pi" / "agent" / "prompts").mkdir(parents=True)
    (proj / ".pi" / "prompts" / "hi.md").write_text("project [$1]", encoding="utf-8")
    (home / ".pi" / "agent" / "prompts" / "hi.md").write_text("user [$1]", encoding="utf-8")
    (home / ".pi" / "agent" / "prompts" / "bye.md").write_text("user bye $@", encoding="utf-8")
    env = {"HOME": str(home), "PI_CODING_AGENT_DIR": ""}
    assert pipeline("expand", "/hi x", cwd=proj, env=env).stdout == "project [x]\n"
    assert pipeline("expand", "/bye a b", cwd=proj, env=env).stdout == "user bye a b\n"


def test_templates_lists_name_description_hint_arity_and_file(prompts, tmp_path):
    done = pipeline("templates", "--templates-dir", str(prompts), "--format", "json", cwd=tmp_path)
    assert done.returncode == 0
    [item] = json.loads(done.stdout)
    assert (item["name"], item["description"], item["argumentHint"]) == ("review", "Review a file", "<file> [focus...]")
    assert item["arity"] == {"hint": "<1> [rest...]", "required": [1], "optional": [], "variadicFrom": 2}
    assert item["file"] == "prompts/review.md" and item["source"] == "path"  # relative to the cwd, as validate
    assert item["findings"][0]["file"] == "prompts/review.md"
    [finding] = item["findings"]
    assert (finding["code"], finding["line"], finding["col"]) == ("template.bare-brace", 5, 36)
    assert "broken symbolic link" in done.stderr and "invalid YAML frontmatter" in done.stderr


def test_templates_text_table(prompts, tmp_path):
    done = pipeline("templates", "--templates-dir", str(prompts), cwd=tmp_path)
    header, row = done.stdout.splitlines()
    assert header.split()[:2] == ["NAME", "DESCRIPTION"]
    assert row.startswith("/review") and "<1> [rest...]" in row and row.endswith("  prompts/review.md")
    assert "prompts/review.md:5:36: warning: `${1}`" in done.stderr


def test_table_cells_show_control_characters_escaped(tmp_path):
    (tmp_path / "odd.md").write_text("---\ndescription: \"\\e[31mred\\u0007\"\n---\nbody $1\n", encoding="utf-8")
    done = pipeline("templates", "--templates-dir", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0
    row = done.stdout.splitlines()[1]
    assert "\\x1b[31mred\\x07" in row and "\x1b" not in row and "\x07" not in row


def test_help_texts_have_examples(tmp_path):
    for cmd in ("expand", "templates"):
        done = pipeline(cmd, "--help", cwd=tmp_path)
        assert done.returncode == 0
        assert "examples:" in done.stdout and "~/.pi/agent/prompts" in done.stdout and "--templates-dir" in done.stdout


def test_templates_help_shows_a_readable_action():
    """Issue 34, item 7: the optional action reads `[export]`, explained, not `[{export}]`."""
    done = subprocess.run([sys.executable, "-m", "pipeline", "templates", "--help"], capture_output=True, text=True,
                          timeout=60)
    text = " ".join(done.stdout.split())
    assert done.returncode == 0 and "{export}" not in text
    assert "[-o DIR] [export]" in text
    assert "export optional: `pipeline templates export --to DIALECT [-o DIR]` writes the templates in another " \
           "tool's format instead of listing them" in text
