"""The flags several commands share come from one module (pipeline/cli/_options.py)."""

from __future__ import annotations

import argparse

import pytest

from pipeline.cli import _options, build_parser

COMMANDS = ("run", "chat", "compact", "replay", "eval", "context")


def _actions(command: str) -> dict[str, argparse.Action]:
    parser = build_parser(command)
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {flag: action for action in sub.choices[command]._actions for flag in action.option_strings}


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_takes_the_shared_flags_from_the_options_module(command):
    actions = _actions(command)
    assert actions["--profile"].default == "default"
    if "--api-key-env" in actions:
        assert actions["--api-key-env"].help == _options.API_KEY_ENV_HELP
    for flag in ("--keep-recent", "--reserve"):
        if flag in actions:
            assert actions[flag].type is _options.tokens
    for flag in ("--window", "--context-window", "--max-tokens", "--workers", "--generated"):
        if flag in actions:
            assert actions[flag].type in (_options.tokens, _options.count, _options.positive), flag


def test_the_shared_tables_name_the_profile_keys():
    assert set(_options.SUMMARIZER_FLAGS) == {"--llm", "--model", "--base-url", "--api-key-env"}
    assert {key for key, _ in _options.COMPACTION_FLAGS.values()} == {
        "compaction.keep_recent_tokens", "compaction.reserve_tokens"}
    args = argparse.Namespace(llm=None, model="m", base_url=None, api_key_env="MY_KEY")
    assert _options.profile_overrides(args, _options.SUMMARIZER_FLAGS) == (
        {"summarizer.model": "m", "summarizer.api_key_env": "MY_KEY"},
        {"summarizer.model": "--model", "summarizer.api_key_env": "--api-key-env"})


@pytest.mark.parametrize(("kind", "text", "message"), [
    (_options.tokens, "lots", "expected a whole number of tokens, got 'lots'"),
    (_options.tokens, "-1", "must be 0 or more, got -1"),
    (_options.count, "x", "expected a whole number, got 'x'"),
    (_options.positive, "0", "must be 1 or more, got 0"),
])
def test_the_count_types_refuse_with_the_flag_messages(kind, text, message):
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        kind(text)
    assert kind("7") == 7
