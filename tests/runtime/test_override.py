"""Per-turn system-prompt overrides (docs/pi-rules.md#per-run-prompt-overrides), against pi's ``before_agent_start`` runs."""

from __future__ import annotations

import pytest

from pipeline.runtime.override import RunPrompt, run_hooks, start_run

from .replay import load

OVERRIDES = load("overrides.json")
BASE = "<BASE>"  # pi's base prompt, masked in the vectors


def test_no_hook_result_keeps_the_base_prompt():
    assert start_run("base").prompt == "base"
    assert start_run("base", [None, None]).prompt == "base"


def test_each_hook_sees_the_previous_change_and_the_last_one_wins():
    chain = run_hooks("base", ["a", None, "b"])
    assert chain.seen == ("base", "a", "a")
    assert chain.override == "b"


def test_an_empty_string_is_an_override():
    run = start_run("base", ["a", ""])
    assert run.override == "" and run.prompt == ""


def test_turn_boundaries_reset_to_override_or_current_base():
    run = start_run("base", ["o"])
    assert run.at_turn() == "o"
    assert run.at_turn("rebuilt") == "o"
    plain = start_run("base")
    assert plain.at_turn("rebuilt") == "rebuilt"
    assert plain.with_base("rebuilt").prompt == "rebuilt"


def test_the_override_is_cleared_when_the_run_ends():
    run = start_run("base", ["o"]).end()
    assert run == RunPrompt("base") and run.prompt == "base"


@pytest.mark.parametrize("case", OVERRIDES, ids=[c["name"] for c in OVERRIDES])
def test_oracle_override_runs(case):
    """Every agent request of every run carries the run's prompt; every hook saw what pi showed it."""
    hooks = case["hooks"]
    chain = run_hooks(BASE, hooks)
    run = start_run(BASE, hooks)
    expected_seen = [{"handler": i, "systemPrompt": seen} for i, seen in enumerate(chain.seen)]
    assert case["seen"] == expected_seen * case["inputs"]
    agent = [r["systemPrompt"] for r in case["requests"] if r["kind"] == "agent"]
    assert agent and agent == [run.at_turn()] * len(agent)
    assert run.end().prompt == BASE
