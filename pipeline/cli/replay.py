"""What a profile change would do across an archive of sessions (no model is called).

  pipeline replay ARCHIVE --profile P [--vs Q] [--window N] [--format text|json]
                  [--workers N] [--progress]

ARCHIVE is a directory of .jsonl sessions (searched recursively), a .tar (.tar.gz...) or a
.zip; members are streamed, so an archive larger than memory works. Each session's
current branch is replayed under P (and Q) with the profile's trigger, strategy and
per-model overrides: how often compaction fires, tokens before and after, the summary
budgets asked for, and the sessions whose context would exceed the window. The work is
spread over all cores (`--workers`); a progress bar goes to stderr when it is a terminal
(or with `--progress`). `--window` defaults to the profile's summarizer.context_window,
else compaction.branch.default_context_window.
Exit status: 0 done, 1 invalid input, 2 usage.

examples:
  pipeline replay ~/.pi/agent/sessions --profile default --vs team.yaml
  pipeline replay sessions.tar.gz --profile lean.yaml --format json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "replay an archive of sessions under a profile (and compare with another)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from pipeline.cli._options import add_profile_flag, positive

    parser.add_argument("archive", metavar="ARCHIVE", help="a directory, .tar or .zip of .jsonl sessions")
    add_profile_flag(parser)
    parser.add_argument("--vs", metavar="Q", help="a second profile to compare with")
    parser.add_argument("--window", metavar="N", type=positive, help="the model's context window")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--workers", metavar="N", type=positive, help="worker processes (default: all cores)")
    parser.add_argument("--progress", action="store_true", help="show the progress bar even when stderr is not a terminal")


class Bar:
    """A one-line progress bar on stderr (``\\r``-redrawn), ended with a newline."""

    def __init__(self, total: int | None, shown: bool) -> None:
        self.total, self.shown, self.last = total, shown, -1

    def __call__(self, done: int) -> None:
        if not self.shown:
            return
        if self.total:
            filled = int(30 * done / self.total)
            line = f"\rreplaying [{'#' * filled}{'.' * (30 - filled)}] {done}/{self.total}"
        else:
            line = f"\rreplaying {done} sessions"
        sys.stderr.write(line)
        sys.stderr.flush()

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _count(archive: Path) -> int | None:
    """How many sessions a directory or zip holds (cheap); a tar stream is not counted ahead."""
    import zipfile

    if archive.is_dir():
        return sum(1 for _ in archive.rglob("*.jsonl"))
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            return sum(1 for n in zf.namelist() if n.endswith(".jsonl"))
    return None


def run(args: argparse.Namespace) -> int:
    import json

    from pipeline import compile_profile
    from pipeline.cli._options import default_window
    from pipeline.cli._output import print_notices
    from pipeline.errors import Location, Problem, SessionError, UsageError
    from pipeline.evaluation.replay import Totals, comparison_table, replay_archive

    archive = Path(args.archive)
    if not archive.exists():
        raise SessionError(Problem("no such directory or archive", Location(str(archive)), code="session.unreadable"))
    names = [args.profile] + ([args.vs] if args.vs else [])
    if len(set(names)) < len(names):
        raise UsageError("--vs names the same profile as --profile")
    profiles = {}
    for name in names:
        compiled = compile_profile(name)
        print_notices(compiled.warnings)
        profiles[name] = compiled.profile
    first = profiles[args.profile]
    window = args.window or default_window(first)
    bar = Bar(_count(archive), args.progress or sys.stderr.isatty())
    totals = {name: Totals() for name in names}
    try:
        for result in replay_archive(archive, profiles, window, workers=args.workers, progress=bar):
            for name, replay in result.items():
                totals[name].add(replay)
    finally:
        bar.close()
    if args.format == "json":
        print(json.dumps({"window": window, "profiles": {
            n: {**t.figures(), "overflowingSessions": t.overflow_names, "unreadableSessions": t.unreadable_names}
            for n, t in totals.items()}}, indent=1))
    else:
        print(f"window {window}")
        print(comparison_table(totals))
    return 0
