"""Inspect pi session files.

  pipeline session tree SESSION    the entry tree: ids, entry types, short previews,
                                   labels in [brackets], the current leaf marked
  pipeline session check SESSION   integrity report: torn last line, lines that are not
                                   JSON, duplicate ids, dangling parents, cycles, old
                                   format versions; exit 1 when the file is damaged
                                   (any error), 0 when clean (warnings allowed)
  pipeline session migrate SRC DEST
                                   write a version-3 copy of SRC (any format version) to
                                   DEST, which can then be appended to and compacted;
                                   SRC is never written; DEST must not exist unless
                                   --force (then it is replaced in one rename)

Problems are printed as `file:line: message (hint)`; a file that cannot be read or is
not a pi session at all exits 1 with the reason.

examples:
  pipeline session tree ~/.pi/agent/sessions/--home-me-proj--/2026-01-01T10-00-00-000Z_0199.jsonl
  pipeline session check chat.jsonl
  pipeline session check chat.jsonl --format json
  pipeline session migrate old-v1.jsonl old-v3.jsonl && pipeline compact old-v3.jsonl
"""

from __future__ import annotations

import argparse

from pipeline.cli._output import print_notices, printable, tolerant_output

HELP = "inspect a pi session file (tree, check) or write a version-3 copy (migrate)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="session_command", metavar="ACTION", required=True)
    tree = sub.add_parser("tree", help="show the entry tree")
    tree.add_argument("session", metavar="SESSION", help="a pi session file (.jsonl)")
    check = sub.add_parser("check", help="report damage; exit 1 when damaged")
    check.add_argument("session", metavar="SESSION", help="a pi session file (.jsonl)")
    check.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    migrate = sub.add_parser("migrate", help="write a version-3 copy of a session file")
    migrate.add_argument("source", metavar="SRC", help="a pi session file (.jsonl), any format version")
    migrate.add_argument("dest", metavar="DEST", help="the copy to write (must not exist)")
    migrate.add_argument("--force", action="store_true", help="replace DEST if it exists")


def run(args: argparse.Namespace) -> int:
    from pipeline.gcpause import gc_paused

    with gc_paused():  # a short-lived command: the session's objects need no collector passes
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    tolerant_output()
    if args.session_command == "tree":
        return _tree(args)
    if args.session_command == "migrate":
        return _migrate(args)
    return _check(args)


def _tree(args: argparse.Namespace) -> int:
    from pipeline import SessionFile
    from pipeline.session.render import render_tree

    session = SessionFile.open(args.session)
    print_notices(session.problems)
    name = f" ({session.name})" if session.name else ""
    print(printable(f"session {session.header.id}{name}, {len(session.entries)} entries"))
    for line in render_tree(session.tree, session.leaf_id):
        print(printable(line))
    return 0


def _check(args: argparse.Namespace) -> int:
    from pipeline.errors import PipelineError
    from pipeline.js import js_json
    from pipeline import SessionFile
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
        from pipeline.cli._report import format_problems, shown_path

        if problems:  # the summary line below is the closing count
            print(format_problems(problems, count=False))
        print(check_summary(shown_path(args.session), len(session.entries), problems, session.leaf_id, session.migrated_from))
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


def _migrate(args: argparse.Namespace) -> int:
    import sys
    from dataclasses import replace

    from pipeline.errors import PipelineError
    from pipeline import SessionFile

    session = SessionFile.open(args.source)
    print_notices(session.problems, skip_codes=frozenset({"session.migrated"}))
    try:
        copy = session.save_as(args.dest, overwrite=args.force)
    except PipelineError as err:
        if err.problems[0].code != "session.exists":
            raise
        raise PipelineError(replace(err.problems[0], hint="--force replaces it")) from None
    version = session.migrated_from
    origin = f"migrated from version {version}" if version is not None else "already version 3"
    print(printable(f"wrote {args.dest}: {len(copy.entries)} entries, leaf {copy.leaf_id} ({origin})"))
    dropped = session.line_count - 1 - len(session.entries)
    if dropped:
        note = f"{dropped} line(s) of {args.source} were not copied (see the problems above)"
        print(printable(note), file=sys.stderr)
    return 0
