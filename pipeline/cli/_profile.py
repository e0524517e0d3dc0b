"""The profile a command works on: a positional ``PROFILE`` and ``--profile P`` name the same thing.

Commands that take the profile as their first positional (``render``, ``run``, ``chat``) also accept it as ``--profile``, the spelling every other command uses, so
``pipeline render --profile builtin:pi-1`` works like ``pipeline render builtin:pi-1``.
Both at once with different values is a usage error, never a silent choice.
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


def add_profile_arguments(parser: argparse.ArgumentParser, help: str = "built-in profile name or YAML path") -> None:
    """An optional ``PROFILE`` and ``--profile P``, both into ``args.profile`` (default: ``default``)."""
    parser.add_argument("profile", metavar="PROFILE", nargs="?", action=_ProfileAction, default=argparse.SUPPRESS,
                        help=f"{help} (default: default)")
    parser.add_argument("--profile", metavar="P", dest="profile", action=_ProfileAction, default="default",
                        help="the same as PROFILE")
