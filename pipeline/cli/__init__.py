"""The ``pipeline`` command.

Thin by design: every sub-command lives in its own module in this package
(``pipeline/cli/<command>.py``) and defines

* ``HELP``: one line for the command list,
* ``add_arguments(parser)``: its flags (argparse only; no heavy imports at module level),
* ``run(args) -> int``: parse nothing more, call the library, print, return the exit code.

Modules are discovered by name, so adding a command touches no shared file. Exit codes:
0 ok, 1 invalid input (a :class:`~pipeline.errors.PipelineError`), 2 usage.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from typing import Sequence

from pipeline.errors import PipelineError, UsageError

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2

DESCRIPTION = """\
context-pipeline: an agent's context policy (system prompt, prompt templates,
compaction) as a declarative YAML profile, compiled into a validated Pipeline."""


def _command_modules():
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            yield info.name, importlib.import_module(f"{__name__}.{info.name}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pipeline",
        description=DESCRIPTION,
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
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(cmd)
        cmd.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.version:
        from importlib.metadata import version

        print(f"context-pipeline {version('context-pipeline')}")
        return EXIT_OK
    if not getattr(args, "_run", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return args._run(args)
    except UsageError as err:
        print(f"pipeline {args.command}: {err}", file=sys.stderr)
        return EXIT_USAGE
    except PipelineError as err:
        for problem in err.problems:
            print(problem, file=sys.stderr)
        return EXIT_INVALID
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        sys.stderr.close()
        return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
