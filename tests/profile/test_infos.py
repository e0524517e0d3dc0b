"""Info findings are not warnings: shown by `validate` only with --verbose, never failing.

The template analysis marks `large-index` (`$99`), `zero-slice` (`${@:0}`) and
`default-not-slice` (`${@:-2}`) as infos; they become `Problem`s with severity `info`
(`file:line:col: info: ...`), and JSON/GitHub output calls them `notice`.
"""

from __future__ import annotations

import json

import pytest

from conftest import HEAD, run_process, write_files
from pipeline.errors import Location, Problem
from pipeline.templates.analysis import analyze

INFO_ONLY = {
    "p.yaml": HEAD + "templates:\n  sources: [prompts]\n",
    "prompts/far.md": "Use $99, ${@:0} and ${@:-2}\n",
}
INFO_AND_WARNING = {
    "p.yaml": HEAD + "templates:\n  sources: [prompts]\n",
    "prompts/far.md": "Use $99 and $0\n",
}


def test_problem_labels_by_severity():
    where = Location("a.md", 1, 5)
    assert str(Problem("m", where, hint="h", severity="info")) == "a.md:1:5: info: m (h)"
    assert str(Problem("m", where, severity="warning")) == "a.md:1:5: warning: m"
    assert str(Problem("m", where)) == "a.md:1:5: m"


@pytest.mark.parametrize(
    "body,code", [("$99", "template.large-index"), ("${@:0}", "template.zero-slice"), ("${@:-2}", "template.default-not-slice")]
)
def test_info_findings_become_info_problems(body, code):
    [finding] = analyze(body).findings
    problem = finding.to_problem("t.md")
    assert (finding.code, finding.severity, problem.severity, problem.code) == (code, "info", "info", code)
    assert str(problem).startswith("t.md:1:1: info: ")


def test_warning_findings_stay_warnings():
    [finding] = analyze("$0").findings
    assert finding.to_problem("t.md").severity == "warning"


def test_validate_hides_infos_and_never_fails_on_them(cli, tmp_path):
    write_files(tmp_path, INFO_ONLY)
    for args in ([], ["--strict"], ["--format", "github"], ["--strict", "--format", "github"]):
        run = cli("validate", *args, "p.yaml")
        assert (run.code, run.out) == (0, "" if "github" in args else "1 profile ok\n"), args
    data = json.loads(cli("validate", "--strict", "--format", "json", "p.yaml").out)
    assert data["files"][0]["valid"] and data["files"][0]["problems"] == []
    assert (data["errors"], data["warnings"], data["notices"]) == (0, 0, 0)


def test_validate_verbose_shows_infos(cli, tmp_path):
    write_files(tmp_path, INFO_ONLY)
    run = cli("validate", "--verbose", "--strict", "p.yaml")
    assert run.code == 0
    assert [line.split(": ")[:2] for line in run.lines] == [["prompts/far.md:1:5", "info"],
                                                           ["prompts/far.md:1:10", "info"],
                                                           ["prompts/far.md:1:21", "info"]]
    assert "p.yaml: ok" in run.err


def test_validate_verbose_json_and_github_call_infos_notices(cli, tmp_path):
    write_files(tmp_path, INFO_ONLY)
    data = json.loads(cli("validate", "-v", "--format", "json", "p.yaml").out)
    problems = data["files"][0]["problems"]
    assert [p["severity"] for p in problems] == ["notice"] * 3
    assert [p["code"] for p in problems] == ["template.large-index", "template.zero-slice", "template.default-not-slice"]
    assert (data["files"][0]["valid"], data["warnings"], data["notices"]) == (True, 0, 3)
    github = cli("validate", "-v", "--format", "github", "p.yaml")
    assert github.code == 0
    assert github.lines[0].startswith("::notice file=prompts/far.md,line=1,col=5::`$99` asks for an argument")


def test_strict_still_fails_on_the_warning_next_to_an_info(cli, tmp_path):
    write_files(tmp_path, INFO_AND_WARNING)
    assert cli("validate", "p.yaml").code == 0
    strict = cli("validate", "--strict", "p.yaml")
    assert strict.code == 1
    assert [line.split(": ")[1] for line in strict.lines] == ["warning"]  # the `$0`; the info stays hidden


def test_validate_help_explains_infos():
    run = run_process("validate", "--help")
    text = " ".join(run.out.split())
    assert "infos" in text and "--verbose" in text and "notice" in text
