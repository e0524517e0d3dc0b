"""The ``pipeline`` command.

Thin by design: every sub-command lives in its own module in this package
(``pipeline/cli/<command>.py``) and defines

* ``HELP``: one line for the command list,
* ``add_arguments(parser)``: its flags (argparse only; no heavy imports at module level),
* ``run(args) -> int``: parse nothing more, call the library, print, return the exit code.

Modules are discovered by name, so adding a command touches no shared file. Exit codes
(:data:`pipeline.errors.EXIT_CODES`): 0 ok, 1 invalid input (a
:class:`~pipeline.errors.PipelineError`), 2 usage, 3 provider or network failure (a
:class:`~pipeline.errors.ProviderError`). Every problem is printed by
:mod:`pipeline.cli._report`.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from typing import Sequence

from pipeline.errors import EXIT_CODES, EXIT_INVALID, EXIT_OK, EXIT_PROVIDER, EXIT_USAGE, PipelineError

__all__ = ["EXIT_INVALID", "EXIT_OK", "EXIT_PROVIDER", "EXIT_USAGE", "build_parser", "main"]

DESCRIPTION = """\
context-pipeline: an agent's context policy (system prompt, prompt templates,
compaction) as a declarative YAML profile, compiled into a validated Pipeline."""

EPILOG = "exit status: " + ", ".join(f"{code} {what}" for code, what in EXIT_CODES.items())


def _command_modules():
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            yield info.name, importlib.import_module(f"{__name__}.{info.name}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pipeline",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in _command_modules():
        doc = (module.__doc__ or module.HELP).strip()
        cmd = sub.add_parser(
            name.replace("_", "-"),
            help=module.HELP,
            description=doc,
            epilog=getattr(module, "EPILOG", EPILOG),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(cmd)
        cmd.set_defaults(_run=module.run)
    return parser


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse; a flag the sub-command does not know is reported with *its* usage."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        _chosen(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def _chosen(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The innermost (sub-)command parser the arguments selected (``pipeline session check``)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            name = getattr(args, action.dest, None)
            if name in action.choices:
                return _chosen(action.choices[name], args)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from pipeline.cli._report import report_error

    parser = build_parser()
    args = _parse(parser, argv)
    if args.version:
        from importlib.metadata import version

        print(f"context-pipeline {version('context-pipeline')}")
        return EXIT_OK
    if not getattr(args, "_run", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return args._run(args)
    except PipelineError as err:
        report_error(args.command, err)
        return err.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        sys.stderr.close()
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
