"""`pipeline export TARGET --check` on the targets of issue 33 (qwen-code, kilo, copilot): a fresh
export is no drift; a file or a merged settings key the export wrote, edited on disk, is drift
(exit 1, nothing written); a key of the user's own in the shared settings file is not; a loss
--allow-loss does not name fails the check. (agents-md: tests/export/test_export_agents_md.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .profiles import TEAM, run_export

PROFILE = TEAM.replace("name: team\n", "name: team\ntemplates:\n  sources: [./prompts]\n") + (
    "compaction:\n  trigger: {percent_of_window: 40}\n  keep_recent_tokens: 12000\n"
    "summarizer: {provider: openai, model: small-one}\n")
ALLOW = ("--allow-loss", "system_prompt.sections", "templates", "compaction", "summary", "summarizer", "retry")


def _set(path: Path, keys: tuple, value) -> None:
    data = json.loads(path.read_text())
    node = data
    for key in keys[:-1]:
        node = node.setdefault(key, {})
    node[keys[-1]] = value
    path.write_text(json.dumps(data, indent=2) + "\n")


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


#: target -> the edits of what the export wrote (a file it owns; a settings key it merged), by the
#: file they change
DRIFT = {
    "qwen-code": {
        ".qwen/commands/review.toml": lambda p: _replace(p / ".qwen/commands/review.toml", "Review", "Look at"),
        ".qwen/settings.json": lambda p: _set(p / ".qwen/settings.json", ("context", "autoCompactThreshold"), 0.9),
    },
    "kilo": {".kilo/command/review.md": lambda p: _replace(p / ".kilo/command/review.md", "Review", "Look at"),
             "kilo.json": lambda p: _set(p / "kilo.json", ("compaction", "preserve_recent_tokens"), 1)},
    "copilot": {".github/instructions/context-pipeline.instructions.md":
                lambda p: _replace(p / ".github/instructions/context-pipeline.instructions.md", "Prefer", "Avoid")},
}
#: target -> an edit of a key of the user's own in the settings file the export merges into
USERS_OWN = {"qwen-code": lambda p: _set(p / ".qwen/settings.json", ("ui", "theme"), "dark"),
             "kilo": lambda p: _set(p / "kilo.json", ("theme",), "dark")}


def _fresh(tmp_path: Path, target: str) -> tuple[str, Path]:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts/review.md").write_text("---\ndescription: Review\n---\nReview $@ now.\n")
    (tmp_path / "team.yaml").write_text(PROFILE)
    project = tmp_path / "project"
    project.mkdir()
    assert run_export(target, project, str(tmp_path / "team.yaml")) == 0
    return str(tmp_path / "team.yaml"), project


def _tree(project: Path) -> dict:
    return {p: p.read_bytes() for p in sorted(project.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("target", sorted(DRIFT))
def test_a_fresh_export_passes_and_an_unnamed_loss_fails(tmp_path, target):
    profile, project = _fresh(tmp_path, target)
    assert run_export(target, project, profile, "--check", *ALLOW) == 0
    assert run_export(target, project, profile, "--check") == 1  # its losses are not named


@pytest.mark.parametrize(("target", "file"), [(t, f) for t in sorted(DRIFT) for f in DRIFT[t]])
def test_an_edit_of_what_the_export_wrote_is_drift_named_by_its_file(tmp_path, target, file, capsys):
    profile, project = _fresh(tmp_path, target)
    DRIFT[target][file](project)
    before = _tree(project)
    capsys.readouterr()
    assert run_export(target, project, profile, "--check", *ALLOW) == 1
    err = capsys.readouterr().err
    assert f"1 file(s) differ from what the profile exports ({file})" in err and "Traceback" not in err
    assert _tree(project) == before  # --check writes nothing


@pytest.mark.parametrize("target", ["qwen-code", "kilo"])
def test_a_key_of_the_users_own_in_the_shared_settings_is_no_drift(tmp_path, target):
    profile, project = _fresh(tmp_path, target)
    USERS_OWN[target](project)
    assert run_export(target, project, profile, "--check", *ALLOW) == 0
