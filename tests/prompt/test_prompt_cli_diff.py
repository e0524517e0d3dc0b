"""``pipeline diff``: files, built-ins and ``REV:path`` in a real git repository; formats; exit codes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pipeline.cli import main

ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT = ROOT / "configs" / "default.yaml"
SCENARIOS = ROOT / "tests" / "scenarios"


def diff_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["diff", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def edited_default(path: Path, old: str, new: str) -> Path:
    text = DEFAULT.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo)}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    """A git repository with two commits: the second edits a rule and a threshold of an overlay's base."""
    repo = tmp_path / "repo"
    (repo / "configs").mkdir(parents=True)
    git(repo, "init", "-q")
    shutil.copy(DEFAULT, repo / "configs" / "default.yaml")
    (repo / "configs" / "team.yaml").write_text("extends: default.yaml\nname: team\n", encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "one")
    edited_default(repo / "configs" / "default.yaml", "Keep answers brief and to the point.", "Answer briefly.")
    text = (repo / "configs" / "default.yaml").read_text(encoding="utf-8").replace("keep_recent_tokens: 20000", "keep_recent_tokens: 12000", 1)
    (repo / "configs" / "default.yaml").write_text(text, encoding="utf-8")
    git(repo, "commit", "-q", "-am", "two")
    monkeypatch.chdir(repo)
    return repo


def test_same_profile_exits_0(capsys) -> None:
    code, out, _ = diff_cli(capsys, "default", str(DEFAULT), "--scenario", str(SCENARIOS / "defaults.yaml"))
    assert code == 0
    assert "identical" in out


def test_head_minus_one_against_working_tree(capsys, repo: Path) -> None:
    code, out, err = diff_cli(capsys, "HEAD~1:configs/default.yaml", "configs/default.yaml")
    assert code == 1, err
    assert "-- Keep answers brief and to the point.\n+- Answer briefly.\n" in out
    assert "compaction.keep_recent_tokens: 20000 -> 12000" in out
    assert "system_prompt.sections.rules.rules.3.text" in out


def test_revision_extends_resolved_in_that_revision(capsys, repo: Path) -> None:
    code, out, err = diff_cli(capsys, "HEAD~1:configs/team.yaml", "HEAD:configs/team.yaml", "--format", "json")
    doc = json.loads(out)
    assert code == 1, err
    changed = {c["key"]: (c["old"], c["new"]) for c in doc["settings"]}
    assert changed["compaction.keep_recent_tokens"] == (20000, 12000)
    (scenario,) = doc["scenarios"]
    rules = {s["id"]: s for s in scenario["sections"]}["rules"]
    assert rules["status"] == "changed" and rules["delta"] == rules["new_tokens"] - rules["old_tokens"] < 0


def test_markdown_for_a_pr_comment(capsys, tmp_path: Path) -> None:
    new = edited_default(tmp_path / "new.yaml", "Keep answers brief and to the point.", "Keep | answers <short>.")
    code, out, _ = diff_cli(capsys, str(DEFAULT), str(new), "--format", "markdown",
                            "--scenario", str(SCENARIOS / "defaults.yaml"), "--scenario", str(SCENARIOS / "custom-prompt.yaml"))
    assert code == 1
    assert out.startswith("### Context policy diff:")
    assert "1 of 2 scenarios render a different system prompt" in out
    assert "| system_prompt.sections.rules.rules.3.text |" in out and "Keep \\| answers &lt;short&gt;." in out
    assert "```diff\n" in out and "+- Keep | answers <short>.\n" in out
    assert "#### " + str(SCENARIOS / "custom-prompt.yaml") + ": same prompt" in out


def test_bad_revision_is_a_usage_error(capsys, repo: Path) -> None:
    code, out, err = diff_cli(capsys, "nosuchrev:configs/default.yaml", "configs/default.yaml")
    assert (code, out) == (2, "")
    assert "git show nosuchrev:configs/default.yaml" in err and "Traceback" not in err


def test_invalid_profile_is_trouble_not_difference(capsys, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nname: x\nsystem_prompt: {sections: []}\ncompactoin: {}\n", encoding="utf-8")
    code, out, err = diff_cli(capsys, "default", str(bad))
    assert (code, out) == (2, "")
    assert str(bad) in err


def test_a_directory_at_a_revision_is_a_usage_error(capsys, repo: Path) -> None:
    code, out, err = diff_cli(capsys, "HEAD:configs", "configs/default.yaml")
    assert (code, out) == (2, "")
    assert err == "pipeline diff: HEAD:configs is a directory in that revision, not a profile file\n"


def test_a_reference_without_a_path_is_a_usage_error(capsys, repo: Path) -> None:
    code, out, err = diff_cli(capsys, "HEAD:", "configs/default.yaml")
    assert (code, out) == (2, "") and "needs a path after the colon" in err


def test_problems_in_a_revision_name_the_revision_not_a_temp_copy(capsys, repo: Path) -> None:
    (repo / "configs" / "team.yaml").write_text("extends: default.yaml\nname: team\ncompactoin: {}\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "three")
    code, out, err = diff_cli(capsys, "HEAD:configs/team.yaml", "configs/default.yaml")
    assert (code, out) == (2, "")
    assert err.startswith("HEAD:configs/team.yaml:3:1: compactoin: unknown key") and "pipeline-diff-" not in err


@pytest.fixture
def oversize(repo: Path) -> int:
    """A committed profile one byte over the profile limit, and an overlay extending it."""
    from pipeline import files

    cap = files.limit("profile")
    head = "extends: default.yaml\nname: big\n# "
    (repo / "configs" / "big.yaml").write_text(head + "x" * (cap + 1 - len(head)), encoding="utf-8")
    (repo / "configs" / "over.yaml").write_text("extends: big.yaml\nname: over\n", encoding="utf-8")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "big")
    (repo / "configs" / "big.yaml").unlink()
    (repo / "configs" / "over.yaml").unlink()
    return cap + 1


@pytest.mark.parametrize("extra", [[], ["--patch"]])
def test_a_revision_over_the_profile_limit_is_refused_at_rev_path(capsys, repo: Path, oversize: int, extra) -> None:
    for spec, named in (("HEAD:configs/big.yaml", "HEAD:configs/big.yaml"), ("HEAD:configs/over.yaml", "HEAD:configs/big.yaml")):
        code, out, err = diff_cli(capsys, spec, "configs/default.yaml", *extra)
        assert (code, out) == (2, ""), err  # diff(1)'s table: anything but same/different is 2
        assert err == f"{named}: file too large: {oversize} bytes (the limit for a profile is {oversize - 1} bytes)" \
                      " (see docs/limits.md)\n"


def test_git_show_output_is_read_as_a_capped_stream(repo: Path, oversize: int) -> None:
    """Past the size check (a filter could make the output larger than the blob), the stream
    itself stops one byte past the limit."""
    from pipeline.errors import PipelineError
    from pipeline.report.revisions import _show

    with pytest.raises(PipelineError) as err:
        _show("HEAD", "configs/big.yaml", str(repo))
    [problem] = err.value.problems
    assert (problem.code, problem.location.file) == ("profile.file-too-large", "HEAD:configs/big.yaml")
    assert problem.message.startswith(f"file too large: more than {oversize - 1} bytes")
    assert _show("HEAD", "configs/team.yaml", str(repo)) == b"extends: default.yaml\nname: team\n"
