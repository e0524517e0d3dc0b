"""Print the system prompt a profile renders, as text, JSON or one HTML page.

With no flags, renders the repository's profile (the one `pipeline init` records; see
docs/profile.md#the-repositorys-profile), else the built-in `default`, for the current directory with
the profile's default tools (their snippets and guidelines come from the profile's tool
catalog, `system_prompt.tools`). No network, no keys, nothing read but the profile.

Inputs come from flags, from the file system like an agent would find them
(--discover: AGENTS.md/CLAUDE.md files, skills, .pi/SYSTEM.md and APPEND_SYSTEM.md),
or from one scenario file (--scenario; see docs/rendering.md), which cannot be mixed
with input flags.

examples:
  pipeline render
  pipeline render team.yaml --tools read,bash,grep --guideline "Run make check first."
  pipeline render --discover --cwd ~/src/project
  pipeline render team.yaml --scenario review.yaml --format html --output prompt.html

--format text prints the prompt followed by one newline; --format json gives the exact
prompt, every section (id, kind, text, estimated tokens, the file:line that defines it)
and the inputs.
"""

from __future__ import annotations

import argparse

from pipeline.cli._profile import add_profile_arguments
from pipeline.errors import UsageError

HELP = "print the system prompt a profile renders (text, JSON or HTML)"

#: Flags that describe inputs (they cannot be combined with --scenario).
INPUT_FLAGS = (
    "cwd", "tools", "tool_snippet", "tool_guideline", "guideline", "custom_prompt", "append",
    "context_file", "skills_dir", "discover", "agent_dir", "untrusted", "no_tool_catalog",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_profile_arguments(parser, repository=True)
    inputs = parser.add_argument_group("inputs")
    inputs.add_argument("--cwd", metavar="DIR", help="working directory, shown as given (default: the current one; must exist with --discover)")
    inputs.add_argument("--tools", metavar="A,B,C", help='selected tools in order ("" = none; default: the profile\'s)')
    inputs.add_argument("--tool-snippet", action="append", default=[], metavar="NAME=TEXT", help="a tool's one-line snippet (repeatable)")
    inputs.add_argument("--tool-guideline", action="append", default=[], metavar="NAME=TEXT", help="a tool's guideline (repeatable; replaces the catalog's for that tool)")
    inputs.add_argument("--guideline", action="append", default=[], metavar="TEXT", help="a guideline from the caller (repeatable)")
    inputs.add_argument("--custom-prompt", metavar="FILE", help="custom prompt file (replaces the default sections)")
    inputs.add_argument("--append", action="append", default=[], metavar="FILE", help="append prompt file (repeatable)")
    inputs.add_argument("--context-file", action="append", default=[], metavar="PATH", help="a context file such as AGENTS.md (repeatable)")
    inputs.add_argument("--skills-dir", action="append", default=[], metavar="DIR", help="load skills from DIR (repeatable)")
    inputs.add_argument("--no-tool-catalog", action="store_true", help="ignore the profile's tool catalog")
    found = parser.add_argument_group("discovery")
    found.add_argument("--discover", action="store_true", help="gather context files, skills and SYSTEM.md/APPEND_SYSTEM.md like an agent")
    found.add_argument("--agent-dir", metavar="DIR", help="the agent's own directory (default: $PI_CODING_AGENT_DIR, else ~/.pi/agent)")
    found.add_argument("--untrusted", action="store_true", help="skip the project's .pi/ prompts and skills, as for an untrusted project")
    parser.add_argument("--scenario", metavar="FILE", help="take every input from a scenario file")
    parser.add_argument("--format", choices=("text", "json", "html"), default="text", help="output format (default: text)")
    parser.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of standard output")


def run(args: argparse.Namespace) -> int:
    from pipeline.cli._profile import resolve_profile
    from pipeline.report.output import write_output

    resolve_profile(args)

    if args.scenario is None and args.format == "text":
        write_output(_text(args), args.output)
        return 0
    from pipeline.report.prompt import build_prompt_report

    pipeline, context, notes = _inputs(args)
    _warn(pipeline.warnings, notes)
    report = build_prompt_report(pipeline, context, label=args.scenario or "")
    write_output(_format(report, args.format), args.output)
    return 0


def _text(args: argparse.Namespace) -> str:
    """The prompt alone, rendered from the profile's render plan: for a built-in profile
    the cache's plan (no profile model is loaded), else the compiled profile's."""
    from pipeline import profile_cache
    from pipeline.prompt import render_system_prompt
    from pipeline.prompt.inputs import gather

    found = profile_cache.cached_plan(args.profile)
    if found is None:
        from pipeline import compile_profile

        pipeline = compile_profile(args.profile)
        found = profile_cache.Plans(pipeline.render_plan, pipeline.warnings, pipeline.run_plan)
    plan, warnings = found.render, found.warnings
    gathered = gather(plan, request_from_args(args))
    _warn(warnings, gathered.diagnostics)
    return render_system_prompt(plan, gathered.context) + "\n"


def _warn(warnings, notes) -> None:
    """The profile's warnings, then one for each skill discovery skipped."""
    from pipeline.cli._report import report
    from pipeline.errors import Location, Problem

    skipped = [Problem(note.message, Location(note.path), severity="warning", code="profile.skipped-skill") for note in notes]
    report([*warnings, *skipped])


def _inputs(args: argparse.Namespace):
    if args.scenario is not None:
        _no_input_flags(args)
        from pipeline.scenario import load_scenario, scenario_pipeline

        scenario = load_scenario(args.scenario)
        pipeline = scenario_pipeline(args.profile, scenario, args.scenario)
        return pipeline, scenario.context_for(pipeline), ()
    from pipeline import compile_profile

    pipeline = compile_profile(args.profile)
    gathered = pipeline.gather(request_from_args(args))
    return pipeline, gathered.context, gathered.diagnostics


def _no_input_flags(args: argparse.Namespace) -> None:
    given = [name for name in INPUT_FLAGS if getattr(args, name) not in (None, False, [])]
    if given:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        raise UsageError(f"--scenario takes every input from the file; drop {flags}")


def request_from_args(args: argparse.Namespace):
    """The flags as a :class:`~pipeline.prompt.inputs.RenderRequest` (usage errors for bad pairs)."""
    from pipeline.prompt.inputs import RenderRequest

    return RenderRequest(
        cwd=args.cwd,
        tools=None if args.tools is None else tuple(t.strip() for t in args.tools.split(",") if t.strip()),
        tool_snippets=tuple(_pair(v, "--tool-snippet") for v in args.tool_snippet),
        tool_guidelines=tuple(_pair(v, "--tool-guideline") for v in args.tool_guideline),
        guidelines=tuple(args.guideline),
        custom_prompt_file=args.custom_prompt,
        append_files=tuple(args.append),
        context_file_paths=tuple(args.context_file),
        skill_paths=tuple(args.skills_dir),
        discover=args.discover,
        agent_dir=args.agent_dir,
        trusted=not args.untrusted,
        catalog=not args.no_tool_catalog,
    )


def _pair(value: str, flag: str) -> tuple[str, str]:
    name, sep, text = value.partition("=")
    if not sep or not name.strip():
        raise UsageError(f"{flag} expects NAME=TEXT, got {value!r}")
    return name.strip(), text


def _format(report, fmt: str) -> str:
    from pipeline.report.prompt import prompt_html, prompt_json

    if fmt == "json":
        return prompt_json(report) + "\n"
    if fmt == "html":
        return prompt_html(report)
    return report.prompt + "\n"
