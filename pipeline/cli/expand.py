"""Expand a `/name args` input with the prompt templates, as pi does when you type it.

The input is expanded only when it starts with `/` and a known template name (exact,
case-sensitive) followed by whitespace or the end; anything else is printed unchanged,
as pi would send it to the model as typed. Arguments are split like a shell line
without escapes: "double" or 'single' quotes group words, quotes are removed.

Templates come from the profile's `templates.sources` (--profile; default: the
built-in `default`, whose sources are `[project, global]`), in that order: the first
template of a name wins. `project` is <cwd>/.pi/prompts/ (the profile's
`templates.project_dir`), skipped with --untrusted as pi skips it for an untrusted
project; `global` is ~/.pi/agent/prompts/ ($PI_CODING_AGENT_DIR/prompts when that is
set; the profile's `templates.global_dir`); other entries are paths relative to the
profile file. --templates-dir (repeatable) replaces the profile's sources entirely:
each is read as pi reads a --prompt-template directory (its *.md files, not
recursive, no filtering; a single .md file works too).

Files that cannot be loaded (unreadable, broken links, invalid YAML frontmatter) are
reported on stderr as `path[:line:col]: warning: message (hint)`; the others are used
and the exit code stays 0. So are a `/name` that names no template (the input is
printed as typed) and a call with fewer arguments than the template reads (the missing
ones expand to nothing). A profile that does not compile is an error (exit 1).

examples:
  pipeline expand "/review src/app.py 'error handling'"
  pipeline expand "/fix" --templates-dir prompts/
  pipeline expand "/review a.py" --profile team.yaml --untrusted
  pipeline expand "/review a.py" --format json
  printf '/review a.py\\nline two' | pipeline expand -

--format json prints {"input", "template" (name or null), "file", "args", "expansion"}.
"""

from __future__ import annotations

import argparse
import sys

from pipeline.cli._output import tolerant_output
from pipeline.cli._report import report

HELP = "expand a /name args input with the prompt templates"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", metavar="INPUT", help='the typed input, e.g. "/review a.py"; - reads stdin')
    add_template_options(parser)
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")


def add_template_options(parser: argparse.ArgumentParser) -> None:
    """``--profile``, ``--templates-dir``, ``--untrusted`` (shared with ``pipeline templates``)."""
    parser.add_argument(
        "--profile", metavar="P", default=None,
        help="profile whose templates.sources are read: a YAML path or built-in name (default: default)",
    )
    parser.add_argument(
        "--templates-dir", metavar="DIR", action="append", default=[],
        help="a template directory or .md file (repeatable); replaces the profile's sources",
    )
    parser.add_argument(
        "--dialect", choices=("pi", "claude-code", "opencode", "gemini", "codex"), default="pi",
        help="the format of the --templates-dir files (default: pi); see docs/templates.md#dialects",
    )
    parser.add_argument(
        "--untrusted", action="store_true",
        help="skip the profile's `project` source, as pi does for an untrusted project",
    )


def load(args: argparse.Namespace):
    """Load the templates the flags name (their load problems in ``loaded.problems``)."""
    return _load(args)


def _load(args: argparse.Namespace):
    if args.templates_dir and args.profile is None:  # no profile needed: skip compiling one
        return _load_dirs(args)
    from pipeline import compile_profile

    pipeline = compile_profile(args.profile or "default")  # a wrong --profile is an error either way
    if args.templates_dir:
        return _load_dirs(args)
    if args.dialect != "pi":
        from pipeline.errors import UsageError

        raise UsageError("--dialect applies to --templates-dir; a profile names dialects in templates.sources")
    return pipeline.load_templates(trusted=not args.untrusted, agent=getattr(args, "agent_dir", None))


def _splitting(args: argparse.Namespace) -> str:
    """How the profile splits arguments (``templates.argument_splitting``); pi 0.84.0's without one."""
    if args.profile is None:
        return "pi-0.84"
    from pipeline import compile_profile

    return compile_profile(args.profile).profile.templates.argument_splitting


def _load_dirs(args: argparse.Namespace):
    from pipeline.templates.discovery import TemplateSource, explicit_sources, load_sources, load_templates

    if args.dialect == "pi":
        return load_templates(args.templates_dir, include_defaults=False)
    return load_sources([TemplateSource(s.path, "path", dialect=args.dialect) for s in explicit_sources(args.templates_dir)])


def call_notices(call, found, loaded) -> list:
    """Warnings about the call itself: an unknown ``/name``, too few arguments."""
    from pipeline.errors import Location, Problem, did_you_mean

    if call is None:
        return []
    if found is None:
        hint = did_you_mean(call.name, [t.name for t in loaded]) or "the input is printed as typed"
        return [Problem(f"no template named `/{call.name}`", key=f"/{call.name}", hint=hint,
                        severity="warning", code="template.unknown")]
    required = found.analyze().arity.required
    given = len(call.args)
    if not required or max(required) <= given:
        return []
    where = Location(str(found.path)) if found.path else None
    placeholder = found.placeholder(max(required)) if hasattr(found, "placeholder") else f"${max(required)}"
    hint = getattr(found, "missing_argument", "a missing argument expands to nothing")
    return [Problem(f"`/{found.name}` reads argument {placeholder} but was given {given}",
                    where, key=f"/{found.name}", hint=hint,
                    severity="warning", code="template.missing-argument")]


def _stdin() -> str:
    """Standard input, read as bytes up to its limit and decoded strictly (a located
    one-line error for too much input or bytes that are not UTF-8)."""
    from pipeline import files

    return files.read_stream(sys.stdin.buffer, "stdin", "<stdin>")


def run(args: argparse.Namespace) -> int:
    from pipeline.js import js_json
    from pipeline.templates.invoke import find_template, match_invocation

    tolerant_output()
    text = _stdin() if args.input == "-" else args.input
    loaded = load(args)
    call = match_invocation(text, _splitting(args))
    found = find_template(call.name, loaded) if call else None
    expansion = found.expand(call.args) if found else text
    report([*loaded.problems, *call_notices(call, found, loaded)])
    if args.format == "json":
        print(js_json({
            "input": text,
            "template": found.name if found else None,
            "file": str(found.path) if found and found.path else None,
            "args": call.args if found else [],
            "expansion": expansion,
        }))
    else:
        print(expansion)
    return 0
