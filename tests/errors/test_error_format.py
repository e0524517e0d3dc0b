"""The one formatter: located line, source line with a caret, closing count; used by every command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from pipeline.cli import main
from pipeline.cli._report import count_line, format_problems
from pipeline.errors import Location, Problem

ROOT = Path(__file__).resolve().parents[2]
NEVER = "      when: {tools_include: [bash], tools_exclude: [bash]}\n"
TEAM = "extends: builtin:default\nname: t\ncompaction:\n  reserv_tokens: 1000\n  keep_recent_tokens: \"20000\"\n"


def _pipeline(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=120)


def test_a_problem_shows_its_source_line_with_a_caret_under_the_column(tmp_path):
    (tmp_path / "f.yaml").write_text("a: 1\n\tb:  [x, 名, y]\n", encoding="utf-8")
    problem = Problem("bad", Location(str(tmp_path / "f.yaml"), 2, 13), key="b")
    located, source, caret = format_problems([problem]).splitlines()
    assert located == f"{tmp_path / 'f.yaml'}:2:13: b: bad"
    assert source == "    2 | \tb:  [x, 名, y]"
    # the tab is kept and the wide character counts two cells, so the caret sits under `y`
    assert caret == "      | \t" + " " * 12 + "^"


def test_no_excerpt_without_a_column_or_a_readable_file(tmp_path):
    (tmp_path / "s.jsonl").write_text("{}\n", encoding="utf-8")
    lines = format_problems([
        Problem("no col", Location(str(tmp_path / "s.jsonl"), 1)),
        Problem("gone", Location(str(tmp_path / "missing.yaml"), 3, 2)),
        Problem("dir", Location(str(tmp_path), 1, 1)),
        Problem("past the end", Location(str(tmp_path / "s.jsonl"), 9, 1), severity="warning"),
    ]).splitlines()
    assert len(lines) == 5 and lines[-1] == "3 errors, 1 warning in 3 places"  # one of them is a directory


def test_the_closing_count():
    at = Location("team.yaml", 1, 1)
    assert count_line([Problem("a", at), Problem("b", at), Problem("c", at, severity="warning")]) == \
        "2 errors, 1 warning in team.yaml"
    assert count_line([Problem("a"), Problem("b", severity="info")]) == "1 error, 1 notice"
    assert format_problems([Problem("only one")]) == "only one"  # a single problem is its own summary
    flag = Location("--reserve")
    assert count_line([Problem("a", flag), Problem("b", flag)]) == "2 errors"  # a flag is not a file
    # only the problems that are in a file are said to be there
    assert count_line([Problem("a", at), Problem("b", flag), Problem("c")]) == "3 errors (1 in team.yaml)"
    assert count_line([Problem("a", at), Problem("b", Location("b.yaml")), Problem("c")]) == "3 errors (2 in 2 files)"


def test_the_closing_count_names_a_directory_as_a_directory(tmp_path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "a.md").write_text("x")
    prompts, md = Location(str(tmp_path / "prompts")), Location(str(tmp_path / "a.md"))
    assert count_line([Problem("a", prompts), Problem("b", prompts)]) == f"2 errors in {tmp_path / 'prompts'}/"
    assert count_line([Problem("a", prompts), Problem("b", md)]) == "2 errors in 2 places"
    assert count_line([Problem("a", md), Problem("b", md)]) == f"2 errors in {tmp_path / 'a.md'}"


def test_expand_with_a_missing_templates_dir_counts_what_is_where(tmp_path):
    """The missing directory holds one warning; the unknown `/x` is about the input, in no file."""
    run = _pipeline("expand", "--templates-dir", str(tmp_path / "missing"), "/x", cwd=tmp_path)
    assert (run.returncode, run.stdout) == (0, "/x\n")
    lines = run.stderr.splitlines()
    assert lines[0] == "missing: warning: template path does not exist"  # relative to the cwd, as validate
    assert lines[1].startswith("warning: /x: no template named `/x`")
    assert lines[2:] == ["2 warnings (1 in missing)"]


def test_validate_text_output_in_a_real_process(tmp_path):
    (tmp_path / "team.yaml").write_text(TEAM, encoding="utf-8")
    run = _pipeline("validate", "team.yaml", cwd=tmp_path)
    assert (run.returncode, run.stderr) == (1, "")
    assert run.stdout.splitlines() == [
        "team.yaml:4:3: compaction.reserv_tokens: unknown key (did you mean `reserve_tokens`?)",
        "    4 |   reserv_tokens: 1000",
        "      |   ^",
        'team.yaml:5:23: compaction.keep_recent_tokens: expected a whole number, got the text "20000" (write 20000 without quotes)',
        '    5 |   keep_recent_tokens: "20000"',
        "      |                       ^",
        "2 errors in team.yaml",
    ]


def test_render_labels_a_warning_once(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "w.yaml").write_text("extends: builtin:default\nname: t\nsystem_prompt:\n  sections:\n"
                                     "    - id: w\n      text: x\n" + NEVER, encoding="utf-8")
    assert main(["render", "w.yaml"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("w.yaml:7:7: warning: system_prompt.sections.w.when: this section can never render")
    assert "warning: w.yaml" not in err and err.count("warning:") == 1


def test_no_command_prints_problems_by_hand():
    """Every command prints problems through pipeline/cli/_report.py, never with its own print."""
    by_hand = re.compile(r"print\((f\"warning: |problem\b|warning\b|err\b|note\b)")
    offenders = []
    for path in sorted((ROOT / "pipeline" / "cli").glob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if by_hand.search(line) or ("print(" in line and "Problem(" in line):
                offenders.append(f"{path.name}:{number}: {line.strip()}")
    assert offenders == []


def test_compact_shows_the_profiles_own_warnings(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "w.yaml").write_text("extends: builtin:default\nname: t\nsystem_prompt:\n  sections:\n"
                                     "    - id: w\n      text: x\n" + NEVER, encoding="utf-8")
    session = ROOT / "tests" / "data" / "sessions" / "real" / "long-coding.jsonl"
    assert main(["compact", str(session), "--plan", "--profile", "w.yaml"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("w.yaml:7:7: warning: system_prompt.sections.w.when: this section can never render")


def test_a_source_line_that_may_hold_a_secret_is_not_shown(tmp_path):
    (tmp_path / "k.yaml").write_text("extends: builtin:default\nname: k\nsummarizer:\n  provider: openai\n"
                                     "  api_key_env: sk-live-ABC123\n", encoding="utf-8")
    run = _pipeline("validate", "k.yaml", cwd=tmp_path)
    assert run.returncode == 1 and run.stdout.startswith("k.yaml:5:")
    assert "ABC123" not in run.stdout + run.stderr
    (tmp_path / "u.yaml").write_text("extends: builtin:default\nname: u\nsummarizer:\n"
                                     "  base_url: \"https://user:hunter2@example.invalid\n", encoding="utf-8")
    run = _pipeline("validate", "u.yaml", cwd=tmp_path)
    assert run.returncode == 1 and "unclosed quote" in run.stdout and "hunter2" not in run.stdout + run.stderr


def test_a_line_with_many_problems_is_checked_for_secrets_once(tmp_path, monkeypatch):
    """Thousands of problems on one long line: the secret check reads the line once, not per problem."""
    from pipeline.cli import _report

    line = " ".join(f"${{bad{i}}}" for i in range(2000))
    source = tmp_path / "p.yaml"
    source.write_text(f"text: {line}\n", encoding="utf-8")
    searched = []

    class Counting:
        def search(self, text):
            searched.append(len(text))
            return None

    monkeypatch.setattr(_report, "_SECRET_LINE", Counting())
    problems = [Problem(f"unknown variable {i}", location=Location(str(source), 1, 7 + 8 * i), code="profile.unknown-variable")
                for i in range(2000)]
    text = _report.format_problems(problems)
    assert searched == [len("text: " + line)]
    assert text.count("^") == 2000 and text.endswith("2000 errors in " + str(source))
