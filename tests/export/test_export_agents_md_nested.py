"""Nested AGENTS.md for a monorepo (`system_prompt.sections.*.folder`): each folder's sections in the
export's marked block of that folder's AGENTS.md, the rest in the root's; the user's text around every
block kept byte for byte; a folder a re-export drops loses only its block (and the file, when the export
made it and nothing else is left); `--check` and `import` see the nested files; a bad folder is a
located `profile.export-folder` problem that writes nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .profiles import dry_report, run_export

BEGIN, END = "<!-- context-pipeline: begin -->", "<!-- context-pipeline: end -->"
NESTED = """extends: builtin:default
name: mono
system_prompt:
  sections:
    - {id: house, after: rules, text: Prefer short functions.}
    - {id: api, after: house, folder: packages/api, text: Validate every request.}
    - {id: api_errors, after: api, folder: packages/api/, text: Errors are JSON.}
    - {id: web, after: api_errors, folder: packages/web, text: Components are small.}
"""
#: the user's own AGENTS.md of the api package: CRLF lines, no final line break, non-ASCII
API_HAND = "# API\r\n\r\nRen\u00e9 owns this.\r\nLast line"
ALLOW = ("--allow-loss", "system_prompt.sections", "compaction", "summary", "summarizer", "retry")


def _monorepo(tmp_path: Path) -> Path:
    root = tmp_path / "mono"
    (root / "packages" / "api").mkdir(parents=True)
    (root / "packages" / "web").mkdir()
    (root / "AGENTS.md").write_text("Root rules.\n")
    (root / "packages" / "api" / "AGENTS.md").write_bytes(API_HAND.encode("utf-8"))
    return root


def _profile(tmp_path: Path, text: str = NESTED, name: str = "mono.yaml") -> str:
    (tmp_path / name).write_text(text)
    return str(tmp_path / name)


def test_each_folders_sections_go_to_its_agents_md_and_a_dropped_folder_loses_only_its_block(tmp_path, capsys):
    root = _monorepo(tmp_path)
    profile = _profile(tmp_path)
    got = dry_report("agents-md", root, capsys, profile)
    assert got["system_prompt.sections.house"]["where"] == "AGENTS.md (the export's marked block)"
    for key in ("api", "api_errors"):
        assert got[f"system_prompt.sections.{key}"]["where"].startswith("packages/api/AGENTS.md (the export's marked")
    assert got["system_prompt.sections.web"]["where"].startswith("packages/web/AGENTS.md")
    assert "folder" in got["system_prompt"]["where"]
    assert run_export("agents-md", root, profile) == 0
    assert (root / "AGENTS.md").read_text() == f"Root rules.\n\n{BEGIN}\nPrefer short functions.\n{END}\n"
    api = (root / "packages/api/AGENTS.md").read_bytes()
    assert api == (API_HAND + f"\n\n{BEGIN}\nValidate every request.\n\nErrors are JSON.\n{END}\n").encode("utf-8")
    assert (root / "packages/web/AGENTS.md").read_text() == f"{BEGIN}\nComponents are small.\n{END}\n"
    manifest = json.loads((root / ".agents/context-pipeline-export.json").read_text())
    assert sorted(manifest["blocks"]) == ["AGENTS.md", "packages/api/AGENTS.md", "packages/web/AGENTS.md"]
    assert run_export("agents-md", root, profile, "--check", *ALLOW) == 0
    # an edited nested block is drift for --check, and a conflict for the export
    (root / "packages/api/AGENTS.md").write_bytes(api.replace(b"Errors are JSON.", b"Errors are XML."))
    assert run_export("agents-md", root, profile, "--check", *ALLOW) == 1
    assert run_export("agents-md", root, profile) == 1
    assert run_export("agents-md", root, profile, "--force") == 0
    # the folders leave the profile: their blocks go, the user's text stays, the file the export made goes
    flat = _profile(tmp_path, "extends: builtin:default\nname: flat\nsystem_prompt:\n  sections:\n"
                    "    - {id: house, after: rules, text: Prefer short functions.}\n", "flat.yaml")
    assert run_export("agents-md", root, flat) == 0
    assert (root / "packages/api/AGENTS.md").read_bytes() == (API_HAND + "\n\n").encode("utf-8")
    assert not (root / "packages/web/AGENTS.md").exists() and (root / "packages/web").is_dir()
    assert list(json.loads((root / ".agents/context-pipeline-export.json").read_text())["blocks"]) == ["AGENTS.md"]


def test_import_reads_each_nested_block_back_as_a_section_with_its_folder(tmp_path, capsys):
    from pipeline.cli import main

    root = _monorepo(tmp_path)
    assert run_export("agents-md", root, _profile(tmp_path)) == 0
    back = tmp_path / "back.yaml"
    assert main(["import", "agents-md", "--project", str(root), "-o", str(back)]) == 0
    text = back.read_text()
    assert 'folder: "packages/api"' in text and 'folder: "packages/web"' in text
    capsys.readouterr()
    assert run_export("agents-md", root, str(back), "--dry-run") == 0  # the round trip: nothing to change
    assert "no change" in capsys.readouterr().out


@pytest.mark.parametrize(("folder", "says"), [
    ("/etc", "an absolute path"),
    ("../outside", "climbs out of the root"),
    ("packages/none", "is not a folder of the project"),
    ("packages/api/AGENTS.md", "is not a folder"),
    ("linked", "a symbolic link"),
])
def test_a_bad_folder_is_a_located_problem_and_nothing_is_written(tmp_path, folder, says):
    from pipeline import compile_profile
    from pipeline.errors import PipelineError
    from pipeline.export import TARGETS, Place

    root = _monorepo(tmp_path)
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", root / "linked")
    profile = _profile(tmp_path, NESTED.replace("folder: packages/web", f"folder: {json.dumps(folder)}"))
    with pytest.raises(PipelineError) as err:
        TARGETS["agents-md"].export(compile_profile(profile), Place(str(root)))
    (problem,) = err.value.problems
    assert problem.code == "profile.export-folder" and says in problem.message
    assert problem.key == "system_prompt.sections.web.folder"
    assert problem.location is not None and (problem.location.file, problem.location.line) == (profile, 8)
    assert run_export("agents-md", root, profile) == 1
    assert not (root / ".agents").exists() and (root / "AGENTS.md").read_text() == "Root rules.\n"
    assert list((tmp_path / "outside").iterdir()) == []
