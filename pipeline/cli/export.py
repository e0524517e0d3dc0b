"""Write a profile into a coding agent's own files, with a report of what it receives.

`pipeline export pi [PROFILE]` writes pi 1.6's files into the project (default: the
current directory, under .pi/): settings.json keys (compaction and retry numbers, merged
into the file: keys the export does not own are kept), prompts/*.md for the profile's own
templates, and a generated extension, .pi/extensions/context-pipeline/ (index.js and the
compiled profile.json it reads), that makes pi send the system prompt exactly as
`pipeline render PROFILE --discover` renders it for pi's inputs and writes compaction
summaries with the profile's summary prompt, instructions and schema (a summary missing a
required heading is asked for again). pi needs no Python for it.
--user-dir DIR writes the same into DIR laid out as pi's agent directory (~/.pi/agent).
`pipeline export claude-code`, `codex`, `opencode`, `gemini`, `qwen-code`, `kilo` and
`copilot` write those agents' own files (.claude/..., .codex/..., opencode.json and
.opencode/..., .gemini/..., .qwen/..., kilo.json and .kilo/..., .github/instructions/...;
--user-dir: their home folders); docs/export.md says which, and what each cannot receive.
`pipeline export agents-md` writes the team's sections into a marked block of AGENTS.md
(the file many agents read; your text around the block is kept byte for byte); --verify
runs Codex CLI, which reads it.

Every export prints its loss report: each profile setting the target receives and how,
native (a file or key), extension (the generated code) or lost (why).

The export keeps a manifest of the files it wrote (.pi/context-pipeline-export.json): a
re-export updates them and removes those the profile no longer produces. It never
overwrites or deletes a file, or a settings key, it did not write (or that was edited
since) unless --force: such a conflict is an error and nothing is written.

  --dry-run    print what would change; write nothing
  --check      write nothing; exit 1 when the files on disk differ from what the profile
               exports (drift) or when a setting would be lost that --allow-loss does not
               name (a key, or a key above it: --allow-loss summary)
  --verify     then run the agent's CLI installed here (pi, claude, codex, opencode or
               gemini, qwen, kilo, copilot on PATH; codex for agents-md; or --agent-bin
               PATH) headless in
               the project against a loopback capture server (no network, no key, a throwaway home) and compare
               what it sends with the profile: each section and template the report
               carries, the compaction settings it read (or the file and key that carry
               them), and what in this environment shadows the export. Exit 1 on a
               mismatch, 2 when the CLI is not installed, 3 when a run of it failed.
               With --check: verifies the files as they are, writing nothing.

examples:
  pipeline export pi
  pipeline export pi team.yaml --project ~/src/app --dry-run
  pipeline export pi team.yaml --check --allow-loss summary.branch_schema summary.instructions.branch
  pipeline export pi --user-dir ~/.pi/agent --format json
  pipeline export claude-code team.yaml --verify

Without PROFILE the export uses the repository's profile (the `profile` setting
`pipeline init` records in .context-pipeline.toml or pyproject.toml's
[tool.context-pipeline], looked up from --project or the current directory up to the git
root; docs/profile.md#the-repositorys-profile), else `default` (refused where the files
there were exported from another profile: name it); the report's first line names the
profile used. Without --project, the export goes to the folder holding that
setting (the repository's root, also from a sub-folder), else the current directory. With
--check, drift is reported with the command that fixes it.

--format json prints {"target", "agent", "root", "profile", "profile_setting" (the file
that names it, when it is the repository's), "changes": [{path, action, keys?}],
"report": [{key, how, where?, why?}], "drift", "undeclared_losses", "conflicts",
"verify"?: {"binary", "version", "written_for", "runs", "ok", "items": [{key, status (ok,
mismatch, not_observable, failed), detail, diff?}], "shadows": [{path, what}]}}.
"""

from __future__ import annotations

import argparse
import json
import sys

#: the TARGET names (pipeline.export.TARGETS, listed here so --help does not import the export)
TARGET_NAMES = ("pi", "claude-code", "codex", "opencode", "gemini", "qwen-code", "kilo", "copilot", "agents-md")
HELP = ("write a profile into a coding agent's files (pi, claude-code, codex, opencode, gemini, qwen-code, kilo, "
        "copilot, agents-md), with a loss report")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", choices=tuple(TARGET_NAMES),
                        help="the agent to export to (pi 1.6, Claude Code 2.1, Codex CLI 0.169, opencode 1.18, Gemini CLI "
                             "0.61, Qwen Code 0.24, Kilo CLI 7.7, Copilot CLI 1.0; agents-md: a marked block of AGENTS.md, which many agents read)")
    parser.add_argument("profile", nargs="?", default=None, metavar="PROFILE",
                        help="a profile file or built-in name (default: the repository's profile, "
                             "else default; not looked up with --user-dir)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--project", metavar="DIR", help="the project to write into (default: the root of the repository whose profile "
                       "setting is found, else the current directory)")
    where.add_argument("--user-dir", metavar="DIR", help="write into DIR, laid out as the agent's home folder")
    parser.add_argument("--dry-run", action="store_true", help="print what would change, write nothing")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 on drift or on a loss --allow-loss does not name")
    parser.add_argument("--allow-loss", nargs="+", action="extend", default=[], metavar="KEY",
                        help="profile keys whose loss --check accepts (repeatable)")
    parser.add_argument("--force", action="store_true", help="take over files and keys the export did not write")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    parser.add_argument("--verify", action="store_true",
                        help="run the installed agent CLI against a loopback server and compare what it sends "
                             "with the profile (exit 1 on a mismatch, 2 CLI not installed, 3 its run failed)")
    parser.add_argument("--agent-bin", metavar="PATH", help="the agent CLI --verify runs (default: its usual name "
                                                            "on PATH: pi, claude, codex, opencode, gemini, qwen, kilo, "
                                                            "copilot; "
                                                            "codex for agents-md)")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pipeline import compile_profile
    from pipeline.cli._report import report
    from pipeline.errors import Location, PipelineError, Problem
    from pipeline.export import TARGETS, Place, export_lock, prepare

    root = Path(args.user_dir or args.project or ".").expanduser().absolute()
    if not root.is_dir():
        flag = "--user-dir" if args.user_dir else "--project"
        raise PipelineError(Problem("not a directory", Location(str(root)), key=flag,
                                    hint="create it first, or name an existing directory", code="profile.export-place"))
    from pipeline.cli import _repo_profile

    implicit = args.profile is None
    args.profile, repo = (_repo_profile.choose(args.profile, args.project or ".") if not args.user_dir
                          else (args.profile or "default", None))
    if repo is not None and not args.project and not args.user_dir:
        root = repo.setting.parent.absolute()  # from a sub-folder: the set-up repository's root
    _verify_usage(args)
    pipeline = compile_profile(args.profile)
    report(pipeline.warnings)
    target = TARGETS[args.target]
    place = Place(str(root), user=bool(args.user_dir), profile=args.profile,
                  extra={"cwd": str(root) if not args.user_dir else None})
    writes = not (args.dry_run or args.check)
    with export_lock(root, exclusive=writes):  # two exports into one root queue; each plans on a complete one
        if implicit and repo is None:
            _refuse_default_over_another(target, place, root, args)
        export, plan = prepare(target, pipeline, place, force=args.force)
        written = _write(target, root, export, plan, args, repo) if writes and not plan.conflicts else False
        document = _show(target, root, export, plan, args, repo, written)
        code = _apply(export, plan, args, repo)
    if not args.verify:
        return code
    return max(code, _verify(target, pipeline, export, root, args, document))


def _refuse_default_over_another(target, place, root, args) -> None:
    """Without PROFILE and without a repository profile the export is `default`'s: refused where
    the manifest says the files were exported from another profile (it would revert them)."""
    import shlex

    from pipeline.errors import Location, PipelineError, Problem
    from pipeline.export.apply import read_manifest

    rel = target.manifest_path(place)
    recorded = read_manifest(root, rel, target.name).get("profile")
    if not isinstance(recorded, str) or not recorded or recorded in ("default", "builtin:default"):
        return
    where = [flag for flag, value in (("--project", args.project), ("--user-dir", args.user_dir)) if value]
    tail = [*where, (args.project or args.user_dir)] if where else []
    named = shlex.join(["pipeline", "export", target.name, recorded, *tail])
    plain = shlex.join(["pipeline", "export", target.name, "default", *tail])
    raise PipelineError(Problem(
        f"these files were exported from profile `{recorded}`; without PROFILE the export would write `default` "
        "over them", Location(str(root / rel)), key="profile",
        hint=f"name the profile to export: `{named}`, `{plain}` for the built-in one, or record the repository's "
             "profile with `pipeline init`", code="profile.export-other-profile"))


def _write(target, root, export, plan, args, repo) -> bool:
    """Write the plan's changes; when that fails (exit 4, the project left as it was), what it
    would have changed is printed first, never as done."""
    from pipeline.export import write_changes
    from pipeline.export.writer import ExportWriteError

    try:
        write_changes(plan)
    except ExportWriteError:
        _show(target, root, export, plan, args, repo, written=False)
        raise
    return True


def _show(target, root, export, plan, args, repo, written: bool) -> dict:
    """Print what the export changes (``written``: did) and its report (JSON: printed after
    --verify, which adds to it)."""
    from pipeline.export import undeclared_losses

    if args.format != "json":
        _text(target, root, export, plan, args, repo, written)
        return {}
    document = {
        "target": target.name, "agent": target.agent, "root": str(root), "profile": args.profile, "written": written,
        "profile_setting": str(repo.setting) if repo is not None and repo.same(args.profile) else None,
        "changes": [c.to_json() for c in plan.changes], "report": [c.to_json() for c in export.report],
        "drift": [c.path for c in plan.drift],
        "undeclared_losses": [c.key for c in undeclared_losses(export, args.allow_loss)],
        "conflicts": [p.to_json() for p in plan.conflicts],
    }
    if not args.verify:
        _print_json(document)
    return document


def _apply(export, plan, args, repo) -> int:
    """--check's verdict, or the export's (conflicts: a located error and nothing written)."""
    from pipeline.errors import PipelineError
    from pipeline.export import undeclared_losses

    if args.check:
        unallowed = undeclared_losses(export, args.allow_loss)
        for c in unallowed:
            what = (f"would be lost ({c.why})" if c.how == "lost" else
                    f"does not match the agent's tools ({c.where})")
            print(f"pipeline export: {c.key} {what}; name it in --allow-loss to accept", file=sys.stderr)
        if plan.drift:
            _drift_hint(plan, args, repo)
        return 1 if plan.drift or unallowed else 0
    if plan.conflicts:
        print("pipeline export: nothing was written", file=sys.stderr)
        raise PipelineError(plan.conflicts)
    return 0


def _drift_hint(plan, args, repo) -> None:
    """The drifted files and the one command that brings them up to date (run from here)."""
    import shlex

    command = ["pipeline", "export", args.target]
    implicit = repo.same(args.profile) if repo is not None else args.profile == "default"
    if not implicit:  # what the command without PROFILE would export is another profile
        command.append(args.profile)
    for flag, value in (("--project", args.project), ("--user-dir", args.user_dir)):
        if value:
            command += [flag, value]
    if plan.conflicts:
        command.append("--force")
    paths = ", ".join(c.path for c in plan.drift)
    print(f"pipeline export: {len(plan.drift)} file(s) differ from what the profile exports ({paths}); "
          f"run `{shlex.join(command)}` to update them", file=sys.stderr)
    if plan.conflicts:
        print("pipeline export: --force because the files above were edited by hand; their edits are replaced",
              file=sys.stderr)


def _profile_line(args, repo) -> str:
    """The report's first line: the profile exported, and why that one."""
    if repo is not None and repo.same(args.profile):
        return f"profile {args.profile} (the repository's, set in {repo.where})"
    if args.profile in ("default", "builtin:default") and args.user_dir is None and repo is None:
        return f"profile {args.profile} (built-in; no repository profile is set here)"
    return f"profile {args.profile}"


def _verify_usage(args: argparse.Namespace) -> None:
    from pipeline.errors import Location, Problem, UsageError

    if not args.verify:
        if args.agent_bin:
            raise UsageError(Problem("--agent-bin names the CLI --verify runs", Location("--agent-bin"),
                                     key="--agent-bin", hint="add --verify", code="profile.export-verify-usage"))
        return
    for flag, value in (("--user-dir", args.user_dir), ("--dry-run", args.dry_run)):
        if value:
            raise UsageError(Problem(f"--verify runs the agent in a project export; it cannot be combined with {flag}",
                                     Location(flag), key=flag, hint="export into a project (--project DIR), or "
                                     "--check --verify to verify without writing", code="profile.export-verify-usage"))


def _verify(target, pipeline, export, root, args: argparse.Namespace, document: dict) -> int:
    """Run ``pipeline.export.verify`` after the export; its result printed with the export's."""
    from pipeline.export.verify import verify_export

    def progress(line: str) -> None:
        print(f"pipeline export: {line}", file=sys.stderr, flush=True)

    result = verify_export(target.name, target.agent, pipeline, export, root, agent_bin=args.agent_bin,
                           progress=progress)
    if args.format == "json":
        _print_json({**document, "verify": result.to_json()})
    else:
        print(result.text())
    return result.exit_code


def _print_json(document: dict) -> None:
    print(json.dumps(document, indent=2, ensure_ascii=False))


def _text(target, root, export, plan, args, repo, written: bool) -> None:
    verb = "" if written else "would "
    out = [_profile_line(args, repo), f"{target.agent} in {root}:"]
    for change in plan.changes:
        if change.action == "unchanged":
            continue
        keys = f" ({', '.join(change.keys)})" if change.keys else ""
        out.append(f"  {verb}{change.action} {change.path}{keys}")
    if not plan.drift:
        out.append("  (no change: the files on disk are what the profile exports)")
    out.append("what the agent receives:")
    width = max((len(c.key) for c in export.report), default=0)
    for c in export.report:
        detail = c.where if c.how != "lost" else c.why
        out.append(f"  {c.key:<{width}}  {c.how:<9}  {detail}")
    print("\n".join(out))
