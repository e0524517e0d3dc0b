"""Hostile shared settings files: what cannot be read exactly is refused and left as it was; user bytes and hooks stay."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.cli import main

SETTINGS = ".pi/settings.json"


def export(project: Path, *args: str, target: str = "pi") -> int:
    return main(["export", target, *args, "--project", str(project)])


@pytest.mark.parametrize("data", [b'{"author": "Ren\xe9"}', b'{"a": "\\ud800"}', b'{"n": 1e400}',
                                  b"[" * 100_000 + b"]" * 100_000, b'{"a": 1, "a": 2}', b"x" * (2 << 20)])
@pytest.mark.parametrize("force", [False, True])
def test_a_file_that_cannot_be_read_exactly_is_refused_and_kept(tmp_path, capsys, data, force):
    (tmp_path / ".pi").mkdir()
    (tmp_path / SETTINGS).write_bytes(data)
    assert export(tmp_path, *(["--force"] if force else [])) == 1
    err = capsys.readouterr().err
    assert str(tmp_path / SETTINGS) in err and "Traceback" not in err
    assert (tmp_path / SETTINGS).read_bytes() == data
    assert not (tmp_path / ".pi/context-pipeline-export.json").exists()


def test_a_fifo_is_refused_without_hanging(tmp_path):
    (tmp_path / ".pi").mkdir()
    os.mkfifo(tmp_path / SETTINGS)
    done = subprocess.run([sys.executable, "-m", "pipeline", "export", "pi", "--project", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "FIFO" in done.stderr


def test_the_users_bytes_round_trip_and_only_owned_keys_change(tmp_path):
    (tmp_path / ".pi").mkdir()
    text = '{\n\t"n": 1.50e3,\n\t"name": "Ren\\u00e9",\n\t"compaction": {"enabled": true}\n}'
    (tmp_path / SETTINGS).write_text(text)
    assert export(tmp_path, "--force") == 0
    new = (tmp_path / SETTINGS).read_text()
    assert new.startswith('{\n\t"n": 1.50e3,\n\t"name": "Ren\\u00e9",\n\t"compaction": {"enabled": true, ')
    assert json.loads(new)["compaction"]["reserveTokens"] == 16384


def test_an_edited_owned_key_is_a_conflict_that_names_the_key_not_the_value(tmp_path, capsys):
    assert export(tmp_path) == 0
    data = json.loads((tmp_path / SETTINGS).read_text())
    data["compaction"]["reserveTokens"] = "Bearer sk-live-123"
    (tmp_path / SETTINGS).write_text(json.dumps(data))
    assert export(tmp_path) == 1
    err = capsys.readouterr().err
    assert "compaction.reserveTokens was edited" in err and "sk-live" not in err
    assert export(tmp_path, "--force") == 0
    assert json.loads((tmp_path / SETTINGS).read_text())["compaction"]["reserveTokens"] == 16384


def test_a_users_key_is_a_conflict_without_its_value(tmp_path, capsys):
    (tmp_path / ".pi").mkdir()
    (tmp_path / SETTINGS).write_text('{"retry": {"baseDelayMs": "Bearer sk-live-456"}}')
    assert export(tmp_path) == 1
    err = capsys.readouterr().err
    assert "key retry.baseDelayMs is set in the file" in err and "sk-live" not in err


def test_a_users_pre_compact_hooks_are_extended_and_kept(tmp_path):
    mine = {"matcher": "", "hooks": [{"type": "command", "command": "echo mine"}]}
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude/settings.json").write_text(json.dumps({"hooks": {"PreCompact": [mine]}}))
    assert export(tmp_path, target="claude-code") == 0
    hooks = json.loads((tmp_path / ".claude/settings.json").read_text())["hooks"]["PreCompact"]
    assert hooks[0] == mine and len(hooks) == 2
    assert export(tmp_path, target="claude-code") == 0
    assert len(json.loads((tmp_path / ".claude/settings.json").read_text())["hooks"]["PreCompact"]) == 2
    masked = tmp_path / "m.yaml"
    masked.write_text("extends: builtin:default\nname: m\ncompaction:\n  strategy: mask_tool_results\n")
    assert export(tmp_path, str(masked), target="claude-code") == 0
    assert json.loads((tmp_path / ".claude/settings.json").read_text())["hooks"]["PreCompact"] == [mine]
