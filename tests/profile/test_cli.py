"""`pipeline validate` / `explain` / `schema` as commands: formats, exit codes, no tracebacks."""

from __future__ import annotations

import json

import pytest

from cases import CASES, HEAD
from conftest import run_process, write_files

from pipeline.cli import main

RESERV = HEAD + "compaction:\n  reserv_tokens: 1000\n"
WARN = HEAD + "system_prompt:\n  sections:\n    - id: w\n      text: x\n      when: {tools_include: [bash], tools_exclude: [bash]}\n"
WARN_LINE = (
    "w.yaml:7:7: warning: system_prompt.sections.w.when: this section can never render: "
    "`bash` is both in tools_include and tools_exclude"
)


def test_the_reserv_tokens_example_in_a_real_process(tmp_path):
    write_files(tmp_path, {"p.yaml": RESERV})
    run = run_process("validate", "p.yaml", cwd=tmp_path)
    assert run.code == 1
    assert run.out + run.err == (
        "p.yaml:4:3: compaction.reserv_tokens: unknown key (did you mean `reserve_tokens`?)\n"
        "    4 |   reserv_tokens: 1000\n"
        "      |   ^\n"
    )


def test_valid_file_prints_how_many_are_ok(cli, tmp_path):
    write_files(tmp_path, {"ok.yaml": HEAD})
    assert (cli("validate", "ok.yaml").code, cli("validate", "ok.yaml").out) == (0, "1 profile ok\n")
    run = cli("validate", "-v", "ok.yaml")
    assert run.code == 0 and run.err.startswith("ok.yaml: ok (fingerprint ")


def test_warnings_pass_unless_strict(cli, tmp_path):
    write_files(tmp_path, {"w.yaml": WARN})
    run = cli("validate", "w.yaml")
    assert (run.code, run.lines) == (0, [WARN_LINE])
    run = cli("validate", "--strict", "w.yaml")
    assert (run.code, run.lines) == (1, [WARN_LINE])


def test_github_format(cli, tmp_path):
    write_files(tmp_path, {"p.yaml": RESERV, "w.yaml": WARN})
    run = cli("validate", "--format", "github", "p.yaml", "w.yaml")
    assert run.code == 1
    assert run.lines == [
        "::error file=p.yaml,line=4,col=3,title=compaction.reserv_tokens::unknown key (did you mean `reserve_tokens`?)",
        "::warning file=w.yaml,line=7,col=7,title=system_prompt.sections.w.when::this section can never render: "
        "`bash` is both in tools_include and tools_exclude",
    ]


def test_github_format_escapes(cli, tmp_path):
    write_files(tmp_path, {"a,b:c.yaml": "name: a\n---\nname: b\n"})
    run = cli("validate", "--format", "github", "a,b:c.yaml")
    assert run.lines == [
        "::error file=a%2Cb%3Ac.yaml,line=2,col=1::more than one YAML document "
        "(a profile is one document; remove the extra `---`)"
    ]


def test_json_format(cli, tmp_path):
    write_files(tmp_path, {"p.yaml": RESERV, "w.yaml": WARN})
    run = cli("validate", "--format", "json", "p.yaml", "w.yaml")
    data = json.loads(run.out)
    assert run.code == 1 and (data["errors"], data["warnings"]) == (1, 1)
    first, second = data["files"]
    assert (first["path"], first["valid"], first["fingerprint"]) == ("p.yaml", False, None)
    assert first["problems"] == [
        {
            "severity": "error", "file": "p.yaml", "line": 4, "col": 3, "key": "compaction.reserv_tokens",
            "message": "unknown key", "hint": "did you mean `reserve_tokens`?", "code": "profile.unknown-key",
        }
    ]
    assert second["valid"] is True and len(second["fingerprint"]) == 64
    assert second["problems"][0]["code"] == "profile.never-renders"
    assert json.loads(cli("validate", "--format", "json", "--strict", "w.yaml").out)["files"][0]["valid"] is False


def test_directories_are_searched_recursively(cli, tmp_path):
    write_files(
        tmp_path,
        {
            "profiles/a.yaml": HEAD,
            "profiles/deep/b.yml": HEAD.replace("name: t", "name: b"),
            "profiles/deep/c.yaml": RESERV,
            "profiles/notes.txt": "not yaml: [",
            "profiles/.hidden/x.yaml": "broken: [",
        },
    )
    run = cli("validate", "profiles")
    assert run.code == 1
    assert run.lines == ["profiles/deep/c.yaml:4:3: compaction.reserv_tokens: unknown key (did you mean `reserve_tokens`?)"]
    run = cli("validate", "--format", "json", "profiles")
    assert [f["path"] for f in json.loads(run.out)["files"]] == [
        "profiles/a.yaml", "profiles/deep/b.yml", "profiles/deep/c.yaml",
    ]


def test_no_path_is_a_usage_error(cli):
    run = cli("validate")
    assert (run.code, run.out, run.err.strip()) == (2, "", "pipeline validate: no PATH given (name profile files or directories)")


@pytest.mark.parametrize(
    "args,message",
    [
        (("missing.yaml",), "missing.yaml: no such file or directory"),
        (("empty_dir",), "empty_dir: no *.yaml or *.yml files in this directory"),
    ],
)
def test_paths_without_profiles_are_invalid_input(cli, tmp_path, args, message):
    (tmp_path / "empty_dir").mkdir()
    run = cli("validate", *args)
    assert (run.code, run.out, run.err.strip()) == (1, "", message)


def test_unknown_format_is_a_usage_error(tmp_path):
    run = run_process("validate", "--format", "xml", "x.yaml", cwd=tmp_path)
    assert run.code == 2 and "Traceback" not in run.err


def test_explain_text_json_and_unknown_key(cli, tmp_path):
    write_files(tmp_path, {"p.yaml": HEAD + "compaction:\n  reserve_tokens: 1000\n"})
    assert cli("explain", "p.yaml", "compaction.reserve_tokens").lines == [
        "p.yaml:4:19: compaction.reserve_tokens = 1000"
    ]
    data = json.loads(cli("explain", "p.yaml", "compaction.reserve_tokens", "--format", "json").out)
    assert data["values"] == [
        {"key": "compaction.reserve_tokens", "value": 1000, "file": "p.yaml", "line": 4, "col": 19, "default": False}
    ]
    assert data["profile"] == "p.yaml" and data["files"][0] == "p.yaml"
    run = cli("explain", "p.yaml", "compaction.reserv_tokens")
    assert run.code == 2
    assert run.err.strip() == (
        "pipeline explain: no key `compaction.reserv_tokens` in this profile "
        "(did you mean `compaction.reserve_tokens`?)"
    )


def test_explain_whole_profile_covers_every_leaf(cli):
    run = cli("explain", "builtin:default")
    assert run.code == 0
    keys = [line.split(": ", 1)[1].split(" = ")[0] for line in run.lines]
    assert len(keys) == len(set(keys)) > 100
    assert "system_prompt.sections.rules.rules.0.when.tools_exclude" in keys


@pytest.mark.parametrize("command", ["validate", "schema", "explain"])
def test_help_explains_with_examples(capsys, command):
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0 and "examples:" in out and f"pipeline {command} " in out


def test_broken_files_never_give_a_traceback(tmp_path):
    """explain and validate on a sample of the malformed table, in real processes."""
    sample = [c for c in CASES if c.id in {"binary-file", "billion-laughs", "ten-megabytes", "wrong-types-everywhere",
                                          "extends-cycle", "empty-file"}]
    assert len(sample) == 6
    for case in sample:
        write_files(tmp_path / case.id, case.files)
        run = run_process("explain", f"{case.id}/{case.main}", cwd=tmp_path)
        assert run.code == 1, case.id
        assert "Traceback" not in run.err and run.err.strip(), case.id


def test_formats_and_exit_codes_in_real_processes(tmp_path):
    write_files(tmp_path, {"p.yaml": RESERV, "w.yaml": WARN, "ok.yaml": HEAD})
    github = run_process("validate", "--format", "github", "p.yaml", "w.yaml", cwd=tmp_path)
    assert github.code == 1 and [line[:9] for line in github.lines] == ["::error f", "::warning"]
    data = json.loads(run_process("validate", "--format", "json", "ok.yaml", "w.yaml", cwd=tmp_path).out)
    assert [f["valid"] for f in data["files"]] == [True, True] and data["warnings"] == 1
    assert run_process("validate", "--strict", "ok.yaml", cwd=tmp_path).code == 0
    assert run_process("validate", "--strict", "w.yaml", cwd=tmp_path).code == 1
    usage = run_process("validate", cwd=tmp_path)
    assert usage.code == 2 and "Traceback" not in usage.err


def test_template_files_listed_by_the_profile_are_analyzed(cli, tmp_path):
    write_files(
        tmp_path,
        {
            "p.yaml": HEAD + "templates:\n  sources: [global, prompts]\n",
            "prompts/review.md": "---\ndescription: Review\n---\nReview $0 please\n",
            "prompts/fine.md": "Look at $1\n",
        },
    )
    data = json.loads(cli("validate", "--format", "json", "p.yaml").out)
    [found] = data["files"][0]["problems"]
    assert (found["file"], found["line"], found["col"], found["severity"]) == ("prompts/review.md", 4, 8, "warning")
    assert "$0" in found["message"]
    assert cli("validate", "p.yaml").code == 0
    assert cli("validate", "--strict", "p.yaml").code == 1
