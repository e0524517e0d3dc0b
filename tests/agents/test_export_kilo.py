"""`pipeline export kilo` proven on the real Kilo CLI 7.7.7 (tests/agents/npm_install.py).

Kilo runs headless (`kilo run MSG`, `kilo run --command NAME ARGS`) against the loopback OpenAI
chat-completions server with the recipe `pipeline export kilo --verify` runs
(:class:`pipeline.export.verify.agents.KiloRecipe`: the provider in the throwaway XDG config
folder's kilo/kilo.json, KILO_DISABLE_MODELS_FETCH), in a project where the export wrote. Each
run takes 15-45 s (startup). No skip: a failed install fails the test with npm's message.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pipeline.compiler import compile_profile
from pipeline.export.static_prompt import summary_instructions
from pipeline.export.verify.agents import Invocation, KiloRecipe, system_message
from pipeline.loopback.chat import LoopbackServer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_runs import TEAM, assert_native_sections_in, env_fixture, export_replacing, exported  # noqa: E402
from cli_runs import pipeline_cli, run_cli, static_sections, user_text  # noqa: E402

RECAP = "---\ndescription: Recap\n---\nRecap all: $@ (end)\n"
FIRST = "First $1 then $2 (end)\n"


kilo_env = env_fixture("kilo_env", "kilo", "Kilo CLI 7.7.7")


def _setup(tmp_path: Path, profile_text: str = TEAM) -> tuple[Path, Path, dict]:
    return exported("kilo", tmp_path, profile_text, {"recap.md": RECAP, "first.md": FIRST},
                    {"AGENTS.md": "Run the tests with make check before committing.\n"})


def test_the_team_sections_and_a_command_reach_kilo(tmp_path, kilo_env):
    profile, project, report = _setup(tmp_path)
    system = system_message(run_cli("kilo", tmp_path, kilo_env, project, "Say ok.")[0]) or ""
    assert "house_style" in assert_native_sections_in(system, report, static_sections(profile, project))
    assert system.startswith("You are Kilo") and "make check before committing" in system
    assert report["system_prompt.sections.where"]["how"] == "lost" and "Build from" not in system
    # one command with arguments, as `pipeline expand` gives it
    assert report["templates.recap"]["where"].startswith(".kilo/command/recap.md")
    expanded = pipeline_cli("expand", "/recap a.py b.py", "--profile", str(profile), cwd=project)
    assert expanded.returncode == 0, expanded.stderr
    body = run_cli("kilo", tmp_path, kilo_env, project, Invocation("/recap a.py b.py", "recap", ("a.py", "b.py")))[0]
    assert user_text(body, "<environment_details>") == expanded.stdout.rstrip("\n") == "Recap all: a.py b.py (end)"


def test_the_highest_positional_takes_the_rest_as_the_report_notes(tmp_path, kilo_env):
    """Kilo's `$2` with three arguments is `b c`: the report's note says so, and what Kilo sends is the
    exported file's expansion in opencode's dialect (pi's would be `b`)."""
    profile, project, report = _setup(tmp_path)
    assert "the highest `$N` also takes every argument after it" in report["templates.first"]["where"]
    assert "Kilo CLI" in report["templates.first"]["where"]
    typed = "/first a b c"
    pi = pipeline_cli("expand", typed, "--profile", str(profile), cwd=project)
    dialect = pipeline_cli("expand", typed, "--dialect", "opencode", "--templates-dir", str(project / ".kilo/command"),
                           cwd=project)
    assert pi.stdout.rstrip("\n") == "First a then b (end)"
    body = run_cli("kilo", tmp_path, kilo_env, project, Invocation(typed, "first", ("a", "b", "c")))[0]
    assert user_text(body, "<environment_details>") == dialect.stdout.rstrip("\n") == "First a then b c (end)"


def test_base_profile_is_kilos_agent_prompt_after_its_opening(tmp_path, kilo_env):
    profile, project, _ = _setup(tmp_path)
    export_replacing("kilo", tmp_path, profile, project)
    config = json.loads((project / "kilo.json").read_text())
    assert config["agent"]["code"]["prompt"] == "{file:./.kilo/context-pipeline/prompt.md}"
    system = system_message(run_cli("kilo", tmp_path, kilo_env, project, "Say ok.")[0]) or ""
    written = (project / ".kilo/context-pipeline/prompt.md").read_text().strip()
    assert written in system and system.startswith("You are Kilo")  # after Kilo's opening, which stays
    assert system.index(written) < 2000


#: a model with a small window: the first reply reads a file and reports 7,950 of its 8,000 tokens (over the
#: 7,900 Kilo can use: the window less the output limit)
SMALL = {"limit": {"context": 8000, "output": 100}}
FULL = [{"toolCalls": [{"name": "read", "arguments": {"filePath": "AGENTS.md"}}], "usage": {"input": 7950}},
        "summary", "done"]


class _KeyedKilo(KiloRecipe):
    """The recipe, with the summarizer's key variable the exported provider names (SUMMARY_KEY)."""

    def configure(self, home: Path, server, project: Path) -> dict[str, str]:
        return {**super().configure(home, server, project), "SUMMARY_KEY": "loopback"}


def _summaries(bodies) -> list[dict]:
    """The summary requests among ``bodies``: Kilo's chunk requests, and its last one, whose prompt
    is the profile's (set by the exported plugin)."""
    marks = ("Summarize conversation chunk", "Here is the conversation so far", "<partial-summary")
    return [b for b in bodies if any(m in json.dumps(b.get("messages", [])[-1:]) for m in marks)]


@pytest.mark.parametrize("enabled", [True, False])
def test_kilo_compacts_as_the_exported_auto_says_with_the_summarizer_model(tmp_path, kilo_env, enabled):
    """The same run proves the summary model: the profile's summarizer (an OpenAI-wire model at its own
    base URL) is Kilo's compaction agent's model, so Kilo's summary request goes to that server with that
    model name, and the session's server gets none."""
    with LoopbackServer(["The summary."]) as summarizer:
        text = TEAM + (f"compaction:\n  enabled: {str(enabled).lower()}\n  keep_recent_tokens: 1234\n"
                       "summarizer: {provider: openai, model: summarize-small, api_key_env: SUMMARY_KEY, "
                       f"base_url: {json.dumps(summarizer.openai_base_url)}}}\n")
        _, project, report = _setup(tmp_path, text)
        config = json.loads((project / "kilo.json").read_text())
        assert config["compaction"]["auto"] is enabled and config["compaction"]["preserve_recent_tokens"] == 1234
        assert report["compaction.enabled"]["how"] == "native"
        assert config["agent"]["compaction"]["model"] == "context-pipeline-summarizer/summarize-small"
        assert config["provider"]["context-pipeline-summarizer"]["options"]["baseURL"] == summarizer.openai_base_url
        assert report["summarizer.model"]["how"] == "native" and report["summarizer"]["how"] == "lost"
        session = run_cli("kilo", tmp_path, kilo_env, project, "read AGENTS.md", FULL, _KeyedKilo(SMALL))
        sent = _summaries(summarizer.bodies)
    # Kilo 7.7.7 summarizes the conversation's chunks with its own instructions, then merges them in
    # one last request: every one carries the profile's summary system prompt (agent.compaction.prompt,
    # after Kilo's opening), the last one the profile's instructions (the plugin's compacting hook)
    assert [b["model"] for b in sent] == (["summarize-small"] * 2 if enabled else []), [
        json.dumps(b)[:300] for b in summarizer.bodies]
    assert not _summaries(session), [json.dumps(b["messages"][-1])[:200] for b in session]
    if enabled:
        compiled = compile_profile(str(tmp_path / "team.yaml"))
        system, prompt = compiled.profile.summary.system_prompt.render(), summary_instructions(compiled)
        assert all(system in (system_message(b) or "") for b in sent)
        assert (system_message(sent[0]) or "").startswith("You are Kilo")
        chunk, last = (user_text(b, "<environment_details>") for b in sent)
        assert chunk.startswith("Summarize conversation chunk") and prompt not in chunk
        assert last.startswith(prompt) and "<partial-summary" in last
