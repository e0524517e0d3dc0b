"""`pipeline export qwen-code` proven on the real Qwen Code 0.24.4 (tests/agents/npm_install.py).

Qwen Code runs headless (`qwen -p MSG`) against the loopback OpenAI chat-completions server with
the recipe `pipeline export qwen-code --verify` runs
(:class:`pipeline.export.verify.agents.QwenCodeRecipe`: OPENAI_BASE_URL/OPENAI_API_KEY/OPENAI_MODEL,
a throwaway HOME whose settings turn its managed-memory side request off), in a project where
the export wrote. No skip: a failed install fails the test with npm's message.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pipeline.compiler import compile_profile
from pipeline.export.static_prompt import summary_instructions
from pipeline.export.verify.agents import RECIPES, Invocation, system_message

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_runs import TEAM as TEAM_PROFILE  # noqa: E402
from cli_runs import assert_native_sections_in, env_fixture, export_replacing, exported, git_project  # noqa: E402
from cli_runs import pipeline_cli, run_cli, static_sections, user_text  # noqa: E402

TEAM = TEAM_PROFILE + "compaction:\n  trigger: {percent_of_window: 30}\n"
RECAP = "---\ndescription: Recap\n---\nRecap these files: $@ (end)\n"
HAND = "# Ours\nRun the tests with make check before committing.\n"


qwen_env = env_fixture("qwen_env", "qwen-code", "Qwen Code 0.24.4")


def _setup(tmp_path: Path, profile_text: str = TEAM) -> tuple[Path, Path, dict]:
    return exported("qwen-code", tmp_path, profile_text, {"recap.md": RECAP}, {"QWEN.md": HAND})


def test_the_team_sections_reach_qwens_system_message(tmp_path, qwen_env):
    profile, project, report = _setup(tmp_path)
    system = system_message(run_cli("qwen-code", tmp_path, qwen_env, project, "Say ok.")[0]) or ""
    assert "house_style" in assert_native_sections_in(system, report, static_sections(profile, project))
    assert "make check before committing" in system  # the user's own QWEN.md lines stay and are sent
    assert report["system_prompt.sections.where"]["how"] == "lost" and "Build from" not in system
    assert system.startswith("You are Qwen Code")  # Qwen Code's own prompt stays first (base: agent)


def test_a_command_reaches_the_model_as_pipeline_expand_gives_it(tmp_path, qwen_env):
    profile, project, report = _setup(tmp_path)
    assert report["templates.recap"]["where"].startswith(".qwen/commands/recap.toml")
    typed = "/recap src/app.py docs/readme.md"
    expanded = pipeline_cli("expand", typed, "--profile", str(profile), cwd=project)
    assert expanded.returncode == 0, expanded.stderr
    body = run_cli("qwen-code", tmp_path, qwen_env, project, typed)[0]
    assert user_text(body, "<system-reminder>") == expanded.stdout.rstrip("\n") == (
        "Recap these files: src/app.py docs/readme.md (end)")


def test_system_md_replaces_qwens_prompt_with_base_profile(tmp_path, qwen_env):
    profile, project, _ = _setup(tmp_path)
    export_replacing("qwen-code", tmp_path, profile, project)
    assert (project / ".qwen/.env").read_text() == "QWEN_SYSTEM_MD=true\n"
    system = system_message(run_cli("qwen-code", tmp_path, qwen_env, project, "Say ok.")[0]) or ""
    written = (project / ".qwen/system.md").read_text().strip()
    assert system.startswith(written)  # the file's text in place of Qwen Code's own prompt
    assert "You are Qwen Code" not in system
    assert "make check before committing" in system  # QWEN.md still follows it


def test_without_the_export_qwen_sends_its_own_prompt_only(tmp_path, qwen_env):
    """The control: the team's sentence and the command exist in Qwen Code only through the export."""
    project = git_project(tmp_path / "project", {})
    sent = json.dumps(run_cli("qwen-code", tmp_path, qwen_env, project, "Say ok.")[0])
    assert "Prefer short functions" not in sent
    run = RECIPES["qwen-code"]().run("qwen", project, tmp_path / "home-x", [Invocation("/recap a b")], 240, qwen_env)
    assert run.returncode != 0 and '"/recap" is not supported' in run.stderr and not run.bodies


#: the first reply reads a file and reports 100,000 prompt tokens (half of an unknown model's 200,000 window)
FULL = [{"toolCalls": [{"name": "read_file", "arguments": {"file_path": "QWEN.md"}}], "usage": {"input": 100_000}},
        "summary", "done"]


@pytest.mark.parametrize("percent,compacts", [(30, True), (90, False)])
def test_qwen_compacts_at_the_exported_threshold(tmp_path, qwen_env, percent, compacts):
    _, project, report = _setup(tmp_path, TEAM.replace("percent_of_window: 30", f"percent_of_window: {percent}"))
    settings = json.loads((project / ".qwen/settings.json").read_text())
    assert settings["context"]["autoCompactThreshold"] == percent / 100
    assert report["compaction.trigger"]["how"] == "native"
    bodies = run_cli("qwen-code", tmp_path, qwen_env, project, "read QWEN.md", FULL)
    summaries = [b for b in bodies if "summarizes a conversation" in (system_message(b) or "")]
    # 100,000 tokens pass 30% of the window (60,000) and not 90% (capped at the window less 33,000: 167,000)
    assert bool(summaries) is compacts, [(system_message(b) or "")[:80] for b in bodies]
    if compacts:  # the exported PreCompact hook adds the profile's instructions to Qwen Code's summary prompt
        instructions = summary_instructions(compile_profile(str(tmp_path / "team.yaml")))
        assert report["summary.instructions.initial"]["how"] == "extension"
        assert "Additional Instructions:\n" + instructions in system_message(summaries[0])
