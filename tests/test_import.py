"""`pipeline import`: overlay profiles from pi, Claude Code, opencode and Gemini CLI setups.

The pi setups and pi 0.84.0's answers come from tests/data/import_pi/vectors.json
(gen_import_pi_vectors.py, with the oracle's ``agent_system_prompt``); no Node here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline import compile_profile
from pipeline.cli import main
from pipeline.js import load_yaml

VECTORS = json.loads((Path(__file__).parent / "data" / "import_pi" / "vectors.json").read_text(encoding="utf-8"))
SETUPS = VECTORS["setups"]
SETTING_KEYS = {("compaction", "enabled"): ("compaction", "enabled"),
                ("compaction", "reserveTokens"): ("compaction", "reserve_tokens"),
                ("compaction", "keepRecentTokens"): ("compaction", "keep_recent_tokens"),
                ("branchSummary", "reserveTokens"): ("compaction", "branch", "reserve_tokens"),
                ("retry", "enabled"): ("retry", "enabled"), ("retry", "maxRetries"): ("retry", "max_retries"),
                ("retry", "baseDelayMs"): ("retry", "base_delay_ms")}



def lay_out(root: Path, setup: dict) -> dict:
    dirs = {k: root / k for k in ("agent", "project", "home")}
    for key, directory in dirs.items():
        directory.mkdir(parents=True, exist_ok=True)
        for rel, text in setup.get(key, {}).items():
            (directory / rel).parent.mkdir(parents=True, exist_ok=True)
            (directory / rel).write_text(text, encoding="utf-8")
    dirs["cwd"] = dirs["project"] / setup.get("cwd", "")
    return dirs


def rooted(value, root: Path):
    return json.loads(json.dumps(value).replace("<ROOT>", str(root)))


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    return tmp_path


@pytest.mark.parametrize("setup", SETUPS, ids=[s["name"] for s in SETUPS])
def test_import_pi_renders_what_pi_builds(isolated, setup, capsys):
    root = isolated
    dirs = lay_out(root, setup)
    expected = rooted(setup["expected"], root)
    prof = root / "out" / "pi.yaml"
    assert main(["import", "pi", str(dirs["agent"]), "--project", str(dirs["cwd"]), "-o", str(prof)]) == 0
    assert main(["validate", "--strict", str(prof)]) == 0
    report = root / "out" / "render.json"
    assert main(["render", str(prof), "--discover", "--cwd", str(dirs["cwd"]), "--agent-dir", str(dirs["agent"]),
                 "--format", "json", "-o", str(report)]) == 0
    rendered = json.loads(report.read_text(encoding="utf-8"))
    sections = {s["id"]: s["text"] for s in rendered["sections"]}
    options = expected["options"]
    assert sections.get("custom") == options["customPrompt"]
    assert sections.get("append") == options["appendSystemPrompt"]
    context = rendered["context"]
    assert [{"path": f["path"], "content": f["content"]} for f in context["context_files"]] == options["contextFiles"]
    assert [{"name": s["name"], "description": s["description"], "filePath": s["file_path"]}
            for s in context["skills"]] == options["skills"]
    assert context["cwd"] == options["cwd"]
    # the data parts occur in our prompt in pi's order (the sentences between them are ours)
    prompt, at = rendered["prompt"], 0
    for piece in expected["pieces"]:
        found = prompt.find(piece, at)
        assert found != -1, piece
        at = found + len(piece)
    if options["customPrompt"] is not None:
        assert prompt.startswith(options["customPrompt"])
    # templates: the ones pi loaded, in pi's order
    p = compile_profile(str(prof))
    loaded = p.load_templates(dirs["cwd"], agent=dirs["agent"])
    assert [{"name": t.name, "content": t.body, "filePath": str(t.path)} for t in loaded] == expected["prompts"]
    # compaction and retry numbers: the setup's
    for (section, key), dest in SETTING_KEYS.items():
        value = expected["settings"].get(section, {}).get(key)
        if value is not None:
            got = p.profile
            for part in dest:
                got = getattr(got, part)
            assert got == value, dest


def test_import_pi_prints_the_profile_and_names_what_it_left_out(isolated, capsys):
    dirs = lay_out(isolated, SETUPS[0])
    assert main(["import", "pi", str(dirs["agent"])]) == 0
    cap = capsys.readouterr()
    data = load_yaml(cap.out)
    assert data["extends"] == "builtin:default"
    assert data["compaction"]["reserve_tokens"] == 12000
    assert cap.out.startswith("# yaml-language-server: $schema=")
    assert "`theme` is not part of a context profile" in cap.err
    ids = [s["id"] for s in data["system_prompt"]["sections"]]
    assert ids[0] == "custom" and "identity" in ids and "append" in ids


def test_import_pi_reports_bad_settings_with_position(isolated, capsys):
    agent = isolated / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text('{"compaction": {"reserveTokens": 1,}}')
    assert main(["import", "pi", str(agent)]) == 1
    assert f"{agent / 'settings.json'}:1:" in capsys.readouterr().err


def test_import_pi_fails_when_the_result_does_not_validate(isolated, capsys):
    agent = isolated / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text('{"compaction": {"reserveTokens": "lots"}}')
    assert main(["import", "pi", str(agent), "-o", str(isolated / "p.yaml")]) == 1
    assert "compaction.reserve_tokens" in capsys.readouterr().err


def test_import_pi_missing_directories(isolated, capsys):
    assert main(["import", "pi", str(isolated / "missing")]) == 1
    assert main(["import", "pi", str(isolated), "--project", str(isolated / "nope")]) == 1
    assert "nope: not a directory (the project)" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:
        main(["import", "cursor"])
    assert usage.value.code == 2


@pytest.mark.parametrize("tool,files,names,command", [
    ("claude-code", {"p/.claude/commands/fe/comp.md": "Component $0", "h/commands/mine.md": "Mine $ARGUMENTS",
                     "p/CLAUDE.md": "Claude rules\n"}, ["CLAUDE.md"], ("/fe:comp Btn", "Component Btn")),
    ("opencode", {"p/.opencode/command/oc.md": "OC $1 $2", "p/AGENTS.md": "Agents rules\n"},
     ["AGENTS.md", "CLAUDE.md"], ("/oc a b c", "OC a b c")),
    ("gemini", {"p/.gemini/commands/g/x.toml": 'prompt = "G {{args}}"', "p/CTX.md": "Ctx rules\n",
                "p/.gemini/settings.json": '{"context": {"fileName": ["CTX.md", "GEMINI.md"]}}'},
     ["CTX.md", "GEMINI.md"], ("/g:x hi", "G hi")),
])
def test_import_other_tools(isolated, capsys, tool, files, names, command):
    for rel, text in files.items():
        (isolated / rel).parent.mkdir(parents=True, exist_ok=True)
        (isolated / rel).write_text(text)
    project, home = isolated / "p", isolated / "h"
    home.mkdir(exist_ok=True)
    prof = isolated / "prof.yaml"
    assert main(["import", tool, str(home), "--project", str(project), "-o", str(prof)]) == 0
    p = compile_profile(str(prof))
    assert list(p.profile.system_prompt.context_file_names) == names
    loaded = p.load_templates(project)
    assert p.expand(command[0], loaded) == command[1]
    if tool == "claude-code":
        assert p.expand("/mine x y", loaded) == "Mine x y"
    report = isolated / "r.json"
    assert main(["render", str(prof), "--discover", "--cwd", str(project), "--agent-dir", str(home),
                 "--format", "json", "-o", str(report)]) == 0
    found = json.loads(report.read_text())["context"]["context_files"]
    assert [Path(f["path"]).name for f in found] == [names[0]]


def test_a_claude_code_project_import_names_what_it_read_and_the_settings_it_ignored(isolated, capsys, monkeypatch):
    """Issue 34, item 7: `import claude-code --project .` says which settings it left out, and
    its header names the project's .claude, not a ~/.claude it never read."""
    project = isolated / "p"
    (project / ".claude" / "commands").mkdir(parents=True)
    (project / ".claude" / "commands" / "fix.md").write_text("Fix $ARGUMENTS\n")
    (project / ".claude" / "settings.json").write_text('{"model": "opus", "permissions": {"allow": ["Bash"]}}')
    (project / ".claude" / "settings.local.json").write_text('{"env": {"A": "1"}}')
    monkeypatch.chdir(project)
    assert main(["import", "claude-code", "--project", "."]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[1] == "# Imported from Claude Code's project setup (.claude) by `pipeline import claude-code`."
    assert "~/.claude" not in out
    assert err.splitlines() == [
        ".claude/settings.json: info: `model` is not part of a context profile; not imported",
        ".claude/settings.json: info: `permissions` is not part of a context profile; not imported",
        ".claude/settings.local.json: info: `env` is not part of a context profile; not imported",
        "3 notices in 2 files",
    ]


def test_a_claude_code_import_names_the_user_directory_it_read(isolated, capsys, monkeypatch):
    home = isolated / "home" / ".claude"
    (home / "commands").mkdir(parents=True)
    (home / "settings.json").write_text('{"model": "opus"}')
    (isolated / "p").mkdir()
    monkeypatch.chdir(isolated / "p")
    assert main(["import", "claude-code", "--project", "."]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[1] == ("# Imported from Claude Code's project setup (.claude) and user setup (~/.claude) "
                                   "by `pipeline import claude-code`.")
    assert err == f"{home / 'settings.json'}: info: `model` is not part of a context profile; not imported\n"
    (home / "settings.json").write_text('{"model": ')
    assert main(["import", "claude-code"]) == 0  # a broken settings file: said, and nothing was to come from it
    out, err = capsys.readouterr()
    assert out.splitlines()[1] == "# Imported from Claude Code's user setup (~/.claude) by `pipeline import claude-code`."
    assert err.startswith(f"{home / 'settings.json'}:1:11: warning: invalid JSON")
