"""Write an overlay profile from another agent's setup.

`pipeline import pi [AGENT_DIR] [--project DIR]` reads pi's agent directory (default:
$PI_CODING_AGENT_DIR, else ~/.pi/agent): settings.json (compaction, branchSummary and
retry numbers; prompts paths become template sources), SYSTEM.md (the custom prompt:
the sections it replaces are removed) and APPEND_SYSTEM.md; with --project also the
project's .pi/settings.json and .pi/SYSTEM.md / APPEND_SYSTEM.md, which pi prefers.

`pipeline import claude-code|opencode|gemini [HOME_DIR] [--project DIR]` names the tool's
command folders as template sources in its dialect and its context-file names
(CLAUDE.md, GEMINI.md...). HOME_DIR defaults to ~/.claude, ~/.config/opencode, ~/.gemini.

`pipeline import pi|claude-code|codex|opencode|gemini|qwen-code|kilo|copilot|agents-md
--project DIR`, when DIR holds an export of that tool (its manifest, .pi/, .claude/, .codex/,
.opencode/, .gemini/, .qwen/, .kilo/, .github/ or .agents/context-pipeline-export.json), reads the export back instead (the round trip,
docs/export.md): the prompt (pi: the compiled profile.json; the others: the generated
prompt file), the templates (the command folder in the tool's dialect) and the
compaction keys the tool has natively. What the export reported lost keeps the base
profile's value.

The profile is printed (or written to -o FILE, paths relative to it) after it has been
compiled: an import that would not validate fails with the problems. What was not
imported goes to stderr. With -o, profile.schema.json (which the profile's `$schema`
line names) is written beside FILE unless one is there (`pipeline schema` prints it).

examples:
  pipeline import pi -o agent-profiles/pi.yaml
  pipeline import pi ~/.pi/agent --project . -o profile.yaml
  pipeline import claude-code --project . > claude.yaml
  pipeline export codex team.yaml && pipeline import codex --project . -o back.yaml
  pipeline render agent-profiles/pi.yaml --discover --cwd .
"""

from __future__ import annotations

import argparse
import sys

HELP = "write an overlay profile from a pi, Claude Code, Codex CLI, opencode or Gemini CLI setup (or export)"


_PI_HELP = """Write an overlay profile from pi's setup.

Reads pi's agent directory AGENT_DIR (default: $PI_CODING_AGENT_DIR, else ~/.pi/agent):
settings.json (compaction, branchSummary and retry numbers; prompts paths become
template sources), SYSTEM.md (the custom prompt: the sections it replaces are removed)
and APPEND_SYSTEM.md; with --project also the project's .pi/settings.json and
.pi/SYSTEM.md / APPEND_SYSTEM.md, which pi prefers. The profile is compiled before it
is printed (or written to -o FILE); what was not imported goes to stderr.

When the project holds `pipeline export pi`'s manifest (.pi/context-pipeline-export.json),
the export is read back instead (the round trip): the sections, layout and tool catalog
of .pi/extensions/context-pipeline/profile.json, its trigger and summary texts, the
settings.json compaction, branchSummary and retry keys; .pi/prompts stay the project's
templates. What the export reported lost keeps the base profile's value.

examples:
  pipeline import pi -o agent-profiles/pi.yaml
  pipeline import pi ~/.pi/agent --project . -o profile.yaml
  pipeline export pi team.yaml && pipeline import pi --project . -o back.yaml
"""

_TOOL_HELP = """Write an overlay profile from {tool}'s setup: its command folders become template
sources in its dialect, and its context-file names count. HOME_DIR defaults to {home}.
Settings with no profile counterpart (Claude Code's `model`, `permissions`, ...) are
named on stderr as not imported.

When the project holds `pipeline export {tool}`'s manifest ({dir}/context-pipeline-export.json),
the export is read back instead (the round trip): {back}. What the export reported lost
(see `pipeline export {tool} --dry-run`) keeps the base profile's value.

examples:
  pipeline import {tool} --project . > {tool}.yaml
  pipeline export {tool} team.yaml && pipeline import {tool} --project . -o back.yaml
"""

_CODEX_HELP = """Read back what `pipeline export codex` wrote into the project (--project DIR, default
the current directory; the round trip): .codex/context-pipeline/instructions.md as the
prompt, .codex/config.toml model_auto_compact_token_limit (a tokens trigger, or compaction
off) and compact_prompt (the summary instructions). Codex has no command folders, so
there is nothing else to import; a project without the export's manifest
(.codex/context-pipeline-export.json) is an error. What the export reported lost keeps
the base profile's value.

examples:
  pipeline export codex team.yaml && pipeline import codex -o back.yaml
"""

_QWEN_HELP = """Read back what `pipeline export qwen-code` wrote into the project (--project DIR,
default the current directory; the round trip): .qwen/system.md as the prompt (or the
export's marked block of QWEN.md as one team section), .qwen/commands as gemini-dialect
templates (Qwen Code reads Gemini CLI's TOML commands), .qwen/settings.json
context.autoCompactThreshold as a share-of-window trigger. Only the export is read; a
project without its manifest (.qwen/context-pipeline-export.json) is an error. What the
export reported lost keeps the base profile's value.

examples:
  pipeline export qwen-code team.yaml && pipeline import qwen-code -o back.yaml
"""
_KILO_HELP = """Read back what `pipeline export kilo` wrote into the project (--project DIR, default
the current directory; the round trip): .kilo/context-pipeline/prompt.md as the prompt (or
instructions.md as one team section), .kilo/command as opencode-dialect templates (Kilo CLI
reads opencode's command files), kilo.json compaction.auto/reserved/preserve_recent_tokens/
prune. Only the export is read; a project without its manifest
(.kilo/context-pipeline-export.json) is an error. What the export reported lost keeps the
base profile's value.

examples:
  pipeline export kilo team.yaml && pipeline import kilo -o back.yaml
"""
_COPILOT_HELP = """Read back what `pipeline export copilot` wrote into the project (--project DIR,
default the current directory; the round trip): .github/instructions/context-pipeline.instructions.md
as one team section. Copilot CLI has no commands with arguments and no compaction keys, so
there is nothing else; a project without the export's manifest
(.github/context-pipeline-export.json) is an error.

examples:
  pipeline export copilot team.yaml && pipeline import copilot -o back.yaml
"""
_AGENTS_MD_HELP = """Read back what `pipeline export agents-md` wrote into the project (--project DIR,
default the current directory; the round trip): the export's marked block of AGENTS.md as
one team section (the user's text around it is not the profile's), and the block of each
sub-folder's AGENTS.md the export wrote as a section with that `folder`. A project without the
export's manifest (.agents/context-pipeline-export.json) is an error.

examples:
  pipeline export agents-md team.yaml && pipeline import agents-md -o back.yaml
"""
#: the tools whose import reads only what `pipeline export TOOL` wrote
_EXPORT_ONLY = {"codex": (_CODEX_HELP, "Codex has no command folders to import"),
                "qwen-code": (_QWEN_HELP, "only the export of Qwen Code is read back"),
                "kilo": (_KILO_HELP, "only the export of Kilo CLI is read back"),
                "copilot": (_COPILOT_HELP, "only the export of Copilot CLI is read back"),
                "agents-md": (_AGENTS_MD_HELP, "only the export's block of AGENTS.md is read back")}

_HOMES = {"claude-code": "~/.claude", "opencode": "~/.config/opencode", "gemini": "~/.gemini"}
_BACK = {
    "claude-code": ".claude/agents/context-pipeline.md (without its frontmatter) as the prompt, .claude/commands "
                   "as claude-code templates, settings.json env.DISABLE_AUTO_COMPACT and the PreCompact "
                   "instructions file (.claude/context-pipeline/compact-instructions.md)",
    "opencode": ".opencode/context-pipeline/prompt.md as the prompt (its working-directory marker as ${{cwd}}), "
                ".opencode/command as opencode templates, opencode.json compaction.auto/reserved/"
                "preserve_recent_tokens/prune and agent.compaction.prompt, the plugin's compaction prompt",
    "gemini": ".gemini/system.md as the prompt, .gemini/commands as gemini templates, settings.json "
              "model.compressionThreshold as a share-of-window trigger",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    tools = parser.add_subparsers(dest="tool", metavar="{pi,claude-code,codex,opencode,gemini,qwen-code,kilo,copilot,agents-md}",
                                  required=True, help="whose setup (or export) to read")
    for tool in ("pi", "claude-code", "codex", "opencode", "gemini", "qwen-code", "kilo", "copilot", "agents-md"):
        if tool in _EXPORT_ONLY:
            sub = tools.add_parser(tool, help=f"what `pipeline export {tool}` wrote", description=_EXPORT_ONLY[tool][0],
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
            sub.add_argument("--project", metavar="DIR", help="the project holding the export (default: .)")
            sub.add_argument("-o", "--output", metavar="FILE", help="write the profile to FILE instead of printing it")
            continue
        if tool == "pi":
            sub = tools.add_parser(tool, help="pi's agent directory", description=_PI_HELP,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
            sub.add_argument("dir", nargs="?", metavar="AGENT_DIR",
                             help="pi's agent directory (default: $PI_CODING_AGENT_DIR, else ~/.pi/agent)")
        else:
            sub = tools.add_parser(tool, help=f"{tool}'s command folders",
                                   description=_TOOL_HELP.format(tool=tool, home=_HOMES[tool], back=_BACK[tool],
                                                                 dir="." + {"claude-code": "claude"}.get(tool, tool)),
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
            sub.add_argument("dir", nargs="?", metavar="HOME_DIR", help=f"the tool's own directory (default: {_HOMES[tool]})")
        sub.add_argument("--project", metavar="DIR", help="the project whose settings and prompts count too")
        sub.add_argument("-o", "--output", metavar="FILE", help="write the profile to FILE instead of printing it")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pipeline.agentdir import agent_dir
    from pipeline.cli._report import report_notices
    from pipeline.importers import SCHEMA, check, find_export, import_export, import_pi, import_tool

    out = Path(args.output) if args.output else None
    project = Path(args.project).absolute() if args.project else None
    if args.tool in _EXPORT_ONLY and project is None:
        project = Path.cwd()
    if project is not None and not project.is_dir():
        raise _missing(project, "the project")
    manifest = find_export(args.tool, project)
    if manifest is not None:
        assert project is not None
        imported = import_export(args.tool, project, manifest, out)
    elif args.tool in _EXPORT_ONLY:
        assert project is not None
        from pipeline.errors import Location, Problem, ProfileError
        from pipeline.importers.exported import DIRS

        tool = args.tool
        raise ProfileError(Problem(f"no export of `pipeline export {tool}` here ({_EXPORT_ONLY[tool][1]})",
                                   Location(str(project / DIRS[tool] / "context-pipeline-export.json")),
                                   code="profile.import-settings", hint=f"run `pipeline export {tool}` first, or "
                                   "name the project with --project DIR"))
    elif args.tool == "pi":
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
