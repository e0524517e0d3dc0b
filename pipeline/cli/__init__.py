"""The ``pipeline`` command.

Thin by design: every sub-command lives in its own module in this package
(``pipeline/cli/<command>.py``) and defines

* ``HELP``: one line for the command list,
* ``add_arguments(parser)``: its flags (argparse only; no heavy imports at module level),
* ``run(args) -> int``: parse nothing more, call the library, print, return the exit code.

Modules are discovered by name, so adding a command touches no shared file. Exit codes
(:data:`pipeline.errors.EXIT_CODES`): 0 ok, 1 invalid input (a
:class:`~pipeline.errors.PipelineError`), 2 usage, 3 provider or network failure (a
:class:`~pipeline.errors.ProviderError`), 4 the output could not be written (a full
disk), 130 interrupted. A closed pipe (``pipeline render | head -1``) ends quietly
with 141 (128 + SIGPIPE), as ``git``, ``grep`` and ``cat`` do. Every problem is printed by
:mod:`pipeline.cli._report`.

Start-up is interruptible: when the process is the ``pipeline`` command, the first lines
of ``pipeline/__init__.py`` install a handler that notes Ctrl-C; this module imports
nothing heavy at its top, and :func:`main` handles Ctrl-C around everything it imports
and runs (ending as interrupted when one was noted before it), so an interrupt at any
moment after our first line runs prints one line, never a traceback.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import argparse
    from typing import Sequence

__all__ = ["EXIT_INVALID", "EXIT_OK", "EXIT_OUTPUT", "EXIT_PROVIDER", "EXIT_USAGE", "build_parser", "command", "main"]
EXIT_INTERRUPTED = 130
EXIT_CLOSED_PIPE = 141  # 128 + SIGPIPE: what a shell shows for `git log | head -1`

DESCRIPTION = """\
context-pipeline: an agent's context policy (system prompt, prompt templates,
compaction) as a declarative YAML profile, compiled into a validated Pipeline."""


def epilog() -> str:
    """The exit-code table, shown under every command's ``--help``."""
    from pipeline.errors import EXIT_CODES

    return "exit status: " + ", ".join(f"{code} {what}" for code, what in EXIT_CODES.items())


def _command_modules(only: str | None = None):
    import importlib
    import pkgutil

    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.name.startswith("_") and only in (None, info.name):
            yield info.name, importlib.import_module(f"{__name__}.{info.name}")


def _command_of(argv: Sequence[str]) -> str | None:
    """The sub-command module ``argv`` runs when it shows no help (else None: every command
    is needed, for the command list or a "did you mean"). Only its parser is then built:
    a start does not import and set up twenty commands to run one."""
    import pkgutil

    if not argv or any(arg in ("-h", "--help") for arg in argv):
        return None
    name = argv[0].replace("-", "_")
    known = {info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_")}
    return name if name in known and argv[0] == name.replace("_", "-") else None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or with ``command`` (a module name) of that one alone."""
    import argparse

    table = epilog()
    parser = argparse.ArgumentParser(
        prog="pipeline",
        description=DESCRIPTION,
        epilog=table,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in _command_modules(command):
        doc = (module.__doc__ or module.HELP).strip()
        cmd = sub.add_parser(
            name.replace("_", "-"),
            help=module.HELP,
            description=doc,
            epilog=getattr(module, "EPILOG", table),
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
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            name = getattr(args, action.dest, None)
            if name in action.choices:
                return _chosen(action.choices[name], args)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    ctrl_c = _CtrlC()
    try:
        ctrl_c.install()
        if _started_interrupted():
            return _interrupted()
        status = _main(argv)
        return _interrupted() if ctrl_c.swallowed else status
    except BaseException as err:  # noqa: BLE001 - re-raised unless Ctrl-C caused it
        if isinstance(err, KeyboardInterrupt) or ctrl_c.seen:
            return _interrupted()
        raise
    finally:
        ctrl_c.restore()


def command() -> None:
    """The console script's entry point (and ``python -m pipeline``'s): :func:`main`, then exit
    with its status.

    Every object the command made is moved out of the collector's reach first
    (``gc.freeze()``): the interpreter's shutdown then skips its full collection over the
    imported modules and the profile (tens of milliseconds of a short command otherwise),
    while every finalizer, ``atexit`` hook and buffered file is still run and flushed as
    usual. Only here, never in :func:`main`, which an in-process caller keeps running after.
    """
    import gc

    status = main()
    gc.freeze()
    sys.exit(status)


class _CtrlC:
    """Notes that SIGINT arrived, then raises ``KeyboardInterrupt`` as Python's handler does.

    The note matters when the interrupt lands inside an extension module's import: it
    may come out as another exception (pydantic-core turns a failed import into a Rust
    panic), which is then still reported as the interrupt it was. An interrupt that lands
    in a callback the interpreter runs itself (an import lock's weakref callback) cannot
    propagate: Python prints it as "Exception ignored" and goes on; it is noted instead
    (``swallowed``) and ``main`` ends as interrupted. The previous handlers are restored
    when ``main`` returns, so an in-process caller keeps its own.
    """

    def __init__(self) -> None:
        self.seen = self.swallowed = False
        self.previous = None
        self.previous_hook = sys.unraisablehook

    def install(self) -> None:
        import signal

        try:
            self.previous = signal.signal(signal.SIGINT, self._handle)
        except (ValueError, OSError):  # not the main thread: leave signals alone
            self.previous = None
            return
        sys.unraisablehook = self._unraisable

    def _handle(self, signum, frame) -> None:
        self.seen = True
        raise KeyboardInterrupt

    def _unraisable(self, info) -> None:
        if isinstance(info.exc_value, KeyboardInterrupt):
            self.swallowed = True
            return
        self.previous_hook(info)

    def restore(self) -> None:
        if self.previous is not None:
            import signal

            signal.signal(signal.SIGINT, self.previous)
            sys.unraisablehook = self.previous_hook


def _started_interrupted() -> bool:
    """Ctrl-C arrived while the command was starting (noted by ``pipeline/__init__.py``)."""
    import pipeline

    return bool(getattr(pipeline, "_early_interrupts", ()))


def _interrupted() -> int:
    try:
        print("interrupted", file=sys.stderr)
    except (OSError, KeyboardInterrupt):
        pass
    return EXIT_INTERRUPTED


def _main(argv: Sequence[str] | None) -> int:
    # pydantic-core fetches the `datetime` C API from Rust while it is imported; if Ctrl-C
    # lands in that import, Rust prints a panic with a backtrace. Imported first, here, an
    # interrupt in it is a plain KeyboardInterrupt and pydantic-core later finds it loaded.
    import datetime  # noqa: F401
    import errno

    from pipeline.cli._report import report_error
    from pipeline.cli._stdout import OutputError, guarded_stdout
    from pipeline.errors import EXIT_INVALID, EXIT_OK, EXIT_OUTPUT, EXIT_USAGE, PipelineError

    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_command_of(argv))
    command = None
    try:
        with guarded_stdout():  # `--help` and `--version` into a closed pipe too
            args = _parse(parser, argv)
            command = args.command
            if args.version:
                from importlib.metadata import version

                print(f"context-pipeline {version('context-pipeline')}")
                return EXIT_OK
            if not getattr(args, "_run", None):
                parser.print_help(sys.stderr)
                return EXIT_USAGE
            return args._run(args)
    except PipelineError as err:
        report_error(command, err)
        return err.exit_code
    except OutputError as err:
        if err.errno == errno.EPIPE:  # the reader has what it wanted (`| head -1`): quiet, as cat is
            return EXIT_CLOSED_PIPE
        print(f"pipeline {command}: cannot write the output: {err.reason}; the output is incomplete",
              file=sys.stderr)
        return EXIT_OUTPUT
    except OSError as err:  # a file error no reader turned into a located problem: still one line
        from pipeline.files import describe_os_error

        where = f"{err.filename}: " if err.filename else ""
        print(f"pipeline {command}: {where}{describe_os_error(err)}", file=sys.stderr)
        return EXIT_INVALID


if __name__ == "__main__":  # pragma: no cover
    command()
