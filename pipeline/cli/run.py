"""Run one prompt non-interactively (as `pi -p`): the agent loop on a session file.

  pipeline run [PROFILE] --session FILE "input" [--new] [--json]
               [--llm openai|anthropic] [--model M] [--base-url U] [--api-key-env NAME]
               [--tools read,ls,find,grep] [--cwd DIR] [--context-window N] [--max-tokens N]
               [--keep-recent N] [--reserve N] [--compact]

The input goes through the profile's expansion (`/skill:name args`, then prompt
templates), then the model is asked, tools run, results go back, until the model
stops; compaction (threshold after the run, overflow with one retry) and retries of
transient errors follow the profile. Every entry is appended to FILE as it happens, in
pi's format (pi 0.84.0 opens the file); `--new` creates FILE (it must not exist).
The final answer is printed; `--json` prints every event as one JSON line instead.
Without `--json`, stderr shows a line per retry (attempt, wait, reason), each
compaction (tokens before → after) and a summary's warnings, as `pipeline compact` does.
`--keep-recent N` and `--reserve N` override the profile's compaction values (the same
flags and checks as `pipeline compact`); `--compact` compacts before the prompt.

Tools: `read`, `ls`, `find`, `grep` (read-only, over the working directory) by default;
`bash`, `edit`, `write` only when named in `--tools`; `--tools ""` offers none. Their
descriptions and result texts come from the profile. The key is read from the
environment variable `--api-key-env` names (default OPENAI_API_KEY / ANTHROPIC_API_KEY)
and never printed; with `--base-url` and no `--api-key-env`, an unset default variable
means no credentials are sent (a local server that needs no key). An empty (0-byte)
FILE starts a new session, as pi does. Ctrl-C cancels the request: the reply is recorded as aborted.

Exit status: 0 answered, 1 invalid input, 2 usage, 3 the provider failed (unreachable,
an error reply, a malformed answer; the session keeps everything up to the failure).

examples:
  pipeline run --session chat.jsonl --new --base-url http://127.0.0.1:8080/v1 --model qwen "what is this repo?"
  pipeline run builtin:default --session chat.jsonl --llm anthropic --model claude-sonnet-4-5 --json "/fix src/app.py"
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from pipeline.cli._profile import add_profile_arguments
from pipeline.cli._agent import add_agent_arguments

HELP = "run one prompt with the agent loop on a session file (as pi -p)"
EXIT_PROVIDER = 3


class _Intermixed(argparse.ArgumentParser):
    """Positionals on both sides of the flags (``run PROFILE --session F INPUT``), as
    :meth:`argparse.ArgumentParser.parse_intermixed_args` allows."""

    _inside = False

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        if self._inside:
            return super().parse_known_args(args, namespace)
        self._inside = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._inside = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.__class__ = _Intermixed
    add_profile_arguments(parser)
    parser.add_argument("input", metavar="INPUT", help="the prompt (templates and /skill: are expanded)")
    add_agent_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from pipeline.cli._agent import build_agent, force_compaction, print_event, show_status

    def listener(event):
        if args.json:
            print_event(event)
        else:  # retries, compactions and a summary's warnings on stderr; the answer alone on stdout
            show_status(event, tools=False)

    setup = build_agent(args, listener=listener)
    cancel = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: cancel.set()) if _main_thread() else None
    try:
        if args.compact:
            force_compaction(setup)
        result = setup.agent.run(args.input, cancel=cancel)
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
        setup.close()
    if result.error is not None:
        print(f"pipeline run: {setup.session_path}: the run failed: {result.error}", file=sys.stderr)
        return EXIT_PROVIDER
    if not args.json:
        print(result.answer)
    return 0


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


__all__ = ["HELP", "add_arguments", "run"]
