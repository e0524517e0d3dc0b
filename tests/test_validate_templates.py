"""`pipeline validate --project DIR` checks the templates an agent in DIR loads, and the
hook and CI job `pipeline init` writes use it: a template with broken frontmatter (which
the agent skips) fails them."""

from __future__ import annotations

import shlex

from pipeline.cli import main
from pipeline.js import load_yaml

BROKEN = "---\ndescription: [unclosed\n---\nReview $1\n"


def test_a_project_template_with_broken_frontmatter_fails_strict(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    (tmp_path / ".pi" / "prompts").mkdir(parents=True)
    (tmp_path / ".pi" / "prompts" / "review.md").write_text(BROKEN)
    (tmp_path / "team.yaml").write_text("extends: builtin:default\n")
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "--strict", "team.yaml"]) == 0  # without --project: where the agent runs is unknown
    capsys.readouterr()
    assert main(["validate", "--strict", "--project", ".", "team.yaml"]) == 1
    out = capsys.readouterr().out
    assert ".pi/prompts/review.md:2:23: warning: invalid YAML frontmatter" in out
    (tmp_path / ".pi" / "prompts" / "review.md").write_text("---\ndescription: fine\n---\nReview $1\n")
    assert main(["validate", "--strict", "--project", ".", "team.yaml"]) == 0


def test_global_templates_of_the_machine_are_not_the_repositorys(tmp_path, monkeypatch):
    agent = tmp_path / "agent"
    (agent / "prompts").mkdir(parents=True)
    (agent / "prompts" / "mine.md").write_text(BROKEN)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "team.yaml").write_text("extends: builtin:default\n")
    monkeypatch.chdir(tmp_path / "repo")
    assert main(["validate", "--strict", "--project", ".", "team.yaml"]) == 0


def test_init_writes_the_template_check_into_the_hook_and_the_job(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    assert main(["init", str(tmp_path)]) == 0
    (tmp_path / ".pi" / "prompts").mkdir(parents=True)
    (tmp_path / ".pi" / "prompts" / "review.md").write_text(BROKEN)
    monkeypatch.chdir(tmp_path)
    hook = load_yaml((tmp_path / ".pre-commit-config.yaml").read_text())["repos"][-1]["hooks"][0]
    job = load_yaml((tmp_path / ".github" / "workflows" / "context-profiles.yml").read_text())
    steps = {s.get("name"): s for s in job["jobs"]["profiles"]["steps"]}
    assert ".pi/prompts/**" in job["on"]["pull_request"]["paths"]
    for command in (hook["entry"] + " agent-profiles/team.yaml", steps["validate"]["run"]):
        argv = shlex.split(command)
        assert argv[0] == "pipeline"
        capsys.readouterr()
        assert main(argv[1:]) == 1, command
        assert ".pi/prompts/review.md" in capsys.readouterr().out


def test_a_template_typo_missing_its_brace_fails_strict(tmp_path, monkeypatch, capsys):
    """Issue 34, item 4: `$2:-correctness}` is caught like its neighbours, located, with a hint."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    (tmp_path / ".pi" / "prompts").mkdir(parents=True)
    (tmp_path / ".pi" / "prompts" / "review.md").write_text("---\ndescription: Review\n---\nReview $1 for $2:-correctness}.\n")
    (tmp_path / "team.yaml").write_text("extends: builtin:default\n")
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "--strict", "--project", ".", "team.yaml"]) == 1
    out = capsys.readouterr().out
    assert (".pi/prompts/review.md:4:15: warning: `$2:-correctness}` is `$2` followed by the text `:-correctness}`: "
            "the `{` after `$` is missing (did you mean `${2:-correctness}`?)") in out
