"""Print a built-in profile: the file shipped with the package, as written.

NAME is a shipped profile's path under configs/ without .yaml (`default`, `minimal`,
`examples/team`), also written `builtin:NAME`. With --list, the names.

examples:
  pipeline show default
  pipeline show builtin:minimal > my-profile.yaml
  pipeline show --list
"""

from __future__ import annotations

import argparse
import sys

HELP = "print a built-in profile (default, minimal, ...) as shipped"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", metavar="NAME", help="a built-in profile's name")
    parser.add_argument("--list", action="store_true", help="list the built-in profiles' names")


def run(args: argparse.Namespace) -> int:
    from pipeline.errors import Problem, ProfileError, UsageError, did_you_mean
    from pipeline.resources import builtin_profiles

    shipped = builtin_profiles()
    if args.list:
        print("\n".join(shipped))
        return 0
    if not args.name:
        raise UsageError("name a built-in profile (pipeline show --list)")
    name = args.name.removeprefix("builtin:")
    if name not in shipped:
        raise ProfileError(Problem(f"no built-in profile named `{name}`", hint=did_you_mean(name, list(shipped)),
                                   code="profile.unknown-builtin"))
    sys.stdout.write(shipped[name].read_text(encoding="utf-8"))
    return 0
