"""Print the JSON Schema of profile files, for editors (yaml-language-server) and CI.

The schema accepts standalone profiles and overlays (`extends:`, partial sections,
`remove`/`replace`/`before`/`after`). The committed copies are docs/profile.schema.json
and configs/profile.schema.json (installed beside the built-in profiles, which name it);
`pipeline schema --check FILE` exits 1 when FILE is out of date.

Point an editor at the schema with a first line such as
  # yaml-language-server: $schema=profile.schema.json
(`pipeline init` writes the schema beside the profile it creates).

examples:
  pipeline schema > profile.schema.json
  pipeline schema -o docs/profile.schema.json
  pipeline schema --check docs/profile.schema.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pipeline.errors import Location, PipelineError, Problem

HELP = "print the JSON Schema of profile files"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", metavar="FILE", help="write the schema to FILE instead of stdout")
    parser.add_argument("--check", metavar="FILE", help="exit 1 if FILE differs from the schema")


def run(args: argparse.Namespace) -> int:
    from pipeline.model.schema import schema_json

    text = schema_json()
    if args.check:
        return _check(Path(args.check), text)
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as err:
            raise PipelineError(Problem(f"cannot write: {err.strerror or err}", Location(args.output))) from None
        return 0
    sys.stdout.write(text)
    return 0


def _check(path: Path, text: str) -> int:
    if path.exists() and not path.is_file():  # a directory, or a FIFO that would block
        raise PipelineError(Problem("cannot read: not a regular file", Location(str(path)), code="profile.unreadable"))
    try:
        current = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise PipelineError(Problem(f"cannot read: {getattr(err, 'strerror', None) or err}", Location(str(path)), code="profile.unreadable")) from None
    if current != text:
        raise PipelineError(
            Problem("out of date with the profile models", hint=f"run `pipeline schema -o {path}`", key=str(path), code="profile.schema-out-of-date")
        )
    return 0
