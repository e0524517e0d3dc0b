"""Compact a pi session: summarize the older part of the current branch, keep the recent part.

Planning follows pi 0.84.0 exactly (cut points, split turns, the previous compaction's
summary and boundary, file lists); every word sent to the summarizer comes from the
profile (`--profile`, default: the built-in `default`). The summarizer is the profile's
`summarizer` (the default profile: `offline`, which needs no network and no key), or the
one `--llm` names.

  pipeline compact SESSION --plan [--format text|json]
      show the cut, what is summarized and kept, token counts and file lists; calls
      nothing. JSON: {firstKeptEntryId, isSplitTurn, tokensBefore, summarizeIds,
      turnPrefixIds, previousSummary, readFiles, modifiedFiles}, or
      {"plan": null, "reason", "message"} when there is nothing to compact.
  pipeline compact SESSION --print-request [--llm P]
      print, as one JSON list, the exact request body of every call the compaction would
      make (history, then the split turn's prefix) for that provider; sends nothing and
      needs no key (offline: our internal request).
  pipeline compact SESSION [--llm offline|openai|anthropic] [--model M] [--base-url U]
                           [--api-key-env NAME] [--instructions TEXT]
      run it: the compaction entry is appended only after the summary succeeded (a
      failure leaves the file untouched), then the summary is printed.
  pipeline compact SESSION [--strategy summarize|mask_tool_results|hybrid] [--window N]
                           [--for-model PROVIDER/MODEL]
      the profile's compaction.strategy (or this one): mask_tool_results appends one
      entry that shows old tool results as the profile's placeholder; hybrid masks, then
      summarizes when the context is still over the trigger for the window N.
      With --plan, --window N also says whether compaction would fire now.
  pipeline compact SESSION --branch-to ID
      move to entry ID with a summary of the branch being left (pi's /tree): a
      branch_summary entry is appended under the new leaf.

`--keep-recent N`, `--reserve N` and the summarizer flags (`--llm`, `--model`,
`--base-url`, `--api-key-env`) override the profile's values for this run, as its last
layer; the profile with them goes through the same checks as a profile file, and each
problem names the flag (`--reserve: compaction.reserve_tokens: ...`). `--api-key-env`
takes the NAME of a variable: a key given there is refused and never printed (a value that is not a whole number >= 0 is a usage error, exit 2; one the
profile's rules reject, like a reserve whose summary budget rounds to 0 tokens, exit 1).
`--reasoning LEVEL` (off, minimal, low, medium, high, xhigh) replaces the session's
thinking level for the summary calls; reasoning is only asked for when the profile says
the model reasons (summarizer.reasoning), and branch summaries never reason (as in pi).
Progress goes to stderr (each call, corrective retries, and the HTTP clients' retries
with their wait). An HTTP summarizer's key and model are checked before the first call.
Every call is bounded: summarizer.call_deadline_s per call (retries included),
summarizer.compaction_deadline_s per run, summarizer.max_response_bytes per answer and
summarizer.max_chars_per_token for the summary's length. Secrets (the key, a base URL's
password, credential headers a server echoes) are hidden in everything printed.
Exit status: 0 done (or nothing to compact), 1 invalid input (the file is left as it
was), 2 usage, 3 the provider or the network failed (no answer, an HTTP error, an
answer out of bounds, an unusable or off-schema summary; the file is left as it was).

examples:
  pipeline compact ~/.pi/agent/sessions/--home-me-proj--/2026-06-01.jsonl
  pipeline compact chat.jsonl --plan --keep-recent 8000
  pipeline compact chat.jsonl --plan --window 200000 --for-model anthropic/claude-sonnet-4-5
  pipeline compact chat.jsonl --strategy hybrid --window 200000
  pipeline compact chat.jsonl --print-request --llm anthropic --model claude-sonnet-4-5 --reasoning high
  OPENAI_API_KEY=... pipeline compact chat.jsonl --llm openai --model gpt-5-mini
"""

from __future__ import annotations

import argparse
import sys
from contextlib import contextmanager
from typing import Iterator

from pipeline.cli import _options
from pipeline.cli._options import COMPACTION_FLAGS, SUMMARIZER_FLAGS, add_compaction_flags
from pipeline.cli._output import print_notices, tolerant_output
from pipeline.cli._report import report

HELP = "compact a pi session file (plan, preview the requests, or run)"
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", metavar="SESSION", help="a pi session file (.jsonl)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--plan", action="store_true", help="show what would be summarized and kept; call nothing")
    mode.add_argument("--print-request", action="store_true", help="print the request bodies as JSON; send nothing")
    parser.add_argument("--format", choices=("text", "json"), help="output of --plan (default: text)")
    _options.add_profile_flag(parser)
    _options.add_summarizer_flags(parser, llm_help="summarizer provider (default: the profile's)")
    parser.add_argument("--instructions", metavar="TEXT", help="custom instructions for the summary")
    add_compaction_flags(parser)
    parser.add_argument(
        "--reasoning", metavar="LEVEL", choices=THINKING_LEVELS,
        help="thinking level for the summary calls (off|minimal|low|medium|high|xhigh; default: the session's)",
    )
    parser.add_argument("--branch-to", metavar="ID", help="move to entry ID (id or unique prefix) with a branch summary")
    parser.add_argument("--window", metavar="N", type=_options.tokens,
                        help="the model's context window: --plan says whether compaction would fire; hybrid decides by it")
    parser.add_argument("--strategy", choices=("summarize", "mask_tool_results", "hybrid"),
                        help="override compaction.strategy")
    parser.add_argument("--for-model", metavar="PROVIDER/MODEL",
                        help="use the compaction settings of this model (compaction.model_overrides)")
    parser.add_argument(
        "--replace-instructions", action="store_true",
        help="with --branch-to: --instructions replace the profile's branch instructions",
    )


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


@contextmanager
def _retries_shown() -> Iterator[None]:
    """While inside, the HTTP clients' retry notes (logger ``pipeline.llm``) are progress lines."""
    import logging  # here, not at the top: every command's start-up imports this module

    class RetryNotes(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            _progress(f"  {record.getMessage()}")

    logger, handler = logging.getLogger("pipeline.llm"), RetryNotes(logging.INFO)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _ready_client(pipeline):
    """The summary client; an HTTP one has its key and model checked before anything is sent."""
    client = pipeline.summary_client()
    if pipeline.profile.summarizer.provider != "offline":
        client.check_ready()
    return client


def _check_flags(args: argparse.Namespace) -> None:
    """Flag combinations that make no sense, refused before anything is read."""
    from pipeline.errors import UsageError

    if args.branch_to is None and args.replace_instructions:
        raise UsageError("--replace-instructions needs --branch-to")
    if args.format is not None and not args.plan:
        raise UsageError("--format goes with --plan (--print-request always prints JSON)")
    if args.branch_to is not None and (args.plan or args.print_request):
        raise UsageError("--branch-to cannot be combined with --plan or --print-request")
    if args.reasoning is not None and args.branch_to is not None:
        raise UsageError("--reasoning does not apply to --branch-to: branch summaries never reason (as in pi)")
    if args.reasoning is not None and args.plan:
        raise UsageError("--reasoning goes with running the compaction or --print-request (a plan makes no calls)")


#: Flags of `compact` that set a profile value (pipeline.cli._options): flag -> (dotted key, argparse attribute).
PROFILE_FLAGS = {
    **COMPACTION_FLAGS,
    **SUMMARIZER_FLAGS,
    "--strategy": ("compaction.strategy", "strategy"),
}


def profile_overrides(args: argparse.Namespace, flags: dict = PROFILE_FLAGS) -> tuple[dict, dict]:
    """The ``flags`` given, as dotted profile overrides and the flag that set each."""
    return _options.profile_overrides(args, flags)


def _pipeline(args: argparse.Namespace):
    """The profile with this run's flags as its last layer, checked as a profile is
    (problems name the flags); its warnings are shown and the run goes on."""
    from pipeline import compile_profile

    overrides, origin = profile_overrides(args)
    pipeline = compile_profile(args.profile, overrides, origin)
    print_notices(pipeline.warnings)
    return pipeline


def _reasoning_note(args: argparse.Namespace, summarizer) -> None:
    """`--reasoning` with a summarizer that does not reason changes nothing: say so."""
    from pipeline.errors import Problem

    if args.reasoning not in (None, "off") and not summarizer.reasoning:
        report([Problem(
            "ignored: the summarizer does not reason (summarizer.reasoning is false)",
            key=f"--reasoning {args.reasoning}", severity="warning",
            hint="set summarizer.reasoning: true in the profile when the model supports reasoning",
            code="profile.override",
        )])


def run(args: argparse.Namespace) -> int:
    from pipeline.gcpause import gc_paused

    with gc_paused():  # a short-lived command: the session's objects need no collector passes
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from pipeline import SessionFile

    _check_flags(args)
    tolerant_output()  # a summary may hold a lone surrogate (a model's JSON escape): print it, never crash
    pipeline = _pipeline(args)
    _reasoning_note(args, pipeline.profile.summarizer)
    session = SessionFile.open(args.session)
    print_notices(session.problems)
    if args.branch_to is not None:
        return _branch(args, session, pipeline)
    if args.plan:
        return _show_plan(args, session, pipeline)
    if args.print_request:
        return _print_requests(args, session, pipeline)
    return _compact(args, session, pipeline)


# --------------------------------------------------------------------------- --plan


def _show_plan(args, session, pipeline) -> int:
    from pipeline import NothingToCompact
    from pipeline.js import js_json

    model = _model(args)
    settings = pipeline.compaction_settings(model)
    plan = pipeline.plan_compaction(session, model=model)
    trigger = pipeline.would_compact(session, args.window, model=model) if args.window is not None else None
    if args.format == "json":
        data = plan.to_json()
        print(js_json(data if trigger is None else {**data, "trigger": trigger.to_json()}))
        return 0
    if trigger is not None:
        verdict = "fires" if trigger.fires else "does not fire"
        print(f"trigger:          {verdict}: {trigger.tokens} tokens, threshold {trigger.threshold:g}"
              f" ({trigger.rule}, window {trigger.window})")
    if isinstance(plan, NothingToCompact):
        print(nothing_line(plan, settings))
    else:
        for line in _plan_lines(plan, session):
            print(line)
    return 0


def _model(args) -> tuple[str | None, str | None]:
    if not args.for_model:
        return None, None
    provider, _, model = args.for_model.partition("/")
    return provider, model


def nothing_line(plan, settings) -> str:
    """Why nothing is compacted, with the way out when the kept part holds everything."""
    hint = ""
    if plan.reason == "too_small":
        hint = f" (keep_recent_tokens is {settings.keep_recent_tokens}; a smaller --keep-recent N summarizes more)"
    return f"nothing to compact: {plan.message}{hint}"


def _ids(ids: list[str]) -> str:
    if not ids:
        return "-"
    return " ".join(ids) if len(ids) <= 12 else " ".join(ids[:6]) + f" … ({len(ids) - 10} more) … " + " ".join(ids[-4:])


def _plan_lines(plan, session) -> list[str]:
    path = session.path_to()
    lists, settings = plan.file_lists, plan.settings
    lines = [
        f"cut:              keep from entry {plan.first_kept_entry_id}"
        f" (entry {plan.first_kept_index + 1} of {len(path)} on the branch)",
        f"split turn:       {'yes, the turn starts at entry ' + str(plan.turn_start_entry_id) if plan.is_split_turn else 'no'}",
        f"tokens before:    {plan.tokens_before}"
        f" (keep_recent_tokens {settings.keep_recent_tokens}, reserve_tokens {settings.reserve_tokens})",
        f"kept:             {len(path) - plan.first_kept_index} entries from {plan.first_kept_entry_id} to the leaf",
        f"summarize:        {len(plan.summarize)} messages: {_ids(plan.summarize_ids)}",
        f"turn prefix:      {len(plan.turn_prefix)} messages: {_ids(plan.turn_prefix_ids)}",
        "previous summary: "
        + (f"yes ({len(plan.previous_summary)} characters, updated)" if plan.previous_summary else "none"),
        f"read files:       {', '.join(lists.read_files) or '-'}",
        f"modified files:   {', '.join(lists.modified_files) or '-'}",
    ]
    return lines


# --------------------------------------------------------------------------- --print-request


def _print_requests(args, session, pipeline) -> int:
    from pipeline import NothingToCompact
    from pipeline.js import js_json

    plan = pipeline.plan_compaction(session)
    if isinstance(plan, NothingToCompact):
        print(nothing_line(plan, pipeline.profile.compaction), file=sys.stderr)
        print("[]")
        return 0
    requests = pipeline.summary_requests(plan, instructions=args.instructions, thinking_level=args.reasoning)
    print(_redactor(pipeline.profile.summarizer)(js_json(requests)))
    return 0


def _redactor(summarizer):
    """The redaction rule for what this command prints: the keys in the environment, the base URL's user info."""
    import os

    from pipeline.facade import key_variables
    from pipeline.secrets import Redactor, env_secrets, url_secrets

    names = (summarizer.api_key_env, *key_variables())
    return Redactor((*env_secrets(os.environ, names), *url_secrets(summarizer.base_url or "")))


# --------------------------------------------------------------------------- run


def _compact(args, session, pipeline) -> int:
    """Compact through :meth:`Pipeline.compact`: the settings of ``--for-model`` (its
    ``compaction.model_overrides`` entry), their strategy, ``--window`` for hybrid."""
    client = _ready_client(pipeline)
    provider, model = _model(args)
    with _retries_shown():
        done = pipeline.compact(
            session, model=(provider, model), window=args.window or 0, instructions=args.instructions,
            client=client, progress=_progress, thinking_level=args.reasoning,
        )
    if not done.did_anything:
        print(nothing_line(done.nothing, done.settings) if done.nothing else "nothing to mask")
        return 0
    if done.mask_entry is not None:
        _progress(f"appended mask {done.mask_entry.id}: {len(done.mask.placeholders)} tool results masked,"
                  f" about {done.mask.tokens_before:g} -> {done.mask.tokens_after:g} tokens")
    if done.entry is None:
        return 0
    report(done.warnings)
    entry = done.entry
    _progress(
        f"appended compaction {entry.id}: kept from {entry.first_kept_entry_id},"
        f" {entry.tokens_before} tokens before, {len(done.context.messages)} messages in the context now"
    )
    return _print_written(entry.summary, f"compaction entry {entry.id}", args.session)


def _branch(args, session, pipeline) -> int:
    target = session.resolve_id(args.branch_to)
    client = _ready_client(pipeline)
    with _retries_shown():
        moved = pipeline.navigate(
            session, target, client, instructions=args.instructions,
            replace_instructions=args.replace_instructions, progress=_progress,
        )
    if moved.entry is None:
        print(f"nothing to summarize between the leaf and {target}; no entry written")
        return 0
    report(moved.result.warnings if moved.result else ())
    _progress(f"appended branch summary {moved.entry.id} under {moved.entry.parent_id or 'the root'}")
    return _print_written(moved.entry.summary, f"branch summary {moved.entry.id}", args.session)


def _print_written(summary: str, what: str, session: str) -> int:
    """Print the summary of an entry already appended. If standard output fails (a closed
    pipe, a full disk) the entry stays written. A closed pipe (``| head -1``) ends quietly as
    every command does (141; the entry was reported on stderr already); any other failure
    exits 0 with a warning that the entry was appended all the same."""
    import errno

    from pipeline.cli import EXIT_CLOSED_PIPE
    from pipeline.cli._stdout import OutputError, drop_pending_output

    try:
        print(summary)
        sys.stdout.flush()
    except OutputError as err:
        from pipeline.errors import Location, Problem

        drop_pending_output()
        if err.errno == errno.EPIPE:
            return EXIT_CLOSED_PIPE
        print_notices([Problem(f"the {what} WAS appended, but its summary could not be printed: {err.reason}",
                               Location(session), severity="warning", code="session.summary-not-printed")])
    return 0
