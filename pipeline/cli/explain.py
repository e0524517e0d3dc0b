"""Show every effective value of a profile and the file:line:col that set it.

After `extends:` is resolved and the files are merged, each value is printed with
the place it comes from (the profile itself, a file it extends, or `(default)` for
values no file sets). KEY limits the output to one dotted path and what is under it,
e.g. `compaction.reserve_tokens` or `system_prompt.sections.rules` (sections are
named by id).

Text format, one value per line:  FILE:LINE:COL: KEY = VALUE  (VALUE as JSON).
--format json prints {"profile", "files", "values": [{"key", "value", "file", "line",
"col", "default"}]}.

A KEY under a section an overlay removed says so instead of "no key":
  system_prompt.sections.other_tools: removed by team.yaml:30:7 (`remove: true`)
(exit 0; in JSON, "values" is empty and "dropped" says which section, how and where).
A key a `replace: true` section no longer has is reported the same way.

Without PROFILE, the repository's profile is explained (the one `pipeline init` records,
docs/profile.md#the-repositorys-profile); `pipeline explain compaction.reserve_tokens`
then looks up that key in it (an argument that is no file and no built-in name is a KEY).

examples:
  pipeline explain configs/examples/team.yaml
  pipeline explain team.yaml compaction.reserve_tokens
  pipeline explain builtin:default system_prompt.sections.rules --format json
"""

from __future__ import annotations

import argparse
import json

from pipeline.cli._output import tolerant_output
from pipeline.errors import UsageError, did_you_mean

HELP = "show each effective value of a profile and which file set it"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("profile", metavar="PROFILE", nargs="?",
                        help="a profile file, builtin:NAME or a built-in name (default: the repository's profile)")
    parser.add_argument("key", nargs="?", metavar="KEY", help="a dotted key path, e.g. compaction.reserve_tokens")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")


def run(args: argparse.Namespace) -> int:
    tolerant_output()
    _choose_profile(args)
    from pipeline import load_profile
    from pipeline.source.explain import dropped_by, effective_values, known_prefixes, select

    loaded = load_profile(args.profile)
    data = loaded.profile.model_dump(mode="json", by_alias=True)
    values = effective_values(data, loaded.source_map)  # files named as review output names them
    chosen = select(values, args.key)
    if not chosen:
        dropped = dropped_by(loaded.source_map, args.key)
        if dropped is not None:
            return _print_dropped(args, loaded, *dropped)
        hint = did_you_mean(args.key.strip("."), known_prefixes(values))
        raise UsageError(f"no key `{args.key}` in this profile" + (f" ({hint})" if hint else ""))
    if args.format == "json":
        out = {"profile": _shown(loaded.origin), "files": _files(loaded), "values": [v.to_json() for v in chosen]}
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        for value in chosen:
            where = str(value.location) if value.location else "(default)"
            print(f"{where}: {value.key} = {json.dumps(value.value, ensure_ascii=False)}")
    return 0


def _shown(file: str) -> str:
    from pipeline.source.chain import shown_file

    return shown_file(file)


def _files(loaded) -> list[str]:
    return [_shown(f) for f in loaded.files]


def _choose_profile(args: argparse.Namespace) -> None:
    """No PROFILE: the repository's. One argument that names no profile (no such file, not a
    built-in) in a repository with a profile: a KEY of the repository's profile."""
    import os

    from pipeline.cli._repo_profile import find
    from pipeline.resources import builtin_profiles

    if args.profile is not None and args.key is not None:
        return
    repo = find()
    names_profile = args.profile is not None and (
        os.path.exists(args.profile) or args.profile.startswith("builtin:") or args.profile in builtin_profiles())
    if args.profile is not None and (names_profile or repo is None):
        return
    if repo is None:
        raise UsageError("PROFILE is missing, and no repository profile is set here (name one, or run `pipeline init`)")
    args.profile, args.key = repo.path, args.profile


def _print_dropped(args: argparse.Namespace, loaded, section: str, how: str, where) -> int:
    """A key an overlay removed (or a section it replaced without that key): who did it."""
    key = args.key.strip(".")
    directive = "remove: true" if how == "removed" else "replace: true"
    if key == section:
        text = f"{key}: {how} by {where} (`{directive}`)"
    else:
        text = f"{key}: not set: section `{section}` was {how} by {where} (`{directive}`)"
    if args.format == "json":
        by = {"file": where.file, "line": where.line, "col": where.col}
        out = {"profile": _shown(loaded.origin), "files": _files(loaded), "values": [],
               "dropped": {"key": key, "section": section, "how": how, "by": by}}
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        print(text)
    return 0
