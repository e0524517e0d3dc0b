"""`pipeline export agents-md`: the team's sections in the export's marked block of AGENTS.md, the
user's text around it kept byte for byte, the block found again on re-export, an edited block a
conflict, and a loss report that names what an AGENTS.md reader cannot receive."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest


from .profiles import TEAM, dry_report, replacing, run_export

BEGIN, END = "<!-- context-pipeline: begin -->", "<!-- context-pipeline: end -->"
BLOCK = f"{BEGIN}\nPrefer short functions.\n{END}\n"
#: the user's hand-written AGENTS.md: CRLF lines, no final line break, non-ASCII, a marker-like comment
HAND = "# Our rules\r\n\r\nUse tabs. Ren\u00e9 reviews.\r\n<!-- not ours -->\r\nLast line"
ALLOW = ("--allow-loss", "system_prompt.sections", "compaction", "summary", "summarizer", "retry", "templates")


def export(project: Path, *args: str) -> int:
    return run_export("agents-md", project, *args)


def report(project: Path, capsys, *args: str) -> dict:
    return dry_report("agents-md", project, capsys, *args)


@pytest.fixture
def team(tmp_path: Path) -> str:
    path = tmp_path / "team.yaml"
    path.write_text(TEAM)
    return str(path)


def project(tmp_path: Path, text: str | None = None) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    if text is not None:
        (root / "AGENTS.md").write_bytes(text.encode("utf-8"))
    return root


def test_a_project_without_agents_md_gets_one_holding_only_the_block(tmp_path, team):
    root = project(tmp_path)
    assert export(root, team) == 0
    assert (root / "AGENTS.md").read_text() == BLOCK
    manifest = json.loads((root / ".agents/context-pipeline-export.json").read_text())
    assert manifest["target"] == "agents-md" and list(manifest["blocks"]) == ["AGENTS.md"]


def test_the_users_text_is_kept_byte_for_byte_and_the_block_found_again(tmp_path, team):
    root = project(tmp_path, HAND)
    assert export(root, team) == 0
    data = (root / "AGENTS.md").read_bytes()
    assert data == (HAND + "\n\n" + BLOCK).encode("utf-8")
    assert export(root, team) == 0 and (root / "AGENTS.md").read_bytes() == data  # no second block
    # the user writes above and below the block: a re-export with another profile rewrites the block only
    edited = "Above.\n" + data.decode() + "Below, added later.\n"
    (root / "AGENTS.md").write_bytes(edited.encode())
    other = tmp_path / "other.yaml"
    other.write_text(TEAM.replace("Prefer short functions.", "Name things plainly."))
    assert export(root, str(other)) == 0
    assert (root / "AGENTS.md").read_bytes() == edited.replace("Prefer short functions.", "Name things plainly.").encode()
    assert export(root, str(other), "--check", *ALLOW) == 0


def test_an_edited_block_is_a_conflict_that_writes_nothing_and_quotes_nothing(tmp_path, team, capsys):
    root = project(tmp_path, "Mine.\n")
    assert export(root, team) == 0
    edited = (root / "AGENTS.md").read_text().replace("Prefer short functions.", "SECRET-TOKEN-123 edited")
    (root / "AGENTS.md").write_text(edited)
    manifest = (root / ".agents/context-pipeline-export.json").read_bytes()
    capsys.readouterr()
    assert export(root, team) == 1
    err = capsys.readouterr().err
    assert "marked block was edited" in err and "AGENTS.md" in err and "SECRET" not in err and "Traceback" not in err
    assert (root / "AGENTS.md").read_text() == edited
    assert (root / ".agents/context-pipeline-export.json").read_bytes() == manifest
    assert export(root, team, "--check", *ALLOW) == 1  # drift
    assert export(root, team, "--force") == 0
    assert (root / "AGENTS.md").read_text() == "Mine.\n\n" + BLOCK


def test_a_block_this_export_did_not_write_is_a_conflict(tmp_path, team, capsys):
    root = project(tmp_path, "Mine.\n" + BLOCK)  # copied from another repository with its block
    capsys.readouterr()
    assert export(root, team) == 1
    assert "this export did not write" in capsys.readouterr().err
    assert (root / "AGENTS.md").read_text() == "Mine.\n" + BLOCK


@pytest.mark.parametrize("text", [f"a\n{BEGIN}\nb\n", f"{END}\nb\n{BEGIN}\n", f"{BEGIN}\n{BEGIN}\n{END}\n"])
def test_broken_markers_are_a_located_error_and_the_file_is_kept(tmp_path, team, capsys, text):
    root = project(tmp_path, text)
    capsys.readouterr()
    assert export(root, team, "--force") == 1
    err = capsys.readouterr().err
    assert f"{root / 'AGENTS.md'}:" in err and "markers are broken" in err
    assert (root / "AGENTS.md").read_text() == text


def test_a_linked_agents_md_is_not_written_through(tmp_path, team, capsys):
    root = project(tmp_path)
    outside = tmp_path / "elsewhere.md"
    outside.write_text("theirs\n")
    os.symlink(outside, root / "AGENTS.md")
    assert export(root, team) == 1
    assert outside.read_text() == "theirs\n" and (root / "AGENTS.md").is_symlink()


def test_not_utf8_is_refused_and_kept(tmp_path, team, capsys):
    root = project(tmp_path)
    (root / "AGENTS.md").write_bytes(b"Ren\xe9\n")
    capsys.readouterr()
    assert export(root, team) == 1
    assert "not UTF-8" in capsys.readouterr().err
    assert (root / "AGENTS.md").read_bytes() == b"Ren\xe9\n"


def test_without_team_sections_the_block_goes_and_the_users_lines_stay(tmp_path, team):
    root = project(tmp_path, "Mine.\n")
    assert export(root, team) == 0
    assert export(root, "default") == 0  # builtin:default has no team section
    assert (root / "AGENTS.md").read_text() == "Mine.\n\n"
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    assert export(fresh) == 0 and not (fresh / "AGENTS.md").exists()  # nothing to write: no file made


def test_the_report_names_what_an_agents_md_reader_cannot_receive(tmp_path, team, capsys):
    root = project(tmp_path)
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts/review.md").write_text("Review $@\n")
    profile = tmp_path / "t.yaml"
    profile.write_text(TEAM + "templates:\n  sources: [project, ./prompts]\n")
    got = report(root, capsys, str(profile))
    assert got["system_prompt"]["how"] == "own"
    assert got["system_prompt.sections.house"] == {"key": "system_prompt.sections.house", "how": "native",
                                                   "where": "AGENTS.md (the export's marked block)"}
    assert got["system_prompt.sections.where"]["how"] == "lost"  # it holds ${cwd}
    assert got["system_prompt.sections.tools"]["how"] == "own"
    assert got["templates.review"]["how"] == "lost" and "commands" in got["templates.review"]["why"]
    for key in ("compaction", "summary", "summarizer", "retry"):
        assert got[key]["how"] == "lost" and got[key]["why"]
    assert export(root, str(profile), "--check") == 1  # losses --allow-loss does not name
    assert export(root, str(profile)) == 0
    assert export(root, str(profile), "--check", *ALLOW) == 0


def test_base_profile_cannot_replace_a_readers_prompt_and_says_so(tmp_path, capsys):
    root = project(tmp_path)
    got = report(root, capsys, replacing(tmp_path))
    assert got["system_prompt.base"]["how"] == "lost"
    assert got["system_prompt.sections.identity"]["how"] == "own"  # pi's prompt is not written into AGENTS.md
    assert export(root, replacing(tmp_path)) == 0 and not (root / "AGENTS.md").exists()
