"""Every command keeps to the exit-code table (0 ok, 1 invalid input, 2 usage, 3 provider),
shows its own usage on a bad flag, and `expand` says what it could not do."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "tests" / "data" / "sessions" / "real" / "long-coding.jsonl"


def _pipeline(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", **(env or {})}
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=120)


def _commands() -> list[str]:
    import argparse

    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return list(action.choices)


#: per command: arguments that name a missing file (exit 1), and the positional arguments
#: that let a bad flag be the only thing wrong (exit 2)
INVALID = {
    "chat": ["--session", "missing.jsonl", "--model", "m"],
    "compact": ["missing.jsonl"],
    "context": ["missing.jsonl"],
    "diff": ["missing.yaml", "default"],
    "eval": ["missing.jsonl"],
    "expand": ["/x", "--profile", "missing.yaml"],
    "explain": ["missing.yaml"],
    "export": ["pi", "missing.yaml"],
    "import": ["pi", "missing-agent-dir"],
    "init": ["missing-repository"],
    "proxy": ["missing.yaml"],
    "render": ["missing.yaml"],
    "run": ["hi", "--session", "missing.jsonl", "--model", "m"],
    "replay": ["missing"],
    "schema": ["--check", "."],
    "session": ["check", "missing.jsonl"],
    "show": ["missing-profile"],
    "templates": ["--profile", "missing.yaml"],
    "validate": ["missing.yaml"],
}
POSITIONALS = {"compact": ["s.jsonl"], "context": ["s.jsonl"], "diff": ["a", "b"], "expand": ["/x"],
               "explain": ["default"], "export": ["pi"], "import": ["pi"], "session": ["check", "s.jsonl"],
               "run": ["hi", "--session", "s.jsonl"], "chat": ["--session", "s.jsonl"], "replay": ["a"]}


def test_every_command_is_in_the_table():
    assert sorted(INVALID) == sorted(_commands())


@pytest.mark.parametrize("command", sorted(INVALID))
def test_invalid_input_exits_1(command, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = main([command, *INVALID[command]])
    err = capsys.readouterr().err
    expected = 2 if command == "diff" else 1  # diff follows diff(1): 2 for anything but same/different
    assert code == expected and err.strip() and "Traceback" not in err


@pytest.mark.parametrize("command", sorted(INVALID))
def test_a_bad_flag_shows_the_sub_commands_usage(command, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        main([command, *POSITIONALS.get(command, []), "--bogus"])
    err = capsys.readouterr().err
    prog = {"session": "pipeline session check", "import": "pipeline import pi"}.get(command, f"pipeline {command}")
    assert stopped.value.code == 2
    assert err.startswith(f"usage: {prog} ") and err.rstrip().endswith(f"{prog}: error: unrecognized arguments: --bogus")


def test_validate_bogus_in_a_real_process(tmp_path):
    run = _pipeline("validate", "--bogus", cwd=tmp_path)
    assert run.returncode == 2 and run.stderr.startswith("usage: pipeline validate [-h]")
    assert "COMMAND" not in run.stderr


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_provider_that_cannot_be_reached_exits_3_and_writes_nothing(provider, tmp_path):
    session = tmp_path / "s.jsonl"
    shutil.copyfile(SESSION, session)
    before = session.read_bytes()
    (tmp_path / "p.yaml").write_text("extends: builtin:default\nname: p\nsummarizer:\n  max_retries: 0\n",
                                     encoding="utf-8")
    run = _pipeline("compact", "s.jsonl", "--profile", "p.yaml", "--llm", provider, "--model", "m",
                    "--base-url", f"http://127.0.0.1:{_closed_port()}", "--api-key-env", "CP_EXIT_TEST_KEY",
                    cwd=tmp_path, env={"CP_EXIT_TEST_KEY": "sk-exit-test-secret"})
    assert run.returncode == 3, run.stderr
    assert session.read_bytes() == before and run.stdout == ""
    failure = [line for line in run.stderr.splitlines() if "failed" in line]
    assert len(failure) == 1 and "connection refused" in failure[0].lower()
    assert "Traceback" not in run.stderr and "sk-exit-test-secret" not in run.stderr


def test_the_exit_table_is_in_the_help():
    parser = build_parser()
    assert "3 provider or network failure" in parser.format_help()
    import argparse

    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in action.choices.items():
        text = sub.format_help()
        if name == "diff":
            assert "like diff(1)" in text
        else:
            assert "exit status: 0 ok, 1 invalid input" in text and "3 provider or network failure" in text, name


def test_the_exit_table_is_documented():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    errors = (ROOT / "docs" / "errors.md").read_text(encoding="utf-8")
    assert "Exit codes: 0 ok, 1 invalid input, 2 usage error, 3 provider or network failure" in readme
    for row in ("| 0 | ok |", "| 1 | invalid input", "| 2 | usage", "| 3 | provider or network failure"):
        assert row in errors


# --------------------------------------------------------------------------- expand notices


@pytest.fixture
def prompts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "review.md").write_text("Review $1 for $2", encoding="utf-8")
    return tmp_path / "prompts"


def test_expand_of_an_unknown_template_says_so(prompts, capsys):
    assert main(["expand", "/reveiw a.py", "--templates-dir", str(prompts)]) == 0
    out, err = capsys.readouterr()
    assert out == "/reveiw a.py\n"
    assert err == "warning: /reveiw: no template named `/reveiw` (did you mean `review`?)\n"


def test_expand_with_a_missing_argument_says_so(prompts, capsys):
    assert main(["expand", "/review a.py", "--templates-dir", str(prompts)]) == 0
    out, err = capsys.readouterr()
    assert out == "Review a.py for \n"
    assert err == (f"{os.path.relpath(prompts / 'review.md')}: warning: /review: `/review` reads argument $2 but was given 1"
                   " (a missing argument expands to nothing)\n")


def test_expand_with_every_argument_is_quiet(prompts, capsys):
    assert main(["expand", "/review a.py speed", "--templates-dir", str(prompts)]) == 0
    assert capsys.readouterr() == ("Review a.py for speed\n", "")
