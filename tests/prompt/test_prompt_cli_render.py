"""``pipeline render``: the no-flag default, every input flag, discovery, scenarios, formats, errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from prompt_fstree import build_tree

from pipeline.cli import main
from pipeline import compile_profile
from pipeline.prompt import render_system_prompt
from pipeline.prompt.inputs import RenderRequest, gather

ROOT = Path(__file__).resolve().parent.parent.parent
SCENARIOS = ROOT / "tests" / "scenarios"


def render_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["render", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def sections(capsys, *argv: str) -> dict[str, dict]:
    code, out, _ = render_cli(capsys, *argv, "--format", "json")
    assert code == 0
    return {s["id"]: s for s in json.loads(out)["sections"]}


def test_no_flags_prints_default_prompt_for_cwd_without_network_or_keys(tmp_path: Path) -> None:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "LANG": "C"}  # no keys, no proxies
    done = subprocess.run([sys.executable, "-m", "pipeline", "render"], cwd=tmp_path, env=env, capture_output=True)
    assert done.returncode == 0, done.stderr
    default = compile_profile("default")
    expected = render_system_prompt(default.profile, gather(default.profile, RenderRequest(cwd=str(tmp_path))).context)
    assert done.stdout.decode("utf-8") == expected + "\n"
    assert done.stdout.decode().rstrip("\n").endswith(str(tmp_path))
    assert done.stderr == b""


def test_default_tools_get_catalog_snippets(capsys) -> None:
    profile = compile_profile("default").profile
    found = sections(capsys, "--cwd", "/w")
    for name in profile.system_prompt.default_tools:
        assert f"- {name}: {profile.system_prompt.tools[name].snippet.raw}" in found["tools"]["text"]


def test_input_flags(capsys, tmp_path: Path) -> None:
    build_tree(tmp_path, {"files": {
        "append.md": "APPENDED TEXT",
        "repo/AGENTS.md": "Use tabs.\n",
        "skills/lint/SKILL.md": "---\nname: lint\ndescription: Lint <things>\n---\n",
    }})
    found = sections(
        capsys, "--cwd", "C:\\work", "--tools", "read,deploy,mytool", "--tool-snippet", "deploy=Ship it",
        "--tool-guideline", "deploy=Only from main.", "--guideline", "Be nice.", "--append", str(tmp_path / "append.md"),
        "--context-file", str(tmp_path / "repo/AGENTS.md"), "--skills-dir", str(tmp_path / "skills"),
    )
    assert "- deploy: Ship it" in found["tools"]["text"] and "mytool" not in found["tools"]["text"]
    assert "- Only from main.\n- Be nice." in found["rules"]["text"]
    assert found["append"]["text"] == "APPENDED TEXT"
    assert f'path="{tmp_path}/repo/AGENTS.md">\nUse tabs.\n\n' in found["project_context"]["text"]
    assert "<description>Lint &lt;things&gt;</description>" in found["skills"]["text"]
    assert found["cwd"]["text"].endswith("C:/work")


def test_custom_prompt_file_replaces_default_sections(capsys, tmp_path: Path) -> None:
    (tmp_path / "system.md").write_text("Only this.", encoding="utf-8")
    code, out, _ = render_cli(capsys, "--cwd", "/w", "--custom-prompt", str(tmp_path / "system.md"))
    assert code == 0
    assert out.startswith("Only this.\n") and "Available tools" not in out


def test_empty_tools_flag_selects_none(capsys) -> None:
    found = sections(capsys, "--cwd", "/w", "--tools", "")
    assert found["tools"]["items"] == 0 and found["tools"]["text"].endswith("(none)")


def test_discover_reads_like_an_agent(capsys, tmp_path: Path) -> None:
    build_tree(tmp_path, {"dirs": ["proj/.git"], "files": {
        "agent/AGENTS.md": "global\n",
        "proj/CLAUDE.md": "project\n",
        "proj/.pi/SYSTEM.md": "Project system prompt.",
        "proj/.pi/APPEND_SYSTEM.md": "Project append.",
        "proj/.pi/skills/pdf/SKILL.md": "---\nname: pdf\ndescription: PDFs\n---\n",
    }})
    found = sections(capsys, "--discover", "--cwd", str(tmp_path / "proj"), "--agent-dir", str(tmp_path / "agent"))
    assert list(found) == ["custom", "append", "project_context", "skills", "cwd"]
    assert found["custom"]["text"] == "Project system prompt."
    assert found["project_context"]["items"] == 2 and found["skills"]["items"] == 1
    untrusted = sections(capsys, "--discover", "--untrusted", "--cwd", str(tmp_path / "proj"), "--agent-dir", str(tmp_path / "agent"))
    assert "custom" not in untrusted and "skills" not in untrusted


def test_json_lists_sections_with_tokens_and_source_lines(capsys) -> None:
    code, out, _ = render_cli(capsys, "--cwd", "/w", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["prompt"] == "".join(s["separator"] + s["text"] for s in doc["sections"])
    lines = (ROOT / "configs" / "default.yaml").read_text(encoding="utf-8").splitlines()
    for s in doc["sections"]:
        assert s["tokens"] == -(-len(s["text"].encode("utf-16-le")) // 2 // doc["chars_per_token"])
        assert s["source"]["file"] == "builtin:default"  # by name, never by a machine's path
        assert lines[s["source"]["line"] - 1].strip() == f"- id: {s['id']}"


def test_scenario_file_and_html_output(capsys, tmp_path: Path) -> None:
    out_file = tmp_path / "p.html"
    code, _, _ = render_cli(capsys, "--scenario", str(SCENARIOS / "skills-with-read.yaml"), "--format", "html", "-o", str(out_file))
    page = out_file.read_text(encoding="utf-8")
    assert code == 0 and page.startswith("<!doctype html>")
    assert "Extract text &amp;amp; tables from &amp;lt;PDF&amp;gt;" in page  # the prompt's own escapes, escaped for HTML
    assert page.count('class="prompt-section"') == len(sections(capsys, "--scenario", str(SCENARIOS / "skills-with-read.yaml")))


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["--scenario", "X.yaml", "--tools", "read"], 2, "--scenario takes every input from the file; drop --tools"),
        (["--tool-snippet", "nameless"], 2, "--tool-snippet expects NAME=TEXT"),
        (["--custom-prompt", "/nonexistent/system.md"], 1, "/nonexistent/system.md: cannot read custom prompt"),
        (["--skills-dir", "/nonexistent/skills"], 1, "/nonexistent/skills: skills path does not exist"),
        (["no-such-profile.yaml"], 1, "no such profile file"),
    ],
)
def test_errors_are_messages_not_tracebacks(capsys, argv: list[str], code: int, message: str) -> None:
    got, out, err = render_cli(capsys, *argv)
    assert (got, out) == (code, "")
    assert message in err and "Traceback" not in err


def test_bad_scenario_key_is_located(capsys, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("cwd: /w\ntools: [read]\ncustom_promt: hi\n", encoding="utf-8")
    code, _, err = render_cli(capsys, "--scenario", str(bad))
    assert code == 1
    assert f"{bad}:3:1: custom_promt: unknown key (did you mean `custom_prompt`?)" in err


def test_overlay_mistakes_point_at_the_scenario(capsys, tmp_path: Path) -> None:
    bad = tmp_path / "overlay.yaml"
    bad.write_text("cwd: /w\noverlay:\n  compaction: {reserve_tokenz: 5}\n", encoding="utf-8")
    code, out, err = render_cli(capsys, "--scenario", str(bad))
    assert (code, out) == (1, "")
    assert f"{bad}:3:" in err and ": overlay.compaction.reserve_tokenz:" in err and "reserve_tokens" in err


@pytest.mark.parametrize("flag", ["--custom-prompt", "--append", "--context-file"])
def test_a_binary_input_file_is_refused(capsys, tmp_path: Path, flag: str) -> None:
    blob = tmp_path / "logo.png"
    blob.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    code, out, err = render_cli(capsys, flag, str(blob))
    assert (code, out) == (1, "")
    assert err.count("\n") == 1 and f"{blob}: cannot use " in err and "binary file" in err


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_discover_needs_a_real_working_directory(capsys, tmp_path: Path, kind: str) -> None:
    cwd = tmp_path / "project"
    if kind == "file":
        cwd.write_text("not a directory\n", encoding="utf-8")
    code, out, err = render_cli(capsys, "--discover", "--cwd", str(cwd), "--agent-dir", str(tmp_path / "agent"))
    assert (code, out) == (1, "")
    assert err.startswith(f"{cwd}: cannot discover inputs:") and err.count("\n") == 1


def test_discover_shows_the_working_directory_absolute(capsys, tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path)
    code, out, _ = render_cli(capsys, "--discover", "--cwd", "project", "--agent-dir", str(tmp_path / "agent"))
    assert code == 0 and out.endswith(f"{tmp_path / 'project'}\n")


def test_a_scenario_that_is_not_utf8_is_one_clear_line(capsys, tmp_path: Path) -> None:
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes("cwd: /w\ndescription: caf\u00e9\n".encode("latin-1"))
    code, out, err = render_cli(capsys, "--scenario", str(bad))
    assert (code, out) == (1, "")
    located = f"{bad}:2:17: not UTF-8 text: invalid byte 0xe9 at byte offset 24 (save the file as UTF-8)"
    assert err.splitlines()[0] == located and "Traceback" not in err  # then the source line and a caret


def test_overlay_sections_are_sourced_in_the_scenario_file(capsys) -> None:
    scenario = SCENARIOS / "team-overlay.yaml"
    code, out, _ = render_cli(capsys, "--scenario", str(scenario), "--format", "json")
    doc = json.loads(out)
    team = {s["id"]: s for s in doc["sections"]}["team_policy"]
    line = scenario.read_text(encoding="utf-8").splitlines().index("      - id: team_policy") + 1
    shown = os.path.relpath(scenario)  # relative to the working directory, as validate names files
    assert code == 0 and team["source"]["file"] == shown and team["source"]["line"] == line
    assert doc["profile"]["files"][0] == shown and not any("pipeline-overlay-" in f for f in doc["profile"]["files"])


def test_overlay_section_mistakes_point_at_the_section_in_the_scenario(capsys, tmp_path: Path) -> None:
    bad = tmp_path / "overlay.yaml"
    bad.write_text("cwd: /w\noverlay:\n  system_prompt:\n    sections:\n      - id: extra\n        kind: text\n"
                   "        txt: hi\n", encoding="utf-8")
    code, out, err = render_cli(capsys, "--scenario", str(bad))
    assert (code, out) == (1, "")
    assert err.startswith(f"{bad}:7:9: overlay.system_prompt.sections.extra.txt: unknown key")


def test_scenario_type_and_missing_key_errors_speak_like_profile_errors(capsys, tmp_path: Path) -> None:
    bad = tmp_path / "types.yaml"
    bad.write_text("cwd: 5\ncontext_files:\n  - path: a\n", encoding="utf-8")
    code, _, err = render_cli(capsys, "--scenario", str(bad))
    assert code == 1
    assert "cwd: expected text, got the number 5" in err
    assert f"{bad}:3:5: context_files.0.content: missing required key" in err


def test_discover_reads_the_agent_dir_from_pi_coding_agent_dir(capsys, tmp_path: Path, monkeypatch) -> None:
    agent, project = tmp_path / "agent", tmp_path / "project"
    agent.mkdir()
    project.mkdir()
    (agent / "AGENTS.md").write_text("FROM THE AGENT DIR", encoding="utf-8")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    code, out, _ = render_cli(capsys, "--discover", "--cwd", str(project))
    assert code == 0
    assert "FROM THE AGENT DIR" in out


def test_the_profile_can_be_given_as_an_option_too(capsys) -> None:
    """`--profile P` is `PROFILE`, the spelling of the commands that take a session file first."""
    code, by_option, _ = render_cli(capsys, "--profile", "builtin:pi-1")
    assert code == 0
    assert render_cli(capsys, "builtin:pi-1")[1] == by_option
    assert by_option != render_cli(capsys)[1]  # not the default profile's prompt
    assert render_cli(capsys, "minimal", "--profile", "minimal")[1] == render_cli(capsys, "minimal")[1]


def test_two_different_profiles_are_refused(capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["render", "minimal", "--profile", "default"])
    assert stop.value.code == 2
    assert "the profile is given twice (PROFILE 'minimal', --profile 'default')" in capsys.readouterr().err
