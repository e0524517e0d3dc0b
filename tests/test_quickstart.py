"""docs/quickstart.md, run as written: its marked blocks in order, in a fresh git repository,
then the CI job `pipeline init` wrote (its validate and diff steps) in that repository."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.js import load_yaml

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "quickstart.md"
BLOCK = re.compile(r"<!-- quickstart: run(?:, exit (\d+))? -->\n```sh\n(.*?)```", re.S)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def blocks() -> list[tuple[int, str]]:
    return [(int(code or 0), body) for code, body in BLOCK.findall(DOC.read_text(encoding="utf-8"))]


def env(home: Path) -> dict:
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""), "HOME": str(home),
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_NOSYSTEM": "1", "PYTHONIOENCODING": "utf-8"}


def bash(script: str, cwd: Path, environ: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=environ, capture_output=True, text=True,
                          timeout=300)


def test_the_walkthrough_runs_as_written_and_ci_fails_then_passes(tmp_path):
    environ = env(tmp_path / "home")
    (tmp_path / "home").mkdir()
    steps = blocks()
    assert [code for code, _ in steps] == [0, 0, 1, 0, 1]
    # the walk-through's blocks share a shell: each one after the first runs inside my-agent
    results = []
    for i, (code, script) in enumerate(steps):
        cwd = tmp_path if i == 0 else tmp_path / "my-agent"
        run = bash(script, cwd, environ)
        assert run.returncode == code, (script, run.stdout, run.stderr)
        results.append(run)
    repo = tmp_path / "my-agent"
    # step 4 printed the annotation the page shows
    annotation = re.search(r"^::error file=.*$", results[2].stdout, re.M).group(0)
    assert annotation in DOC.read_text(encoding="utf-8")
    # step 6: the markdown diff names the changed setting
    assert "reserve_tokens" in results[-1].stdout and "24000" in results[-1].stdout
    # the CI job: its validate step is the command the page runs, and it fails, then passes
    workflow = load_yaml((repo / ".github" / "workflows" / "context-profiles.yml").read_text(encoding="utf-8"))
    step = {s.get("name"): s for s in workflow["jobs"]["profiles"]["steps"]}
    assert step["validate"]["run"] == "pipeline validate --strict --project . --format github agent-profiles/"
    assert "pipeline validate --strict --project . --format github agent-profiles/" in steps[1][1]
    good = (repo / "agent-profiles" / "team.yaml").read_text(encoding="utf-8")
    (repo / "agent-profiles" / "team.yaml").write_text(good.replace("reserve_tokens", "reserv_tokens"))
    failed = bash(step["validate"]["run"], repo, environ)
    assert failed.returncode == 1 and "::error file=agent-profiles/team.yaml" in failed.stdout
    (repo / "agent-profiles" / "team.yaml").write_text(good)
    assert bash(step["validate"]["run"], repo, environ).returncode == 0
    # the diff step on a pull request from bigger-reserve into main (origin: the repository itself)
    assert bash("git remote add origin . && git fetch -q origin", repo, environ).returncode == 0
    diff = bash(step["diff"]["run"], repo, {**environ, "BASE": "main"})
    assert diff.returncode == 0, diff.stderr
    comment = (repo / "profile-diff.md").read_text(encoding="utf-8")
    assert "### agent-profiles/team.yaml" in comment and "24000" in comment
    assert "--body-file profile-diff.md" in step["comment"]["run"]
    # the install step names a placeholder to fill in, never a made-up release
    assert "<your-org>" in step["install"]["run"] and "<rev>" in step["install"]["run"]


def test_init_keeps_existing_files_and_appends_the_hook(tmp_path, capsys):
    from pipeline.cli import main

    (tmp_path / ".pre-commit-config.yaml").write_text("repos:\n  - repo: https://example.invalid/x\n    rev: v1\n"
                                                     "    hooks:\n      - id: x\n")
    assert main(["init", str(tmp_path), "--name", "backend", "--install", "context-pipeline==0.1.0"]) == 0
    config = load_yaml((tmp_path / ".pre-commit-config.yaml").read_text())
    assert [r["repo"] for r in config["repos"]] == ["https://example.invalid/x", "local"]
    hook = config["repos"][1]["hooks"][0]
    assert hook["id"] == "pipeline-validate" and re.match(hook["files"], "agent-profiles/backend.yaml")
    assert not re.match(hook["files"], "configs/other.yaml")
    workflow = (tmp_path / ".github" / "workflows" / "context-profiles.yml").read_text()
    assert 'pip install "context-pipeline==0.1.0"' in workflow
    profile = tmp_path / "agent-profiles" / "backend.yaml"
    assert main(["validate", "--strict", str(profile)]) == 0
    first = profile.read_text().splitlines()[0]
    assert (profile.parent / first.split("$schema=")[1]).is_file()
    profile.write_text(profile.read_text() + "# mine\n")
    capsys.readouterr()
    assert main(["init", str(tmp_path), "--name", "backend"]) == 0
    assert profile.read_text().endswith("# mine\n")
    assert "kept" in capsys.readouterr().err
    assert main(["init", str(tmp_path), "--repo", "https://example.invalid/cp"]) == 2


def test_init_with_the_projects_own_hook(tmp_path):
    from pipeline.cli import main

    assert main(["init", str(tmp_path), "--repo", "https://github.com/acme/context-pipeline", "--rev", "v0.1.0"]) == 0
    config = load_yaml((tmp_path / ".pre-commit-config.yaml").read_text())
    assert config["repos"][0] == {"repo": "https://github.com/acme/context-pipeline", "rev": "v0.1.0",
                                  "hooks": [{"id": "pipeline-validate", "args": ["--project", "."],
                                             "files": "^agent-profiles/.*\\.ya?ml$"}]}


def test_the_projects_hook_covers_only_profiles():
    hooks = load_yaml((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    pattern = hooks[0]["files"]
    assert re.search(pattern, "agent-profiles/team.yaml")
    for other in ("configs/app.yaml", "deploy/configs/values.yaml", "profiles/x.yml", ".github/workflows/ci.yml"):
        assert not re.search(pattern, other), other


def test_show_prints_every_shipped_profile(capsys):
    from pipeline.cli import main
    from pipeline.resources import builtin_profiles

    for name, path in builtin_profiles().items():
        assert main(["show", name]) == 0
        assert capsys.readouterr().out == path.read_text(encoding="utf-8")
    assert main(["show", "builtin:default"]) == 0
    assert "name: default" in capsys.readouterr().out
    assert main(["show", "--list"]) == 0
    assert capsys.readouterr().out.split() == list(builtin_profiles())
    assert main(["show", "defualt"]) == 1
    assert "did you mean `default`" in capsys.readouterr().err
