"""`pipeline export pi` and `pipeline export agents-md` in one project, proven on the real pi.

The agents-md export writes the team's sections into a marked block of `AGENTS.md`, which pi
also discovers as a context file and hands to the pi export's extension. The extension renders
each context file without that block (the profile renders its sections itself), so the request
pi sends holds every team section once and the user's own `AGENTS.md` text once, and equals
`pipeline render --discover` of the profile (docs/export.md#exports-side-by-side).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_export_pi import _run_pi, _system, _world, pi_env  # noqa: E402,F401  (pi_env: the fixture)

from pipeline.prompt.context import BLOCK_BEGIN, BLOCK_END  # noqa: E402
from pipeline.testing.loopback import LoopbackServer  # noqa: E402

TEAM = """\
extends: builtin:default
name: team
system_prompt:
  sections:
    - {id: house_style, after: rules, text: "House style: prefer short functions with one purpose."}
    - {id: where, after: house_style, text: "Build in ${cwd} with make."}
"""
USERS = "Run the tests with make check before committing.\n"  # what _world writes into AGENTS.md
ALLOW = ("--allow-loss", "compaction", "summary", "summarizer", "retry", "templates")


def _pipeline(project: Path, env: dict, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=project, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("order", (("pi", "agents-md"), ("agents-md", "pi")))
def test_pi_sees_each_team_section_once(tmp_path, pi_env, order):
    (profile := tmp_path / "team.yaml").write_text(TEAM)
    with LoopbackServer([{"text": "ok"}]) as server:
        project, env = _world(tmp_path, server, pi_env)
        for target in order:
            _pipeline(project, env, "export", target, str(profile), "--project", str(project),
                      *(ALLOW if target == "agents-md" else ()))
        agents = (project / "AGENTS.md").read_text()
        assert agents.startswith(USERS) and BLOCK_BEGIN in agents and BLOCK_END in agents
        assert "House style: prefer short functions" in agents  # the block holds the team's sections
        _run_pi(project, env, "hi")
        sent = _system(server)
    assert sent.count("House style: prefer short functions with one purpose.") == 1
    assert sent.count(f"Build in {project} with make.") == 1
    assert sent.count(USERS.strip()) == 1
    assert str(project / "AGENTS.md") in sent  # the user's file is still a context file
    assert BLOCK_BEGIN not in sent and BLOCK_END not in sent
    rendered = _pipeline(project, env, "render", str(profile), "--discover", "--cwd", str(project),
                         "--tools", "read,bash,edit,write")
    assert sent == rendered[:-1]
