"""`pipeline import TOOL` is a sub-command per tool, with its own help."""

from __future__ import annotations

import pytest

from pipeline.cli import main


def test_import_pi_help_is_its_own(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["import", "pi", "--help"])
    assert exit.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: pipeline import pi ") and "AGENT_DIR" in out
    assert "pipeline import pi -o agent-profiles/pi.yaml" in out and "claude-code" not in out
