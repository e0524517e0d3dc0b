"""Hostile projects for `pipeline export`: manifests, names and symbolic links never lead it out of its root."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.export.paths import name_problem, path_problem

MANIFEST = ".pi/context-pipeline-export.json"


def export(project: Path, *args: str, target: str = "pi") -> int:
    return main(["export", target, *args, "--project", str(project)])


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def place(tmp_path):
    project, outside = tmp_path / "proj", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (outside / "x").write_text("secret line of an outside file\n")
    return project, outside


@pytest.mark.parametrize("entry", ["../outside/x", "/etc/passwd", ".pi/../../outside/x"])
@pytest.mark.parametrize("force", [False, True])
def test_a_manifest_entry_outside_the_root_is_a_located_error(place, capsys, entry, force):
    project, outside = place
    assert export(project) == 0
    manifest = json.loads((project / MANIFEST).read_text())
    manifest["files"][entry] = "0" * 64
    (project / MANIFEST).write_text(json.dumps(manifest))
    before = snapshot(outside)
    assert export(project, *(["--force"] if force else [])) == 1
    err = capsys.readouterr().err
    assert str(project / MANIFEST) in err and json.dumps(entry) in err and "profile" not in err.split(":")[0]
    assert snapshot(outside) == before


def test_a_template_named_to_climb_out_is_reported_lost_not_written(tmp_path, capsys):
    prompts = tmp_path / "prof" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "..:..:..:pwned.md").write_text("pwned $1\n")
    (prompts / "NUL.md").write_text("device $1\n")
    (prompts / "fine.md").write_text("fine $1\n")
    profile = tmp_path / "prof" / "p.yaml"
    profile.write_text("extends: builtin:default\nname: p\ntemplates:\n  sources: [project, global, prompts]\n")
    project = tmp_path / "a" / "b" / "c" / "proj"
    project.mkdir(parents=True)
    for target in ("claude-code", "pi"):
        assert export(project, str(profile), "--format", "json", target=target) == 0
        report = {c["key"]: c for c in json.loads(capsys.readouterr().out)["report"]}
        assert report["templates...:..:..:pwned"]["how"] == "lost"
        assert report["templates.NUL"]["how"] == "lost" and "reserved" in report["templates.NUL"]["why"]
        assert report["templates.fine"]["how"] == "native"
    assert not list(tmp_path.rglob("pwned*"))
    assert (project / ".claude/commands/fine.md").exists()


@pytest.mark.parametrize("name", ["..", "a/b", "a\\b", "a:b", "x\x00", "a\nb", "CON", "com1.md", "x.", "x ",
                                  "é" * 200])
def test_unsafe_names_are_refused(name):
    assert name_problem(name) is not None
    assert "/" in name or path_problem(f".pi/{name}") is not None


def test_a_linked_state_folder_is_a_conflict_and_force_replaces_the_link_only(place, capsys):
    project, outside = place
    os.symlink(outside, project / ".claude")
    before = snapshot(outside)
    assert export(project, target="claude-code") == 1
    assert "symbolic link" in capsys.readouterr().err
    assert export(project, "--force", target="claude-code") == 0
    assert not (project / ".claude").is_symlink() and (project / ".claude/settings.json").is_file()
    assert snapshot(outside) == before and sorted(os.listdir(outside)) == ["x"]


def test_linked_files_are_never_followed(place, capsys):
    project, outside = place
    assert export(project) == 0
    (project / ".pi/settings.json").unlink()
    os.symlink(outside / "x", project / ".pi/settings.json")
    ext = project / ".pi/extensions/context-pipeline/index.js"
    ext.unlink()
    os.symlink(outside / "dangling.js", ext)
    before = snapshot(outside)
    assert export(project) == 1
    err = capsys.readouterr().err
    assert "symbolic link" in err and "secret line" not in err
    assert export(project, "--force") == 0
    assert not ext.is_symlink() and not (project / ".pi/settings.json").is_symlink()
    assert snapshot(outside) == before and not (outside / "dangling.js").exists()


def test_a_removal_never_deletes_through_a_link(tmp_path):
    prompts = tmp_path / "prof" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "fix.md").write_text("Fix $1\n")
    profile = tmp_path / "prof" / "p.yaml"
    profile.write_text("extends: builtin:default\nname: p\ntemplates:\n  sources: [project, global, prompts]\n")
    project, outside = tmp_path / "proj", tmp_path / "outside"
    project.mkdir()
    assert export(project, str(profile)) == 0
    os.rename(project / ".pi/prompts", outside)
    os.symlink(outside, project / ".pi/prompts")
    (prompts / "fix.md").unlink()
    assert export(project, str(profile), "--force") == 0
    assert (outside / "fix.md").read_text() == "Fix $1\n"


TARGETS = ("pi", "claude-code", "codex", "opencode", "gemini", "qwen-code", "kilo", "copilot", "agents-md")


def manifest_of(target: str, tmp_path: Path) -> str:
    """Where ``target`` keeps its manifest (read from a plain export, not assumed)."""
    ref = tmp_path / f"ref-{target}"
    ref.mkdir()
    assert export(ref, target=target) == 0
    (found,) = [p for p in ref.rglob("context-pipeline-export.json")]
    return str(found.relative_to(ref))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("linked", ["folder", "file"])
def test_a_link_on_the_manifests_way_is_a_conflict_and_force_replaces_only_the_link(place, capsys, target, linked):
    """The manifest is a file the export writes like any other: a link to it, or to the folder
    holding it (a user's `.kilo` or `.agents` kept elsewhere), is a conflict, never silently
    replaced; --force replaces the link, never what is behind it."""
    project, outside = place
    rel = manifest_of(target, project.parent)
    link = project / (rel.split("/")[0] if linked == "folder" else rel)
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside if linked == "folder" else outside / "x", link)
    before = snapshot(outside)
    assert export(project, target=target) == 1
    err = capsys.readouterr().err
    assert "symbolic link" in err and str(project / rel) in err and "secret line" not in err
    assert link.is_symlink()
    assert export(project, "--force", target=target) == 0
    assert not link.is_symlink() and json.loads((project / rel).read_text())["target"] == target
    assert snapshot(outside) == before and sorted(os.listdir(outside)) == ["x"]
