"""Expand a `/name args` input with the prompt templates, as pi does when you type it.

The input is expanded only when it starts with `/` and a known template name (exact,
case-sensitive) followed by whitespace or the end; anything else is printed unchanged,
as pi would send it to the model as typed. Arguments are split like a shell line
without escapes: "double" or 'single' quotes group words, quotes are removed.

Templates come from the directories given with --templates-dir (each read as pi reads a
--prompt-template directory: its *.md files, not recursive, no filtering; a single .md
file works too). Without --templates-dir, pi's default locations are used:
./.pi/prompts/ (relative to the current directory) first, then the user directory
~/.pi/agent/prompts/ ($PI_CODING_AGENT_DIR/prompts when that is set). The first template
of a name wins.

Files that cannot be loaded (unreadable, broken links, invalid YAML frontmatter) are
reported on stderr as `path: reason` warnings; the others are used and the exit code
stays 0.

examples:
  pipeline expand "/review src/app.py 'error handling'"
  pipeline expand "/fix" --templates-dir prompts/
  pipeline expand "/review a.py" --format json
  printf '/review a.py\\nline two' | pipeline expand -

--format json prints {"input", "template" (name or null), "file", "args", "expansion"}.
"""

from __future__ import annotations

import argparse
import sys

from pipeline.cli._output import tolerant_output

HELP = "expand a /name args input with the prompt templates"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", metavar="INPUT", help='the typed input, e.g. "/review a.py"; - reads stdin')
    add_template_options(parser)
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")


def add_template_options(parser: argparse.ArgumentParser) -> None:
    """``--templates-dir`` (shared with ``pipeline templates``)."""
    parser.add_argument(
        "--templates-dir", metavar="DIR", action="append", default=[],
        help="a template directory or .md file (repeatable); default: ./.pi/prompts and ~/.pi/agent/prompts",
    )


def load(args: argparse.Namespace):
    """Load the templates the flags name and print load problems as warnings."""
    from pipeline.templates import load_templates

    loaded = load_templates(args.templates_dir, include_defaults=not args.templates_dir)
    for problem in loaded.problems:
        print(problem, file=sys.stderr)
    return loaded


def run(args: argparse.Namespace) -> int:
    from pipeline.jsutil import js_json
    from pipeline.templates import find_template, match_invocation

    tolerant_output()
    text = sys.stdin.read() if args.input == "-" else args.input
    loaded = load(args)
    call = match_invocation(text)
    found = find_template(call.name, loaded) if call else None
    expansion = found.expand(call.args) if found else text
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
