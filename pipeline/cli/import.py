"""Write an overlay profile from another agent's setup.

`pipeline import pi [AGENT_DIR] [--project DIR]` reads pi's agent directory (default:
$PI_CODING_AGENT_DIR, else ~/.pi/agent): settings.json (compaction, branchSummary and
retry numbers; prompts paths become template sources), SYSTEM.md (the custom prompt:
the sections it replaces are removed) and APPEND_SYSTEM.md; with --project also the
project's .pi/settings.json and .pi/SYSTEM.md / APPEND_SYSTEM.md, which pi prefers.

`pipeline import claude-code|opencode|gemini [HOME_DIR] [--project DIR]` names the tool's
command folders as template sources in its dialect and its context-file names
(CLAUDE.md, GEMINI.md...). HOME_DIR defaults to ~/.claude, ~/.config/opencode, ~/.gemini.

The profile is printed (or written to -o FILE, paths relative to it) after it has been
compiled: an import that would not validate fails with the problems. What was not
imported goes to stderr. With -o, profile.schema.json (which the profile's `$schema`
line names) is written beside FILE unless one is there (`pipeline schema` prints it).

examples:
  pipeline import pi -o agent-profiles/pi.yaml
  pipeline import pi ~/.pi/agent --project . -o profile.yaml
  pipeline import claude-code --project . > claude.yaml
  pipeline render agent-profiles/pi.yaml --discover --cwd .
"""

from __future__ import annotations

import argparse
import sys

HELP = "write an overlay profile from a pi, Claude Code, opencode or Gemini CLI setup"


_PI_HELP = """Write an overlay profile from pi's setup.

Reads pi's agent directory AGENT_DIR (default: $PI_CODING_AGENT_DIR, else ~/.pi/agent):
settings.json (compaction, branchSummary and retry numbers; prompts paths become
template sources), SYSTEM.md (the custom prompt: the sections it replaces are removed)
and APPEND_SYSTEM.md; with --project also the project's .pi/settings.json and
.pi/SYSTEM.md / APPEND_SYSTEM.md, which pi prefers. The profile is compiled before it
is printed (or written to -o FILE); what was not imported goes to stderr.

examples:
  pipeline import pi -o agent-profiles/pi.yaml
  pipeline import pi ~/.pi/agent --project . -o profile.yaml
"""

_TOOL_HELP = """Write an overlay profile from {tool}'s setup: its command folders become template
sources in its dialect, and its context-file names count. HOME_DIR defaults to {home}.

examples:
  pipeline import {tool} --project . > {tool}.yaml
"""

_HOMES = {"claude-code": "~/.claude", "opencode": "~/.config/opencode", "gemini": "~/.gemini"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    tools = parser.add_subparsers(dest="tool", metavar="{pi,claude-code,opencode,gemini}", required=True,
                                  help="whose setup to read")
    for tool in ("pi", *_HOMES):
        if tool == "pi":
            sub = tools.add_parser(tool, help="pi's agent directory", description=_PI_HELP,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
            sub.add_argument("dir", nargs="?", metavar="AGENT_DIR",
                             help="pi's agent directory (default: $PI_CODING_AGENT_DIR, else ~/.pi/agent)")
        else:
            sub = tools.add_parser(tool, help=f"{tool}'s command folders",
                                   description=_TOOL_HELP.format(tool=tool, home=_HOMES[tool]),
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
            sub.add_argument("dir", nargs="?", metavar="HOME_DIR", help=f"the tool's own directory (default: {_HOMES[tool]})")
        sub.add_argument("--project", metavar="DIR", help="the project whose settings and prompts count too")
        sub.add_argument("-o", "--output", metavar="FILE", help="write the profile to FILE instead of printing it")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pipeline.agentdir import agent_dir
    from pipeline.cli._report import report_notices
    from pipeline.importers import SCHEMA, check, import_pi, import_tool

    out = Path(args.output) if args.output else None
    project = Path(args.project).absolute() if args.project else None
    if project is not None and not project.is_dir():
        raise _missing(project, "the project")
    if args.tool == "pi":
        agent = Path(args.dir).expanduser().absolute() if args.dir else agent_dir()
        if not agent.is_dir():
            raise _missing(agent, "pi's agent directory")
        imported = import_pi(agent, project, out)
    else:
        imported = import_tool(args.tool, Path(args.dir).expanduser().absolute() if args.dir else None, project, out)
    report_notices(imported.notes)
    if out is None:
        check(imported)
        sys.stdout.write(imported.text)
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(imported.text, encoding="utf-8")
    check(imported, out)
    print(f"wrote {out}", file=sys.stderr)
    schema = out.parent / SCHEMA
    if not schema.exists():  # the `$schema` line names it: editors resolve it beside the profile
        from pipeline.model.schema import schema_json

        schema.write_text(schema_json(), encoding="utf-8")
        print(f"wrote {schema}", file=sys.stderr)
    return 0


def _missing(path, what: str):
    from pipeline.errors import Location, Problem, ProfileError

    return ProfileError(Problem(f"not a directory ({what})", Location(str(path)), code="profile.import-settings"))
