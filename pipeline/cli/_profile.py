"""The profile a command works on: a positional ``PROFILE`` and ``--profile P`` name the same thing.

Commands that take the profile as their first positional (``render``, ``run``, ``chat``) also accept it as ``--profile``, the spelling every other command uses, so
``pipeline render --profile builtin:pi-1`` works like ``pipeline render builtin:pi-1``.
Both at once with different values is a usage error, never a silent choice.
With ``repository=True`` a command given neither uses the repository's profile
(:mod:`pipeline.cli._repo_profile`), else ``default``: :func:`resolve_profile` picks it.
"""

from __future__ import annotations

import argparse
from typing import Any, Optional

#: Where a command's profile came from (``None``: not given, the command's default applies).
_GIVEN = "_profile_given_as"


class _ProfileAction(argparse.Action):
    """Stores ``profile``; refuses a second, different one."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: Optional[str] = None) -> None:
        spelled = option_string or "PROFILE"
        earlier = getattr(namespace, _GIVEN, None)
        if earlier is not None and getattr(namespace, "profile") != values:
            parser.error(f"the profile is given twice ({earlier} {namespace.profile!r}, {spelled} {values!r}): give one")
        setattr(namespace, _GIVEN, spelled)
        setattr(namespace, "profile", values)


def add_profile_arguments(parser: argparse.ArgumentParser, help: str = "built-in profile name or YAML path",
                          *, repository: bool = False) -> None:
    """An optional ``PROFILE`` and ``--profile P``, both into ``args.profile`` (default: ``default``;
    with ``repository``, None until :func:`resolve_profile` puts the repository's profile there)."""
    default = "the repository's profile, else default" if repository else "default"
    parser.add_argument("profile", metavar="PROFILE", nargs="?", action=_ProfileAction, default=argparse.SUPPRESS,
                        help=f"{help} (default: {default})")
    parser.add_argument("--profile", metavar="P", dest="profile", action=_ProfileAction,
                        default=None if repository else "default", help="the same as PROFILE")


def resolve_profile(args: argparse.Namespace, start: Optional[str] = None) -> str:
    """``args.profile``, or when none was given the repository's profile seen from ``start``
    (default: the current directory), else ``default``; stored back into ``args.profile``."""
    from pipeline.cli._repo_profile import choose

    args.profile, _ = choose(args.profile, start)
    return str(args.profile)
