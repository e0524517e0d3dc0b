"""The flags several commands share, defined once: ``--profile``, the summarizer's endpoint
(``--llm``, ``--model``, ``--base-url``, ``--api-key-env``) and the compaction budgets
(``--keep-recent``, ``--reserve``) as profile overrides, the count types, and the window a
command assumes when none is given (a helper module, not a command).

A flag that sets a profile value is an override of the profile's last layer, checked as the
profile is, its problems named by the flag (``--reserve: compaction.reserve_tokens: ...``):
:func:`profile_overrides` turns the flags given into ``(overrides, origin)`` for
``compile_profile``. This module imports nothing of the stages: a command's parser is built
without them.
"""

from __future__ import annotations

import argparse
from typing import Any, Mapping

PROFILE_HELP = "built-in profile name or YAML path"
API_KEY_ENV_HELP = "name of the environment variable holding the API key"

#: The flags that tune compaction, shared by `compact`, `run` and `chat`:
#: flag -> (dotted key, argparse attribute).
COMPACTION_FLAGS = {
    "--keep-recent": ("compaction.keep_recent_tokens", "keep_recent"),
    "--reserve": ("compaction.reserve_tokens", "reserve"),
}

#: The summarizer's endpoint, shared by `compact` and `eval`: flag -> (dotted key, argparse attribute).
SUMMARIZER_FLAGS = {
    "--llm": ("summarizer.provider", "llm"),
    "--model": ("summarizer.model", "model"),
    "--base-url": ("summarizer.base_url", "base_url"),
    "--api-key-env": ("summarizer.api_key_env", "api_key_env"),
}


def _whole(text: str, minimum: int, what: str = "a whole number") -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be {minimum} or more, got {value}")
    return value


def tokens(text: str) -> int:
    """A token-count flag: a whole number, 0 or more (argparse turns the error into exit 2)."""
    return _whole(text, 0, "a whole number of tokens")


def count(text: str) -> int:
    """A count flag: a whole number, 0 or more."""
    return _whole(text, 0)


def positive(text: str) -> int:
    """A size flag: a whole number, 1 or more (a window, an output limit, a number of workers)."""
    return _whole(text, 1)


def add_profile_flag(parser: argparse.ArgumentParser) -> None:
    """``--profile P`` (default: ``default``), for the commands that take no ``PROFILE`` positional
    (those that do: :func:`pipeline.cli._profile.add_profile_arguments`)."""
    parser.add_argument("--profile", metavar="P", default="default", help=PROFILE_HELP)


def add_summarizer_flags(parser: argparse.ArgumentParser, llm_help: str = "summarizer provider") -> None:
    """The arguments of :data:`SUMMARIZER_FLAGS`."""
    parser.add_argument("--llm", choices=("offline", "openai", "anthropic"), help=llm_help)
    parser.add_argument("--model", metavar="M", help="model name")
    parser.add_argument("--base-url", metavar="U", help="provider base URL")
    parser.add_argument("--api-key-env", metavar="NAME", help=API_KEY_ENV_HELP)


def add_compaction_flags(parser: argparse.ArgumentParser) -> None:
    """The arguments of :data:`COMPACTION_FLAGS`."""
    parser.add_argument("--keep-recent", metavar="N", type=tokens, help="override compaction.keep_recent_tokens")
    parser.add_argument("--reserve", metavar="N", type=tokens, help="override compaction.reserve_tokens")


def profile_overrides(
    args: argparse.Namespace, flags: Mapping[str, tuple[str, str]],
) -> tuple[dict[str, Any], dict[str, str]]:
    """The ``flags`` given, as dotted profile overrides and the flag that set each."""
    given = {key: (flag, getattr(args, attr)) for flag, (key, attr) in flags.items()
             if getattr(args, attr) is not None}
    return {key: value for key, (_, value) in given.items()}, {key: flag for key, (flag, _) in given.items()}


def default_window(profile: Any) -> int:
    """The context window a command assumes when none is given: ``summarizer.context_window``,
    else ``compaction.branch.default_context_window``."""
    return int(profile.summarizer.context_window or profile.compaction.branch.default_context_window)
