"""`pipeline import TOOL` is a sub-command per tool, with its own help."""

from __future__ import annotations

import json

import pytest

from pipeline.cli import main


def test_import_pi_help_is_its_own(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["import", "pi", "--help"])
    assert exit.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: pipeline import pi ") and "AGENT_DIR" in out
    assert "pipeline import pi -o agent-profiles/pi.yaml" in out and "claude-code" not in out


def test_import_writes_the_schema_its_overlay_names(tmp_path, capsys):
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text('{"compaction": {"reserveTokens": 20000}}')
    out = tmp_path / "profiles" / "pi.yaml"
    assert main(["import", "pi", str(agent), "-o", str(out)]) == 0
    first = out.read_text().splitlines()[0]
    assert first == "# yaml-language-server: $schema=profile.schema.json"
    schema = json.loads((out.parent / "profile.schema.json").read_text())
    assert "compaction" in schema["properties"]
    assert main(["validate", str(out.parent)]) == 0
