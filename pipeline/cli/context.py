"""Show the LLM context a pi session projects to (pi's buildSessionContext + convertToLlm).

The path from the root to the leaf (default: the last entry in the file; `--leaf`
takes an id or a unique id prefix) is projected as pi 0.84.0 does: the latest
compaction becomes a summary message followed by the kept entries, branch summaries
and custom messages become user messages, `!command` runs are rendered. The words
around summaries and command runs come from the profile (`--profile`, default: the
built-in `default`).

--format json prints {"messages", "thinkingLevel", "model", "leafId"}: the messages in
pi's shape (role, content blocks with their types, tool call ids), as JSON.stringify
would write them. Problems found in the file (a torn last line, bad lines...) are
printed to stderr; the context is still shown, as pi would load it. Exit 1 when the
file cannot be read, is not a pi session, or --leaf names no entry.

examples:
  pipeline context chat.jsonl
  pipeline context chat.jsonl --leaf 3f2a --format json
  pipeline context chat.jsonl --profile team.yaml --drop-failed
"""

from __future__ import annotations

import argparse

from pipeline.cli._output import print_notices, tolerant_output

HELP = "show the LLM context of a pi session file"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from pipeline.cli._options import add_profile_flag

    parser.add_argument("session", metavar="SESSION", help="a pi session file (.jsonl)")
    parser.add_argument("--leaf", metavar="ID", help="entry id (or unique prefix) to project from; default: last entry")
    add_profile_flag(parser)
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    parser.add_argument(
        "--drop-failed", action="store_true",
        help="leave out assistant replies that ended in error/aborted, as pi's provider layer does",
    )


def run(args: argparse.Namespace) -> int:
    from pipeline.gcpause import gc_paused

    with gc_paused():  # a short-lived command: the session's objects need no collector passes
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from pipeline import compile_profile
    from pipeline.errors import Location, PipelineError, Problem
    from pipeline import SessionFile

    tolerant_output()
    session = SessionFile.open(args.session)
    leaf = session.resolve_id(args.leaf) if args.leaf else None
    pipeline = compile_profile(args.profile)
    if leaf is None:  # the current leaf
        context = pipeline.project(session, drop_failed=args.drop_failed)
    else:
        context = pipeline.project(session, leaf, drop_failed=args.drop_failed)
    print_notices(session.problems)
    try:
        _print_context(context, args.format, session.leaf_id if leaf is None else leaf)
    except (RecursionError, ValueError):  # deeper than JSON.stringify would go
        message = "a message holds a value nested too deeply to print"
        raise PipelineError(Problem(message, Location(args.session), code="session.too-deep")) from None
    return 0


def _print_context(context, fmt: str, leaf_id) -> None:
    from pipeline.session.render import render_context

    if fmt == "json":
        _print_json(context, leaf_id)
        return
    for line in render_context(context.messages):
        print(line)


def _print_json(context, leaf_id) -> None:
    """``JSON.stringify`` of ``{messages, thinkingLevel, model, leafId}``, written message
    by message: each message's JSON is read, written and let go, so a long session's
    messages are never all held, as objects or as text. Nested in ``[[…]]`` each message
    counts the depth it has inside the whole view. (A line deeper than the reader's
    parser goes is reported and skipped when the file is read, so no message from a file
    comes near ``JSON.stringify``'s limit once output has begun.)"""
    import sys

    from pipeline.js import js_json

    rest = js_json(_json_view(context, leaf_id))
    out = sys.stdout
    out.write('{"messages":[')
    for i, message in enumerate(context.messages):
        if i:
            out.write(",")
        out.write(js_json([[message.peek_raw()]])[2:-2])
    out.write("]" + ("," + rest[1:] if rest != "{}" else "}") + "\n")


def _json_view(context, leaf_id):
    """The view's keys after ``messages``, as ``LlmContext.to_json`` lays them out."""
    view = context.to_json(messages=False)
    view["leafId"] = leaf_id
    return view
