"""Measure compaction quality without an LLM judge, per strategy.

  pipeline eval [SESSIONS...] [--generated N] [--profile P] [--llm P --model M ...]
                [--window N] [--strategy S ...] [--format text|json|html] [-o FILE]

Each session (a team's own, or one of N generated conversations with planted paths, ids,
numbers and constraints) is compacted on a private copy with each strategy
(summarize, mask_tool_results, hybrid). Reported per strategy: recall of planted facts
after 1, 2 and 5 successive compactions, F1 of the summary's file lists against the tool
calls, summary validity rate, compression, tokens sent per task and the saving against
the uncompacted conversation. Deterministic with the offline summarizer (the default
profile's). `--window` is the model window hybrid decides by (default: the profile's
summarizer.context_window, else compaction.branch.default_context_window). Nothing given
is ever written to; the report goes to stdout or `-o FILE`.
Exit status: 0 done, 1 invalid input, 2 usage, 3 the provider failed.

examples:
  pipeline eval --generated 5
  pipeline eval ~/.pi/agent/sessions/--home-me-proj--/*.jsonl --format html -o eval.html
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "measure compaction quality (recall of planted facts, file-list F1, validity, savings)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from pipeline.cli._options import add_profile_flag, add_summarizer_flags, count

    parser.add_argument("sessions", metavar="SESSIONS", nargs="*", help="pi session files (.jsonl)")
    parser.add_argument("--generated", metavar="N", type=count, default=0, help="also N generated conversations")
    parser.add_argument("--seed", type=int, default=1, help="seed of the generated conversations (default 1)")
    add_profile_flag(parser)
    add_summarizer_flags(parser)
    parser.add_argument("--window", metavar="N", type=count, help="the model's context window (for hybrid)")
    parser.add_argument("--strategy", action="append", choices=("summarize", "mask_tool_results", "hybrid"),
                        help="only this strategy (repeatable; default: all three)")
    parser.add_argument("--format", choices=("text", "json", "html"), default="text")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the report here instead of stdout")


def run(args: argparse.Namespace) -> int:
    from pipeline import compile_profile
    from pipeline.cli._options import SUMMARIZER_FLAGS, default_window, profile_overrides
    from pipeline.cli._output import print_notices
    from pipeline.errors import Location, Problem, SessionError, UsageError
    from pipeline.evaluation.generate import generate
    from pipeline.evaluation.quality import STRATEGIES, Evaluator, summarize_rows
    from pipeline.evaluation.render import html_report, text_table, to_json

    if not args.sessions and not args.generated:
        raise UsageError("give SESSIONS or --generated N")
    pipeline = compile_profile(args.profile, *profile_overrides(args, SUMMARIZER_FLAGS))
    print_notices(pipeline.warnings)
    profile = pipeline.profile
    window = args.window if args.window is not None else default_window(profile)
    client = pipeline.summary_client()
    if profile.summarizer.provider != "offline":
        client.check_ready()
    own = [Path(p) for p in args.sessions]
    for path in own:
        if not path.is_file():
            raise SessionError(Problem("cannot read session file: no such file", Location(str(path)),
                                       code="session.unreadable"))
    conversations = {f"generated-{i}": generate(args.seed + i) for i in range(args.generated)}
    evaluator = Evaluator(pipeline, client, window=window, strategies=args.strategy or STRATEGIES)
    measures = evaluator.run(conversations, own)
    rows = summarize_rows(measures)
    meta = {"profile": args.profile, "summarizer": profile.summarizer.provider, "window": window,
            "sessions": len(own) + len(conversations)}
    out = {"text": lambda: text_table(rows), "json": lambda: to_json(rows, measures, meta),
           "html": lambda: html_report(rows, measures, meta)}[args.format]()
    if args.output:
        Path(args.output).write_text(out + "\n", encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        print(out)
    return 0
