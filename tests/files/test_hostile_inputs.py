"""Issue 10: YAML bombs in every YAML reader, symbolic-link loops in directory walks,
git argument injection in ``pipeline diff``, ``session migrate --force`` over special
files, and arguments holding lone surrogates."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.limits import YAML_MAX_DEPTH, YAML_MAX_NODES, yaml_excess

from .conftest import ROOT, cli, one_line_error

#: Nine levels of ten aliases each: 10**9 values once expanded, a few hundred bytes of text.
BOMB = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9)
)


def frontmatter_bomb() -> str:
    return "---\ndescription: boom\n" + BOMB + "---\nbody $1\n"


# --------------------------------------------------------------------------- YAML bounds


def test_yaml_excess_counts_aliases_without_expanding_them():
    leaf = list(range(10))
    value = leaf
    for _ in range(8):
        value = [value] * 10  # the same list ten times: what an alias gives
    assert yaml_excess(value) == f"too many values once aliases are expanded (more than {YAML_MAX_NODES})"
    deep: list = []
    for _ in range(YAML_MAX_DEPTH + 1):
        deep = [deep]
    assert yaml_excess(deep) == f"nested too deeply (more than {YAML_MAX_DEPTH} levels)"
    loop: list = []
    loop.append(loop)
    assert yaml_excess(loop) == "an alias refers to a value that contains it"
    assert yaml_excess({"a": [1, 2, {"b": "c"}]}) is None


def test_the_frontmatter_reader_uses_the_profile_readers_limits():
    from pipeline.source import reader

    assert (reader.MAX_NODES, reader.MAX_DEPTH) == (YAML_MAX_NODES, YAML_MAX_DEPTH)


def test_an_alias_bomb_in_a_template_is_a_warning_and_the_rest_loads(tmp_path):
    prompts = tmp_path / ".pi" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "bomb.md").write_text(frontmatter_bomb())
    (prompts / "fine.md").write_text("Fine $1\n")
    run = cli("templates", cwd=tmp_path)
    assert run.code == 0 and b"/fine" in run.out and "Traceback" not in run.err
    assert f"{prompts.relative_to(tmp_path)}/bomb.md:2:1: warning: invalid YAML frontmatter: too many values once aliases are expanded" in run.err
    run = cli("expand", "/bomb a", cwd=tmp_path)
    assert run.code == 0 and run.out == b"/bomb a\n"


def test_an_alias_bomb_in_a_skill_skips_the_skill(tmp_path):
    skill = tmp_path / ".pi" / "skills" / "boom"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(frontmatter_bomb())
    run = cli("render", "default", "--discover", cwd=tmp_path)
    assert run.code == 0 and "Traceback" not in run.err
    assert f"{skill.relative_to(tmp_path)}/SKILL.md: warning: cannot load skill: invalid YAML frontmatter: too many values" in run.err


@pytest.mark.parametrize("body, message", [
    (BOMB, f"too many values once aliases are expanded (more than {YAML_MAX_NODES})"),
    ("guidelines: " + "[" * 100 + "]" * 100 + "\n", f"nested too deeply (more than {YAML_MAX_DEPTH} levels)"),
])
def test_a_scenario_file_is_bounded_like_a_profile(tmp_path, body, message):
    scenario = tmp_path / "s.yaml"
    scenario.write_text("cwd: /repo\n" + body)
    run = cli("render", "default", "--scenario", str(scenario))
    assert run.code == 1
    one_line_error(run, f"{scenario}: {message}")


# --------------------------------------------------------------------------- symbolic-link loops


def test_a_skills_directory_with_two_links_to_itself_does_not_hang(tmp_path):
    skills = tmp_path / "skills"
    (skills / "real").mkdir(parents=True)
    (skills / "real" / "SKILL.md").write_text("---\nname: real\ndescription: a real skill\n---\nbody\n")
    (skills / "a").symlink_to(".")
    (skills / "b").symlink_to(".")
    (skills / "real" / "up").symlink_to("..")
    run = cli("render", "default", "--skills", str(skills))
    assert run.code == 0 and "Traceback" not in run.err
    assert run.out.count(b"a real skill") == 1  # found once, though reachable along endless paths
    assert f"{skills}/a: warning: directory already searched (a symbolic link loop?); not entered again" in run.err


def test_a_skills_walk_stops_at_its_depth_limit(tmp_path):
    from pipeline.limits import WALK_MAX_DEPTH
    from pipeline.prompt.discover import load_skills_from_dir

    deep = tmp_path / "skills"
    current = deep
    for _ in range(WALK_MAX_DEPTH + 3):
        current = current / "d"
    current.mkdir(parents=True)
    (current / "SKILL.md").write_text("---\ndescription: too deep\n---\n")
    scan = load_skills_from_dir(str(deep))
    assert scan.skills == () and any("not searched" in d.message for d in scan.diagnostics)


# --------------------------------------------------------------------------- git arguments


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "p.yaml").write_text((ROOT / "configs" / "minimal.yaml").read_text())
    subprocess.run([*git, "add", "p.yaml"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=tmp_path, check=True)
    return tmp_path


def test_a_revision_that_looks_like_an_option_is_refused_and_writes_nothing(repo):
    before = sorted(p.name for p in repo.iterdir())
    run = cli("diff", "--", f"--output={repo}/pwned:p.yaml", "p.yaml", cwd=repo)
    assert run.code == 2
    one_line_error(run, "a revision may not start with `-`")
    assert sorted(p.name for p in repo.iterdir()) == before  # git never wrote its --output file


def test_a_good_revision_still_diffs(repo):
    run = cli("diff", "HEAD:p.yaml", "p.yaml", cwd=repo)
    assert run.code == 0 and b"identical" in run.out


# --------------------------------------------------------------------------- migrate --force


def _session(tmp_path: Path) -> Path:
    src = ROOT / "tests" / "data" / "sessions" / "real" / "long-coding.jsonl"
    copy = tmp_path / "s.jsonl"
    copy.write_bytes(src.read_bytes())
    return copy


def test_migrate_force_never_replaces_a_fifo_or_a_device(tmp_path):
    source = _session(tmp_path)
    fifo = tmp_path / "dest.jsonl"
    os.mkfifo(fifo)
    run = cli("session", "migrate", str(source), str(fifo), "--force")
    assert run.code == 1
    one_line_error(run, f"{fifo}: will not replace it: it is a FIFO (named pipe), not a regular file")
    assert fifo.is_fifo()
    link = tmp_path / "null.jsonl"
    link.symlink_to("/dev/null")
    run = cli("session", "migrate", str(source), str(link), "--force")
    assert run.code == 1 and "it is a device node, not a regular file" in run.err
    assert link.is_symlink() and os.readlink(link) == "/dev/null"
    run = cli("session", "migrate", str(source), "/dev/null", "--force")
    assert run.code == 1 and "/dev/null: will not replace it: it is a device node" in run.err
    assert Path("/dev/null").is_char_device()


def test_migrate_force_still_replaces_a_regular_file(tmp_path):
    source = _session(tmp_path)
    dest = tmp_path / "old.jsonl"
    dest.write_text("old\n")
    run = cli("session", "migrate", str(source), str(dest), "--force")
    assert run.code == 0 and dest.read_bytes() == source.read_bytes()


# --------------------------------------------------------------------------- lone surrogates


def test_expand_gives_undecodable_argument_bytes_back_faithfully(tmp_path):
    prompts = tmp_path / ".pi" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "x.md").write_text("Hello $1 and $@\n")
    surrogate = "\ud800".encode("utf-8", "surrogatepass")  # b"\xed\xa0\x80": argv gives U+DCED U+DCA0 U+DC80
    done = subprocess.run([sys.executable, "-m", "pipeline", "expand", b"/x " + surrogate + b" b"], cwd=tmp_path,
                          capture_output=True, timeout=20, env={**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path)})
    assert done.returncode == 0 and b"Traceback" not in done.stderr
    assert done.stdout == b"Hello " + surrogate + b" and " + surrogate + b" b\n\n"  # the body's newline, then print's


def test_expand_with_a_lone_surrogate_in_process_prints_an_escape(tmp_path, capsys, monkeypatch):
    from pipeline.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path))
    assert main(["expand", "\ud800 plain"]) == 0
    assert capsys.readouterr().out == "\\ud800 plain\n"  # not a byte the OS gave: written as an escape


def test_a_skill_command_whose_file_is_a_fifo_is_left_alone(tmp_path):
    """``/skill:name`` reads the skill's file through the bounded reader: a FIFO there is
    "cannot be read" (the input stays as typed), not a wait for a writer."""
    from pipeline import compile_profile
    from pipeline.prompt.context import Skill
    from pipeline.templates.skill import expand_skill

    texts = compile_profile("default").profile.runtime.skill
    fifo = tmp_path / "SKILL.md"
    os.mkfifo(fifo)
    skill = Skill("pipe", "a skill", str(fifo), str(tmp_path), False)
    assert expand_skill("/skill:pipe go", [skill], texts) is None
    real = tmp_path / "real.md"
    real.write_text("---\ndescription: d\n---\nDo the thing.\n")
    expanded = expand_skill("/skill:real go", [Skill("real", "d", str(real), str(tmp_path), False)], texts)
    assert expanded is not None and "Do the thing." in expanded
