"""Inspect pi session files.

  pipeline session tree SESSION    the entry tree: ids, entry types, short previews,
                                   labels in [brackets], the current leaf marked
  pipeline session check SESSION   integrity report: torn last line, lines that are not
                                   JSON, duplicate ids, dangling parents, cycles, old
                                   format versions; exit 1 when the file is damaged
                                   (any error), 0 when clean (warnings allowed)

Problems are printed as `file:line: message (hint)`; a file that cannot be read or is
not a pi session at all exits 1 with the reason.

examples:
  pipeline session tree ~/.pi/agent/sessions/--home-me-proj--/2026-01-01T10-00-00-000Z_0199.jsonl
  pipeline session check chat.jsonl
  pipeline session check chat.jsonl --format json
"""

from __future__ import annotations

import argparse

from pipeline.cli._output import printable, tolerant_output

HELP = "inspect a pi session file (tree, check)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="session_command", metavar="ACTION", required=True)
    tree = sub.add_parser("tree", help="show the entry tree")
    tree.add_argument("session", metavar="SESSION", help="a pi session file (.jsonl)")
    check = sub.add_parser("check", help="report damage; exit 1 when damaged")
    check.add_argument("session", metavar="SESSION", help="a pi session file (.jsonl)")
    check.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")


def run(args: argparse.Namespace) -> int:
    tolerant_output()
    if args.session_command == "tree":
        return _tree(args)
    return _check(args)


def _tree(args: argparse.Namespace) -> int:
    import sys

    from pipeline.session import SessionFile
    from pipeline.session.render import render_tree

    session = SessionFile.open(args.session)
    for problem in session.problems:
        print(problem, file=sys.stderr)
    name = f" ({session.name})" if session.name else ""
    print(printable(f"session {session.header.id}{name}, {len(session.entries)} entries"))
    for line in render_tree(session.tree, session.leaf_id):
        print(printable(line))
    return 0


def _check(args: argparse.Namespace) -> int:
    from pipeline.errors import PipelineError
    from pipeline.jsutil import js_json
    from pipeline.session import SessionFile
    from pipeline.session.render import check_summary

    try:
        session = SessionFile.open(args.session)
    except PipelineError as err:
        if args.format != "json":
            raise
        print(js_json({"file": args.session, "ok": False, "problems": [p.to_json() for p in err.problems]}))
        return 1
    problems = session.problems
    damaged = any(p.severity == "error" for p in problems)
    if args.format == "json":
        print(js_json(_report(session, problems, damaged)))
    else:
        for problem in problems:
            print(problem)
        print(check_summary(args.session, len(session.entries), problems, session.leaf_id, session.migrated_from))
    return 1 if damaged else 0


def _report(session, problems, damaged: bool) -> dict:
    return {
        "file": str(session.path),
        "ok": not damaged,
        "version": session.header.version,
        "migratedFrom": session.migrated_from,
        "entries": len(session.entries),
        "leafId": session.leaf_id,
        "tornLine": session.torn_line,
        "problems": [p.to_json() for p in problems],
    }
