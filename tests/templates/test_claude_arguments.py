"""Issue 21 item 19: Claude Code's command arguments as Claude Code 2.1.328 expands them
(observed in tests/agents/test_claude_code_arguments.py), and the missing-argument
warning names the placeholder the file holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.templates.discovery import load_sources
from pipeline.templates.invoke import expand_input
from pipeline.templates.discovery import TemplateSource


def load(tmp_path: Path, name: str, body: str):
    (tmp_path / f"{name}.md").write_text(body)
    return load_sources([TemplateSource(tmp_path, "path", dialect="claude-code")])


@pytest.mark.parametrize("body, call, expected", [
    ("Review PR #$1 with priority $2\n", "/t 42 high", "Review PR #high with priority $2\n"),
    ("Review PR #$1 with priority $2\n", "/t 42 high urgent", "Review PR #high with priority urgent\n"),
    ("[$0][$ARGUMENTS[1]][$ARGUMENTS[3]]", "/t a b", "[a][b][$ARGUMENTS[3]]"),
    ("[$1x][$1_][$1-][$1.]", "/t a b", "[$1x][$1_][b-][b.]"),
    ("[$10]", "/t a b c d e f g h i j k", "[k]"),
    ("[$ARGUMENTS][$0]", "/t", "[][$0]"),
    ("Only [$5]", "/t a b", "Only [$5]\n\nARGUMENTS: a b"),  # nothing replaced: the arguments appended
    ("Only [$1x]", "/t a b", "Only [$1x]\n\nARGUMENTS: a b"),
    ("[$0]", "/t 'a b' c", "[a b]"),
])
def test_claude_code_arguments(tmp_path, body, call, expected):
    assert expand_input(call, load(tmp_path, "t", body)) == expected


def test_the_missing_argument_warning_names_what_the_file_holds(tmp_path, capsys):
    (tmp_path / "review-pr.md").write_text("Review PR #$1 with priority $2\n")
    assert main(["expand", "/review-pr 42 high", "--templates-dir", str(tmp_path), "--dialect", "claude-code"]) == 0
    out, err = capsys.readouterr()
    assert out == "Review PR #high with priority $2\n\n"  # the expansion, then print's newline
    assert "`/review-pr` reads argument $2 but was given 2" in err
    assert "$3" not in err
    assert "Claude Code counts arguments from $0 and leaves a placeholder whose argument is not given as written" in err


def test_the_warning_names_an_indexed_placeholder_as_written(tmp_path, capsys):
    (tmp_path / "x.md").write_text("First $ARGUMENTS[0], then $ARGUMENTS[4]\n")
    assert main(["expand", "/x a", "--templates-dir", str(tmp_path), "--dialect", "claude-code"]) == 0
    assert "`/x` reads argument $ARGUMENTS[4] but was given 1" in capsys.readouterr().err


def test_pi_templates_keep_their_warning(tmp_path, capsys):
    (tmp_path / "y.md").write_text("Fix $1 in $3\n")
    assert main(["expand", "/y a", "--templates-dir", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "`/y` reads argument $3 but was given 1" in err and "a missing argument expands to nothing" in err
