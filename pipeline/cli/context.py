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
printed to stderr; the context is still shown, as pi would load it.
"""

from __future__ import annotations

import argparse
import sys

HELP = "show the LLM context of a pi session file"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", metavar="SESSION", help="a pi session file (.jsonl)")
    parser.add_argument("--leaf", metavar="ID", help="entry id (or unique prefix) to project from; default: last entry")
    parser.add_argument("--profile", metavar="P", default="default", help="built-in profile name or YAML path")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    parser.add_argument(
        "--drop-failed", action="store_true",
        help="leave out assistant replies that ended in error/aborted, as pi's provider layer does",
    )


def run(args: argparse.Namespace) -> int:
    from pipeline import compile_profile
    from pipeline.jsutil import js_json
    from pipeline.session import LAST, ContextTexts, SessionFile, build_context
    from pipeline.session.render import render_context

    session = SessionFile.open(args.session)
    leaf = session.resolve_id(args.leaf) if args.leaf else LAST
    texts = ContextTexts.from_profile(compile_profile(args.profile).profile)
    context = build_context(session, texts, leaf, drop_failed=args.drop_failed)
    for problem in session.problems:
        print(problem, file=sys.stderr)
    if args.format == "json":
        print(js_json(_json_view(context, session.leaf_id if leaf is LAST else leaf)))
    else:
        for line in render_context(context.messages):
            print(line)
    return 0


def _json_view(context, leaf_id):
    view = context.to_json()
    del view["agentMessages"]
    view["leafId"] = leaf_id
    return view
