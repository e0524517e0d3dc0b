"""Helpers every stage shares live once, at the bottom: the GC pause and pi's agent directory."""

from __future__ import annotations

from pathlib import Path

import pipeline

ROOT = Path(pipeline.__file__).resolve().parent


def _modules_containing(text: str) -> list[str]:
    return sorted(p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.py")
                  if text in p.read_text(encoding="utf-8"))


def test_only_gcpause_switches_the_collector():
    assert _modules_containing("gc.disable()") == ["gcpause.py"]
    assert _modules_containing("gc.enable()") == ["gcpause.py"]


def test_only_agentdir_spells_the_agent_directory_rule():
    assert _modules_containing('"PI_CODING_AGENT_DIR"') == ["agentdir.py"]
    assert _modules_containing('"~/.pi/agent') == []  # the default is agentdir.DEFAULT_AGENT_DIR
