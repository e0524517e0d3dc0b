"""A terminal conversation with the agent loop on a session file (the loop of `pipeline run`).

  pipeline chat [PROFILE] --session FILE [--new] [--llm openai|anthropic] [--model M]
                [--base-url U] [--api-key-env NAME] [--tools read,ls,find,grep] [--cwd DIR]
                [--keep-recent N] [--reserve N] [--compact]

Each line you type is one prompt (templates and `/skill:name args` are expanded); the
answer is shown as it streams (a threshold compaction runs after it), tool calls are shown as they run, and a status line is shown while a
compaction runs (tokens before → after), for each retry (attempt, wait, reason) and for a
summary's warnings. `--keep-recent N`, `--reserve N` override the profile's compaction
values (as in `pipeline compact`); `--compact` compacts when the chat starts. Commands:

  /compact [focus]     compact now, with optional extra focus for the summary
  /tree                show the session's tree (the current leaf is marked)
  /tree ID [summary]   move to entry ID (id or unique prefix); `summary` writes a branch summary
  /templates           list the prompt templates
  /quit                leave (so does end of input)

On a terminal, lines are edited with readline (Ctrl-L clears the screen, Ctrl-R searches
the history), the history is kept across sessions in $XDG_STATE_HOME/context-pipeline/chat_history
(else ~/.local/state/...), Tab completes /commands and template names, and a line ending
in a backslash continues on the next (multi-line input).

Ctrl-C while the model works cancels the current run (the reply is recorded as aborted);
the session stays open. Every entry is appended to FILE as it happens (pi opens it).

Exit status: 0 after /quit or end of input, 1 invalid input, 2 usage.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any, TextIO

from pipeline.cli._profile import add_profile_arguments
from pipeline.cli._agent import add_agent_arguments

COMMANDS = ("/compact", "/tree", "/templates", "/quit", "/exit")
HELP = "talk to the agent in the terminal, on a session file (/compact, /tree, /templates)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_profile_arguments(parser)
    add_agent_arguments(parser)


class Chat:
    """The REPL: reads lines from ``stdin``, writes answers to ``out`` and status to ``status``."""

    def __init__(self, setup: Any, stdin: TextIO, out: TextIO, status: TextIO) -> None:
        self.setup, self.stdin, self.out, self.status = setup, stdin, out, status
        self.cancel = threading.Event()
        self.editor: Any = None  # the line editor on a terminal (pipeline.cli._lineedit)
        self._open_line = False  # answer text streamed, its line not ended yet
        self._streamed = False  # this run's answer was shown as it streamed

    @property
    def conversation(self) -> Any:
        return self.setup.conversation

    def show(self, event: Any) -> None:
        """The listener: tool calls, compactions, retries and failures as status lines."""
        from pipeline.cli._agent import show_status

        if event.kind == "text_delta":
            print(event.text, end="", file=self.out, flush=True)
            self._open_line = self._streamed = True
            return
        if event.kind == "reply" and self._open_line:  # the answer is all there: end its line
            print(file=self.out, flush=True)
            self._open_line = False
        show_status(event, self.status)
        if event.kind == "failure":
            self._status(f"the run failed: {event.error}")

    def _status(self, text: str) -> None:
        print(text, file=self.status, flush=True)

    def loop(self) -> int:
        while True:
            try:
                line = self._read()
            except KeyboardInterrupt:
                print(file=self.status)
                continue
            if line is None or line.strip() in ("/quit", "/exit"):
                return 0
            if line.strip():
                self.handle(line.rstrip("\n"))

    def _read(self) -> str | None:
        if self.stdin.isatty():
            if self.editor is None:
                from pipeline.cli._lineedit import LineEditor

                self.editor = LineEditor(self.words)
            return self.editor.read()
        line = self.stdin.readline()
        return line if line else None

    def words(self) -> list[str]:
        """What Tab completes: the commands and the prompt templates."""
        return [*COMMANDS, *(f"/{t.name}" for t in self.conversation.templates)]

    def close(self) -> None:
        if self.editor is not None:
            self.editor.close()

    def handle(self, line: str) -> None:
        word, _, rest = line.strip().partition(" ")
        commands = {"/compact": self.compact, "/tree": self.tree, "/templates": self.templates}
        if word in commands:
            commands[word](rest.strip())
            return
        self.cancel = threading.Event()
        self._streamed = False
        previous = _on_interrupt(self.cancel.set)
        try:
            result = self.setup.agent.run(line, cancel=self.cancel)
        finally:
            _restore(previous)
        if self._open_line:
            print(file=self.out, flush=True)
            self._open_line = False
        if result.stop_reason == "aborted":
            self._status("(cancelled)")
        elif result.error is None and not self._streamed:  # a client that does not stream text
            print(result.answer, file=self.out, flush=True)

    def compact(self, focus: str) -> None:
        from pipeline.cli._agent import force_compaction

        force_compaction(self.setup, focus or None, self.status)

    def tree(self, rest: str) -> None:
        from pipeline.session.render import render_tree

        session = self.conversation.session
        if not rest:
            for text in render_tree(session.tree, session.leaf_id):
                print(text, file=self.out)
            return
        target, _, mode = rest.partition(" ")
        self.conversation.navigate(session.resolve_id(target), summarize=mode.strip() == "summary")
        self._status(f"now at {session.leaf_id or '(before the first entry)'}")

    def templates(self, rest: str) -> None:
        templates = self.conversation.templates
        if not templates:
            self._status("no prompt templates")
        for template in templates:
            hint = f" {template.argument_hint}" if getattr(template, "argument_hint", None) else ""
            print(f"/{template.name}{hint}  {template.description}".rstrip(), file=self.out)


def _on_interrupt(handler: Any) -> Any:
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, lambda *_: handler())


def _restore(previous: Any) -> None:
    if previous is not None:
        signal.signal(signal.SIGINT, previous)


def run(args: argparse.Namespace) -> int:
    from pipeline.cli._agent import build_agent
    from pipeline.cli._report import report
    from pipeline.errors import PipelineError

    holder: dict[str, Chat] = {}
    setup = build_agent(args, listener=lambda event: holder["chat"].show(event))
    chat = holder["chat"] = Chat(setup, sys.stdin, sys.stdout, sys.stderr)
    try:
        if args.compact:
            chat.compact("")
        while True:
            try:
                return chat.loop()
            except PipelineError as err:  # a bad /tree id, a failed manual compaction: the chat goes on
                report(err.problems, sys.stderr, count=False)
    finally:
        chat.close()
        setup.close()
