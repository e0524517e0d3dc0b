"""The export's marked block of a shared context file (`AGENTS.md`) is not read back as the profile's
input: the renderer (Python here, the pi extension's JavaScript in tests/agents/test_export_renderer.py)
drops a well-formed block from each context file it reads, leaves broken markers alone, and leaves out a
file that held nothing but the block. `pipeline render --discover` in a project with both the user's
text and the agents-md export's block shows each once."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.export import base
from pipeline.prompt.context import BLOCK_BEGIN, BLOCK_END, without_export_block

from .profiles import TEAM

EXTENSION = Path(base.__file__).with_name("pi_extension.js")
USER = "# Our rules\n\nUse tabs. Ren\u00e9 reviews.\n"
BLOCK = f"{BLOCK_BEGIN}\nPrefer short functions.\n{BLOCK_END}\n"


def test_the_extension_holds_the_same_markers():
    source = EXTENSION.read_text(encoding="utf-8")
    found = dict(re.findall(r'^const (BLOCK_BEGIN|BLOCK_END) = (".*");$', source, re.M))
    assert {k: json.loads(v) for k, v in found.items()} == {"BLOCK_BEGIN": BLOCK_BEGIN, "BLOCK_END": BLOCK_END}
    assert (base.BLOCK_BEGIN, base.BLOCK_END) == (BLOCK_BEGIN, BLOCK_END)


@pytest.mark.parametrize("text, want", [
    (USER + "\n" + BLOCK, USER + "\n"),  # where the export appends it
    (BLOCK + USER, USER),
    ("a\r\n" + BLOCK.replace("\n", "\r\n") + "b", "a\r\nb"),
    (f"a\n{BLOCK_BEGIN}\nx\n{BLOCK_END}", "a\n"),  # no final line break
    (BLOCK, None),  # nothing but the block: the file is left out
    ("\n  \n" + BLOCK + "\t\n", None),
    (USER, USER),  # no block
    ("", ""),  # an empty file without a block stays as pi reads it
    (BLOCK + BLOCK, BLOCK + BLOCK),  # doubled: left as it is
    (f"{BLOCK_END}\nx\n{BLOCK_BEGIN}\n", f"{BLOCK_END}\nx\n{BLOCK_BEGIN}\n"),  # reversed
    (f"{BLOCK_BEGIN}\nx\n{BLOCK_BEGIN}\n", f"{BLOCK_BEGIN}\nx\n{BLOCK_BEGIN}\n"),  # two begins
    (f"{BLOCK_BEGIN}\nx\n", f"{BLOCK_BEGIN}\nx\n"),  # no end
    (f" {BLOCK_BEGIN}\nx\n{BLOCK_END}\n", f" {BLOCK_BEGIN}\nx\n{BLOCK_END}\n"),  # not a marker line
    (f"a\u2028{BLOCK_BEGIN}\u2028x\n{BLOCK_END}\n", f"a\u2028{BLOCK_BEGIN}\u2028x\n{BLOCK_END}\n"),
    (f"a\u2028{BLOCK_BEGIN}\nx\n{BLOCK_END}\n", "a\u2028"),  # lines as str.splitlines cuts them
])
def test_a_well_formed_block_is_removed(text, want):
    assert without_export_block(text) == want


def _project(tmp_path: Path, agents: str) -> tuple[Path, str]:
    (tmp_path / "team.yaml").write_text(TEAM)
    project = tmp_path / "proj"
    project.mkdir()
    (project / "AGENTS.md").write_text(agents)
    return project, str(tmp_path / "team.yaml")


def _render(capsys, profile: str, project: Path, agent_dir: Path) -> str:
    capsys.readouterr()
    assert main(["render", profile, "--discover", "--cwd", str(project), "--agent-dir", str(agent_dir)]) == 0
    return capsys.readouterr().out


def test_render_discover_shows_the_user_text_and_the_team_sections_once(tmp_path, capsys):
    project, profile = _project(tmp_path, USER)
    assert main(["export", "agents-md", profile, "--project", str(project), "--allow-loss", "compaction",
                 "summary", "summarizer", "retry", "templates"]) == 0
    agents = (project / "AGENTS.md").read_text()
    assert agents.count("Prefer short functions.") == 1 and BLOCK_BEGIN in agents and agents.startswith(USER)
    out = _render(capsys, profile, project, tmp_path / "agent")
    assert out.count("Use tabs. Ren\u00e9 reviews.") == 1
    assert out.count("Prefer short functions.") == 1
    assert out.count(f"Build in {project}.") == 1
    assert BLOCK_BEGIN not in out and BLOCK_END not in out
    assert str(project / "AGENTS.md") in out  # the file is still there, with the user's text


def test_a_file_holding_only_the_block_is_left_out(tmp_path, capsys):
    project, profile = _project(tmp_path, "")
    (project / "AGENTS.md").unlink()
    with_file = tmp_path / "other"
    with_file.mkdir()
    (with_file / "AGENTS.md").write_text(BLOCK)
    empty = tmp_path / "empty"
    empty.mkdir()
    agent = tmp_path / "agent"
    got = _render(capsys, profile, with_file, agent)
    assert got.count("Prefer short functions.") == 1
    assert "AGENTS.md" not in got
    assert got.replace(str(with_file), "X") == _render(capsys, profile, empty, agent).replace(str(empty), "X")


def test_broken_markers_leave_the_file_as_it_is(tmp_path, capsys):
    broken = USER + BLOCK + BLOCK
    project, profile = _project(tmp_path, broken)
    out = _render(capsys, profile, project, tmp_path / "agent")
    assert out.count("Prefer short functions.") == 3 and out.count(BLOCK_BEGIN) == 2
