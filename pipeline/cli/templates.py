"""List the prompt templates pi would offer, with what their bodies expect.

For each template: its name (typed as /name), description (frontmatter `description`,
else the first body line cut to 60 characters), the `argument-hint` from its
frontmatter, the arity found by reading the body (`<1>` a position used as $1, `[2]` one
with a default or only in a slice, `[rest...]`/`[args...]` when $@, $ARGUMENTS or
${@:N} take the remaining arguments) and the file it comes from. Templates are listed in
the order they are loaded; a name shadowed by an earlier file is reported as a warning.

Where templates come from: the profile's `templates.sources` (--profile; default: the
built-in `default`, whose sources are `[project, global]`), in that order, the first
template of a name winning. `project` is <cwd>/.pi/prompts/ (skipped with --untrusted,
as pi skips it for an untrusted project); `global` is ~/.pi/agent/prompts/
($PI_CODING_AGENT_DIR/prompts when that is set, DIR/prompts with --agent-dir DIR); other entries are paths relative to
the profile file. --templates-dir (repeatable) replaces the profile's sources: a
directory is read without filtering, not recursive; a single .md file works too;
--dialect claude-code|opencode|gemini|codex reads them in that tool's format.

Everything noticed goes to stderr, one per line, as
`path[:line:col]: warning: message (hint)`: first load problems (unreadable files,
broken links, invalid frontmatter, shadowed names), then the suspicious spots found in
template bodies (`${1}`, `$ARGS`, `$0`, an unclosed `${@:2` ...); remarks that are
probably fine (`$99`, `${@:0}`, `${@:-2}`) are labelled `info:` instead of `warning:`.
The exit code is 0 (1 for a profile that does not compile); with --strict it is 1 when
anything is noticed but an info (a broken template file, a missing path, a `${1}`), so
CI fails on broken templates.

`pipeline templates export --to claude-code|opencode|gemini|codex [-o DIR]` writes each
template in that tool's format instead (default DIR: the tool's project directory,
.claude/commands, .opencode/commands, .gemini/commands or .codex/prompts). A template
using what the tool cannot express (slices, defaults, $@ in Gemini...) is not written:
the reasons are printed, and the exit code is 1. Notes on differences that show only
with unusual input (quoted arguments) are printed for the templates written.

examples:
  pipeline templates
  pipeline templates export --to claude-code -o .claude/commands
  pipeline templates --profile team.yaml --untrusted
  pipeline templates --templates-dir prompts/ --templates-dir ~/shared/review.md
  pipeline templates --format json
  pipeline templates --profile team.yaml --strict      # in CI

--format json prints a list of {"name", "description", "argumentHint", "arity": {"hint",
"required", "optional", "variadicFrom"}, "file", "source", "dialect", "findings"}.
"""

from __future__ import annotations

import argparse
import sys

from pipeline.cli._output import printable, tolerant_output
from pipeline.cli._report import report, shown_path, shown_relative
from pipeline.cli.expand import add_template_options, load

HELP = "list the prompt templates with their descriptions, argument hints and arity"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", choices=("export",), metavar="export",
                        help="optional: `pipeline templates export --to DIALECT [-o DIR]` writes the templates in "
                             "another tool's format instead of listing them")
    add_template_options(parser)
    parser.add_argument("--agent-dir", metavar="DIR",
                        help="the agent's own directory, whose prompts/ is the `global` source "
                             "(default: $PI_CODING_AGENT_DIR, else ~/.pi/agent)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 when a template file is broken or anything else is noticed but an info")
    parser.add_argument("--to", choices=("claude-code", "opencode", "gemini", "codex"), help="export: the target dialect")
    parser.add_argument("-o", "--output-dir", metavar="DIR", help="export: where to write (default: the tool's directory)")


def run(args: argparse.Namespace) -> int:
    from pipeline.js import js_json

    tolerant_output()
    if args.action == "export" or args.to or args.output_dir:
        return _export(args)
    loaded = load(args)
    noticed = [*loaded.problems, *(problem for template in loaded for problem in template.problems())]
    report(noticed)
    if args.format == "json":
        print(js_json([_json_item(t) for t in loaded]))
    else:
        for line in _table(list(loaded)):
            print(line)
    return 1 if args.strict and any(p.severity != "info" for p in noticed) else 0


def _json_item(t) -> dict:
    arity = t.analyze().arity
    return {
        "name": t.name,
        "description": t.description,
        "argumentHint": t.argument_hint,
        "arity": {
            "hint": arity.hint(),
            "required": list(arity.required),
            "optional": list(arity.optional),
            "variadicFrom": arity.variadic_from,
        },
        "file": _shown(t.path) if t.path else None,
        "source": t.source,
        "dialect": t.dialect,
        "findings": [shown_relative(p).to_json() for p in t.problems()],
    }


def _export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pipeline.errors import UsageError
    from pipeline.templates.dialects.export import DEFAULT_DIRS, export_template, write_exported

    if args.action != "export" or not args.to:
        raise UsageError("--to and -o belong to `pipeline templates export --to DIALECT`")
    items = [export_template(t, args.to) for t in load(args)]
    directory = Path(args.output_dir or DEFAULT_DIRS[args.to])
    written = iter(write_exported(items, directory))
    for item in items:
        if item.text is None:
            print(f"/{item.name}: not written: " + "; ".join(item.reasons), file=sys.stderr)
            continue
        print(f"/{item.name}: wrote {printable(_shown(next(written)))}")
        for note in item.notes:
            print(f"/{item.name}: note: {note}", file=sys.stderr)
    return 1 if any(i.text is None for i in items) else 0


_HEAD = ("NAME", "DESCRIPTION", "ARGUMENT HINT", "ARITY", "FILE")


def _table(templates) -> list[str]:
    if not templates:
        return ["(no templates found)"]
    rows = [_HEAD] + [
        ("/" + t.name, _cell(t.description), _cell(t.hint_text or "-"),
         t.analyze().arity.hint() or "-", printable(_shown(t.path) if t.path else "-"))
        for t in templates
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_HEAD) - 1)]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1] for r in rows]


def _shown(path) -> str:
    """A file as every command names it: relative to the working directory when inside it."""
    from pathlib import Path

    return shown_path(str(Path(path).absolute()))


def _cell(text: str) -> str:
    return printable(" ".join(text.split())) or "-"
