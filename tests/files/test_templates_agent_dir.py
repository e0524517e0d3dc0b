"""`pipeline templates --agent-dir DIR` reads DIR/prompts as the global source, as render does."""

from __future__ import annotations

import json

from pipeline.cli import main


def test_templates_takes_agent_dir(tmp_path, capsys, monkeypatch):
    agent = tmp_path / "agent"
    (agent / "prompts").mkdir(parents=True)
    (agent / "prompts" / "hello.md").write_text("---\ndescription: say it\n---\nHi $1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "elsewhere"))
    assert main(["templates", "--format", "json", "--agent-dir", str(agent)]) == 0
    names = [t["name"] for t in json.loads(capsys.readouterr().out)]
    assert names == ["hello"]
    assert main(["templates", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
