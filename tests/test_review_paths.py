"""Review output names files one way (issue 34, item 5): a shipped profile as
`builtin:NAME[:line:col]`, never by its installed path (site-packages differs per machine
and wraps in the HTML); every other file relative to the working directory when inside
it, as `pipeline validate` names them: render, explain, templates, expand, export."""

from __future__ import annotations

import json
import re

from pipeline.cli import main
from pipeline.resources import builtin_profiles

CONFIGS = str(builtin_profiles()["default"].parent)


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_render_json_and_html_name_builtin_sections_by_name(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(capsys, "render", "builtin:default", "--cwd", "/w", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and CONFIGS not in out
    assert doc["profile"]["files"] == ["builtin:default"] and doc["profile"]["origin"] == "builtin:default"
    assert {s["source"]["file"] for s in doc["sections"]} == {"builtin:default"}
    identity = next(s for s in doc["sections"] if s["id"] == "identity")["source"]
    code, page, _ = _run(capsys, "render", "builtin:default", "--cwd", "/w", "--format", "html")
    assert code == 0 and CONFIGS not in page
    assert f"builtin:default:{identity['line']}:{identity['col']}" in page


def test_explain_names_builtin_values_by_name(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "team.yaml").write_text("extends: builtin:default\ncompaction:\n  reserve_tokens: 9000\n")
    code, out, _ = _run(capsys, "explain", "team.yaml", "compaction")
    lines = out.splitlines()
    assert code == 0 and CONFIGS not in out
    assert "team.yaml:3:19: compaction.reserve_tokens = 9000" in lines
    assert all(re.match(r"(team\.yaml|builtin:default):\d+:\d+: |\(default\): ", line) for line in lines), lines
    code, out, _ = _run(capsys, "explain", str(tmp_path / "team.yaml"), "--format", "json")
    doc = json.loads(out)
    assert doc["profile"] == "team.yaml" and doc["files"] == ["team.yaml", "builtin:default"]


def test_template_collisions_and_listing_are_relative_to_the_cwd(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "dup.md").write_text(f"from {folder} $1\n")
    code, out, err = _run(capsys, "templates", "--templates-dir", str(tmp_path / "a"), "--templates-dir", str(tmp_path / "b"))
    assert code == 0 and str(tmp_path) not in out + err
    assert err.splitlines()[0] == 'b/dup.md: warning: name "/dup" collision: a/dup.md wins (this file is ignored)'
    assert out.splitlines()[1].endswith("  a/dup.md")


def test_export_conflicts_are_relative_to_the_cwd(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    (tmp_path / "team.yaml").write_text("extends: builtin:default\n")
    taken = tmp_path / ".pi" / "extensions" / "context-pipeline" / "index.js"
    taken.parent.mkdir(parents=True)
    taken.write_text("// mine\n")
    code, _, err = _run(capsys, "export", "pi", "team.yaml")
    assert code == 1 and str(tmp_path) not in err
    assert ".pi/extensions/context-pipeline/index.js: the file exists and was not written by this export" in err
