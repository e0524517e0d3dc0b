"""TOML nested past TOML_MAX_DEPTH, in every TOML file the tool reads (Codex's config.toml that
`pipeline export codex` edits and `pipeline import codex` reads, the repository's profile setting,
a Gemini CLI command): a located error or a skipped command, never tomllib's RecursionError
(issue 29, point 3: "nesting past the documented bound" is a located error, nothing written)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pipeline.limits import TOML_MAX_DEPTH, toml_excess

ARRAYS = "a = " + "[" * 100_000 + "]" * 100_000 + "\n"
TABLES = "a = " + "{b = " * 50_000 + "1" + "}" * 50_000 + "\n"


def pipeline(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipeline", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd)


def test_the_bound_counts_arrays_and_inline_tables_not_strings_or_comments():
    assert toml_excess("x = 1\na = " + "[" * (TOML_MAX_DEPTH + 1)) == (
        f"nested too deeply (more than {TOML_MAX_DEPTH} levels, see docs/limits.md)", 2, 5 + TOML_MAX_DEPTH)
    assert toml_excess("a = " + "[" * TOML_MAX_DEPTH + "]" * TOML_MAX_DEPTH) is None
    assert toml_excess("a = " + "{b = " * (TOML_MAX_DEPTH + 1)) is not None
    deep = "[" * 100
    for quoted in (f'"{deep}\\"{deep}"', f"'{deep}'", f'"""\n{deep}\\"""{deep}"""', f"'''\n{deep}'''",
                   f'""""{deep}""""'):
        assert toml_excess(f"a = {quoted}\n[t]\n[[u]]\nb = [[1, 2], {{c = [3]}}]  # {deep}\n") is None, quoted
    assert toml_excess(f'a = """{deep}') is None  # an unterminated string: the parser says what is wrong


@pytest.mark.parametrize("text", [ARRAYS, TABLES])
@pytest.mark.parametrize("force", [[], ["--force"]])
def test_export_codex_refuses_a_deep_config_and_keeps_it(tmp_path, text, force):
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(text)
    done = pipeline("export", "codex", "--project", str(tmp_path), *force)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-400:]
    assert f"{config}:1:" in done.stderr and "nested too deeply" in done.stderr
    assert config.read_text() == text
    assert not (tmp_path / ".codex" / "context-pipeline-export.json").exists()


def test_import_codex_of_a_deep_config_is_a_located_error(tmp_path):
    assert pipeline("export", "codex", "--project", str(tmp_path)).returncode == 0
    (tmp_path / ".codex" / "config.toml").write_text(ARRAYS)
    done = pipeline("import", "codex", "--project", str(tmp_path))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-400:]
    assert f"{tmp_path / '.codex' / 'config.toml'}:1:69: invalid TOML: nested too deeply" in done.stderr


@pytest.mark.parametrize("name, text", [(".context-pipeline.toml", 'profile = "p.yaml"\nx = ' + ARRAYS[4:]),
                                        ("pyproject.toml", "[tool.context-pipeline]\nprofile = " + TABLES[4:])])
def test_a_deep_repository_setting_is_a_located_error(tmp_path, name, text):
    (tmp_path / ".git").mkdir()
    (tmp_path / "p.yaml").write_text("extends: builtin:default\nname: p\n")
    (tmp_path / name).write_text(text)
    done = pipeline("validate", cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-400:]
    assert f"{name}:2:" in done.stderr and "nested too deeply" in done.stderr


def test_a_deep_gemini_command_is_skipped_with_a_warning(tmp_path):
    (tmp_path / "deep.toml").write_text('prompt = "deep"\nz = ' + ARRAYS[4:])
    (tmp_path / "fine.toml").write_text('prompt = "fine {{args}}"\n')
    done = pipeline("templates", "--templates-dir", str(tmp_path), "--dialect", "gemini")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-400:]
    assert "deep.toml:2:69: warning: invalid TOML: nested too deeply" in done.stderr
    assert "/fine" in done.stdout and "/deep" not in done.stdout
