"""Compare two profiles by what they render: prompt diffs, token deltas, changed settings.

OLD and NEW are profile files, built-in names (`default`, `builtin:default`) or git
references `REV:path` (read with `git show`; a relative `extends:` is read from the same
revision). For each --scenario (default: the inputs `pipeline render` uses with no flags,
for the current directory) both profiles render the prompt; the output shows a unified
diff of the two prompts, the estimated tokens per section and the settings that differ
(flattened key paths of the merged profiles).

Exit status, like diff(1): 0 when nothing differs (no setting and no rendered prompt),
1 when something does, 2 on usage errors and invalid profiles or scenarios.

With --patch it prints instead the section patch a model that holds OLD's prompt would
be sent to have NEW's (changed and added sections, then removed ones), framed in NEW's
words (`system_prompt.patch`); exit 0 when nothing would be sent, 1 otherwise.

Without NEW, OLD is compared with the repository's profile (the one `pipeline init`
records, docs/profile.md#the-repositorys-profile): `pipeline diff main:agent-profiles/team.yaml`
shows what your branch changes.

examples:
  pipeline diff builtin:pi-1 my-pi-overlay.yaml --patch
  pipeline diff HEAD~1:configs/default.yaml configs/default.yaml
  pipeline diff default team.yaml --scenario tests/scenarios/review.yaml --format markdown
"""

from __future__ import annotations

import argparse

from pipeline.errors import PipelineError, UsageError

HELP = "compare the prompts and settings of two profiles (files, built-ins or REV:path)"

EXIT_SAME, EXIT_DIFFERENT, EXIT_TROUBLE = 0, 1, 2
#: diff(1)'s exit table is in the description above, replacing the common one
EPILOG = None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", metavar="OLD", help="profile file, built-in name or REV:path")
    parser.add_argument("new", metavar="NEW", nargs="?",
                        help="profile file, built-in name or REV:path (default: the repository's profile)")
    parser.add_argument("--scenario", action="append", default=[], metavar="FILE", help="render this scenario (repeatable)")
    parser.add_argument("--format", choices=("text", "json", "markdown"), default="text", help="output format (default: text)")
    parser.add_argument("--context", type=int, default=3, metavar="N", help="lines of context in prompt diffs (default: 3)")
    parser.add_argument(
        "--patch", action="store_true",
        help="print the section patch a model holding OLD's prompt would be sent for NEW's (text or json)",
    )
    parser.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of standard output")


def run(args: argparse.Namespace) -> int:
    if args.new is None:
        args.new = _repository_profile()
    if args.context < 0:
        raise UsageError("--context must be 0 or more")
    if args.patch:
        return _run_patch(args)
    try:
        diff = _compare(args)
    except UsageError:
        raise
    except PipelineError as err:  # exit 1 means "different" here, so invalid input is trouble (2)
        from pipeline.cli._report import report

        report(err.problems)
        return EXIT_TROUBLE
    from pipeline.report.output import write_output

    write_output(_format(diff, args.format), args.output)
    return EXIT_SAME if diff.identical else EXIT_DIFFERENT


def _run_patch(args: argparse.Namespace) -> int:
    from pipeline.report.output import write_output
    from pipeline.report.patch import patch_json, patch_text, section_patches

    if args.format == "markdown":
        raise UsageError("--patch prints text or json, not markdown")
    import tempfile
    from pathlib import Path

    try:
        with tempfile.TemporaryDirectory(prefix="pipeline-diff-") as tmp:
            old, new = (_profile_path(spec, Path(tmp) / side) for spec, side in ((args.old, "old"), (args.new, "new")))
            patches = section_patches(_patch_inputs(old, new, args.scenario))
    except UsageError:
        raise
    except PipelineError as err:
        from pipeline.cli._report import report

        report(err.problems)
        return EXIT_TROUBLE
    write_output(patch_json(patches) + "\n" if args.format == "json" else patch_text(patches), args.output)
    return EXIT_DIFFERENT if any(p.patch for p in patches) else EXIT_SAME


def _patch_inputs(old: str, new: str, scenario_files: list[str]):
    """Per scenario: both pipelines and the contexts they render."""
    from pipeline import compile_profile
    from pipeline.scenario import load_scenario, scenario_pipeline

    if not scenario_files:
        pipes = [compile_profile(old), compile_profile(new)]
        yield ("default inputs", pipes[0], pipes[0].gather().context, pipes[1], pipes[1].gather().context)
    for path in scenario_files:
        scenario = load_scenario(path)
        a, b = (scenario_pipeline(ref, scenario, path) for ref in (old, new))
        yield (path, a, scenario.context_for(a), b, scenario.context_for(b))


def _compare(args: argparse.Namespace):
    import tempfile
    from pathlib import Path

    from pipeline.report.diff import diff_profiles

    with tempfile.TemporaryDirectory(prefix="pipeline-diff-") as tmp:
        old = _profile_path(args.old, Path(tmp) / "old")
        new = _profile_path(args.new, Path(tmp) / "new")
        try:
            renders, profiles = _renders(old, new, args.scenario)
        except UsageError:
            raise
        except PipelineError as err:  # problems in REV:path files name the revision, not the temp copy
            raise PipelineError([_relabel(p, args, Path(tmp)) for p in err.problems]) from None
        return diff_profiles(args.old, args.new, profiles[0], profiles[1], renders, args.context)


def _repository_profile() -> str:
    """NEW when it is not given: the repository's profile, the one its commands use."""
    from pipeline.cli._repo_profile import find

    repo = find()
    if repo is None:
        raise UsageError("NEW is missing, and no repository profile is set here to compare OLD with "
                         "(name NEW, or run `pipeline init`)")
    return repo.path


def _profile_path(spec: str, workdir) -> str:
    from pipeline.report.revisions import is_revision_ref, materialize

    if is_revision_ref(spec):
        return str(materialize(spec, workdir))
    if spec.endswith(":") and ":" not in spec[:-1]:
        raise UsageError(f"{spec!r}: a git reference needs a path after the colon (REV:path)")
    return spec


def _relabel(problem, args: argparse.Namespace, tmp):
    from pipeline.report.revisions import revision_problem

    for spec, side in ((args.old, "old"), (args.new, "new")):
        problem = revision_problem(problem, tmp / side, spec.partition(":")[0])
    return problem


def _renders(old: str, new: str, scenario_files: list[str]):
    from pipeline import compile_profile
    from pipeline.report.prompt import build_prompt_report
    from pipeline.scenario import load_scenario, scenario_pipeline

    bases = (compile_profile(old), compile_profile(new))
    renders = []
    if not scenario_files:
        reports = [build_prompt_report(p, p.gather().context) for p in bases]
        renders.append(("default inputs", *reports))
    for path in scenario_files:
        scenario = load_scenario(path)
        pipes = [scenario_pipeline(ref, scenario, path) for ref in (old, new)]
        renders.append((path, *[build_prompt_report(p, scenario.context_for(p), path) for p in pipes]))
    return renders, (bases[0].profile, bases[1].profile)


def _format(diff, fmt: str) -> str:
    from pipeline.report.diff import diff_json, diff_markdown, diff_text

    if fmt == "json":
        return diff_json(diff) + "\n"
    if fmt == "markdown":
        return diff_markdown(diff)
    return diff_text(diff)
