"""Check profiles: every YAML error, unknown key, wrong type, unknown ${variable}
and cross-field rule, each reported as `file:line:col: key.path: message (hint)`.

PATH may be a file or a directory; directories are searched recursively for
*.yaml and *.yml files (hidden directories skipped). A file named on the command line
is always checked as a profile; of the files found in a directory, only profiles are:
a file whose first lines hold a `$schema` naming profile.schema.json, or a mapping with
a profile key (`extends`, `system_prompt`, `compaction`, ...). Every other YAML file
(a `.pre-commit-config.yaml`, a CI workflow) is skipped and named on stderr. A file
that does not parse as YAML is checked, so its error is shown. Prompt-template files
that a profile lists explicitly in `templates.sources` are checked too. On success,
`N profiles ok` is printed when there is nothing to show (text format).

Problems are errors (the file is invalid), warnings (suspicious; they fail only
with --strict) and infos (remarks such as a template's `$99` or `${@:0}`; shown only
with --verbose, as `info:` lines, and never failing). In --format json and github an
info's severity is `notice` (GitHub's `::notice`).

--project DIR also checks the prompt templates an agent running in DIR loads from the
profile's `project` source (DIR/.pi/prompts and the like: the templates a repository
commits). A template whose frontmatter does not parse, which the agent skips, is a
warning, so `--strict` fails on it. `pipeline init` writes `--project .` into the hook
and the CI job. Templates outside DIR (your `global` ones) are not checked.

--model-window N checks the compaction numbers against the context window of a model
the agent runs (the profile's own `summarizer.context_window` is checked anyway): for
instance a 50000-token window with `keep_recent_tokens: 40000` means every turn decides
to compact and every compaction finds nothing to summarize, an error located at the
key. Repeat it for every model the profile is used with.

Without PATH, the repository's profile is checked (the one `pipeline init` records,
looked up from --project or the current directory: docs/profile.md#the-repositorys-profile).

Exit status: 0 all valid (warnings allowed unless --strict), 1 a problem was
found (a PATH that does not exist or holds no profile included), 2 usage error
(no PATH and no repository profile, an unknown flag).

examples:
  pipeline validate configs/
  pipeline validate team.yaml --strict
  pipeline validate team.yaml --verbose              # infos too, and every valid file
  pipeline validate profiles/ --format github      # annotations in GitHub Actions
  pipeline validate team.yaml --format json
  pipeline validate team.yaml --model-window 50000 --model-window 200000
  pipeline validate --strict --project . agent-profiles/   # and the repository's templates
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Sequence

from pipeline.cli._output import tolerant_output
from pipeline.errors import Location, PipelineError, Problem, UsageError

HELP = "check profiles for errors (files or directories)"
FORMATS = ("text", "json", "github")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH",
                        help="profile files or directories (default: the repository's profile)")
    parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default: text)")
    parser.add_argument("--strict", action="store_true", help="treat warnings as errors")
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="also show infos, and name every valid file (text format)"
    )
    parser.add_argument(
        "--project", metavar="DIR",
        help="also check the prompt templates the profile's `project` source loads for an agent in DIR",
    )
    parser.add_argument(
        "--model-window", type=_window, action="append", default=[], metavar="N",
        help="also check the compaction numbers against a model with a context window of N tokens (repeatable)",
    )


def _window(text: str) -> int:
    from pipeline.model.base import MAX_TOKENS

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number of tokens, got {text!r}") from None
    if not 0 < value <= MAX_TOKENS:
        raise argparse.ArgumentTypeError(f"must be between 1 and {MAX_TOKENS}, got {value}")
    return value


def run(args: argparse.Namespace) -> int:
    tolerant_output()
    skipped: list[str] = []
    files = collect(args.paths or _repository_profile(args.project), skipped)
    if skipped and args.format != "json":
        print(_skipped_line(skipped), file=sys.stderr)
    results = [check_file(path, args.model_window, args.project) for path in files]
    shown = results if args.verbose else _without_infos(results)
    print_results(shown, args.format, args.verbose, args.strict, skipped)
    failed = any(_fails(problems, args.strict) for _, _, problems in results)
    if not any(problems for _, _, problems in shown) and args.format == "text":  # problems shown: their own summary
        print(f"{len(results)} profile{'s' if len(results) != 1 else ''} ok")
    return 1 if failed else 0


def _skipped_line(skipped: list[str]) -> str:
    many = len(skipped) != 1
    return (f"skipped {len(skipped)} YAML file{'s' if many else ''} that {'are' if many else 'is'} not "
            f"{'profiles' if many else 'a profile'} (no `$schema` line, no profile key): " + ", ".join(skipped))


#: top-level keys only a profile has (``name``, ``version``, ``description`` are too common to tell)
PROFILE_KEYS = frozenset({"extends", "$schema", "system_prompt", "templates", "compaction", "retry", "summary",
                          "context", "summarizer", "runtime"})


def is_profile(path: str) -> bool:
    """Whether a YAML file found in a directory is a profile: a ``$schema`` line naming
    profile.schema.json in its first lines, or a mapping with a profile key. A file that
    cannot be read or parsed counts as one (its problem is then reported)."""
    from pipeline import files as bounded
    from pipeline.js import load_yaml

    try:
        text = bounded.read_text(path, "profile")
    except PipelineError:
        return True
    if any("$schema" in line and "schema.json" in line for line in text.splitlines()[:5]):
        return True
    try:
        data = load_yaml(text)
    except Exception:  # a syntax error: shown by the profile check
        return True
    return isinstance(data, dict) and any(key in PROFILE_KEYS for key in data)


def _repository_profile(project: str | None) -> list[str]:
    """No PATH: the repository's profile file (none found: no PATH, a usage error below)."""
    from pipeline.cli._repo_profile import find
    from pipeline.resources import builtin_profiles

    repo = find(project)
    if repo is None:
        return []
    name = repo.value.removeprefix("builtin:")
    return [str(builtin_profiles()[name])] if repo.value.startswith("builtin:") and name in builtin_profiles() \
        else [repo.path]


def collect(paths: list[str], skipped: list[str] | None = None) -> list[str]:
    """The profile files named by PATH arguments, in a stable order, without repeats; the
    YAML files of a directory that are not profiles go to ``skipped``."""
    if not paths:
        raise UsageError("no PATH given (name profile files or directories)")
    files: list[str] = []
    from pipeline import files as bounded

    for raw in paths:
        path = Path(raw)
        if bounded.is_directory(path):
            found = _walk(path)
            if not found:
                raise PipelineError(Problem("no *.yaml or *.yml files in this directory", Location(raw), code="profile.unreadable"))
            profiles = [f for f in found if is_profile(f)]
            if skipped is not None:
                skipped.extend(f for f in found if f not in profiles)
            if not profiles:
                raise PipelineError(Problem(
                    "no profiles in this directory", Location(raw), code="profile.unreadable",
                    hint=f"{len(found)} YAML file(s), none with a `$schema` line or a profile key"))
            files.extend(profiles)
        elif not bounded.missing(path):
            files.append(raw)  # the reader says what is wrong, if anything
        else:
            raise PipelineError(Problem("no such file or directory", Location(raw), code="profile.unreadable"))
    return list(dict.fromkeys(files))


def _walk(root: Path) -> list[str]:
    found = []
    for directory, subdirs, names in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
        found.extend(os.path.join(directory, n) for n in sorted(names) if n.endswith((".yaml", ".yml")))
    return found


def check_file(
    path: str, windows: list[int] | tuple[int, ...] = (), project: str | None = None,
) -> tuple[str, str | None, list[Problem]]:
    """(path, fingerprint or None, problems) for one profile; never raises for bad input.
    ``windows``: model context windows to check the compaction numbers against;
    ``project``: a directory whose templates (as an agent there loads them) are checked too."""
    from pipeline import compile_profile
    from pipeline.errors import PipelineError

    try:
        compiled = compile_profile(path)
    except PipelineError as err:
        return path, None, list(err.problems)
    except RecursionError:
        return path, None, [Problem("nested too deeply to check", _where(path), code="profile.too-deep")]
    found = [p for n in dict.fromkeys(windows) for p in compiled.window_problems(n, "--model-window")]
    templates = compiled.template_problems()
    if project is not None:
        templates += [p for p in _project_template_problems(compiled, project) if p not in templates]
    return path, compiled.fingerprint, list(compiled.warnings) + found + templates


def _project_template_problems(compiled, project: str) -> list[Problem]:
    """The load problems and findings of the templates under ``project`` that an agent
    running there loads (paths shown as the other problems are)."""
    from pipeline.resources import display_path

    root = Path(project).resolve()
    loaded = compiled.load_templates(root)
    found = list(loaded.problems) + [p for t in loaded.templates for p in t.problems()]
    out = []
    for problem in found:
        loc = problem.location
        if loc is None or loc.file is None:
            continue
        file = Path(loc.file).resolve()
        if file != root and root not in file.parents:
            continue  # the user's own (global) templates are not the repository's
        out.append(problem.at(Location(display_path(file), loc.line, loc.col)))
    return out


def _where(path: str):
    from pipeline.errors import Location

    return Location(path)


def _fails(problems: list[Problem], strict: bool) -> bool:
    """Errors fail; warnings fail under ``--strict``; infos never do."""
    return any(p.severity == "error" or (strict and p.severity == "warning") for p in problems)


def _without_infos(results: list) -> list:
    return [(path, fp, [p for p in problems if p.severity != "info"]) for path, fp, problems in results]


def _level(problem: Problem) -> str:
    """The severity as JSON and GitHub name it: ``error``, ``warning`` or ``notice``."""
    return "notice" if problem.severity == "info" else problem.severity


# --------------------------------------------------------------------------- output


def print_results(results: list, fmt: str, verbose: bool, strict: bool = False, skipped: Sequence[str] = ()) -> None:
    """Print ``(path, fingerprint, problems)`` results in the chosen format."""
    if fmt == "json":
        print(json.dumps({**_json(results, strict), "skipped": list(skipped)}, indent=2, ensure_ascii=False))
        return
    if fmt == "github":
        for _, _, problems in results:
            for problem in problems:
                print(_github(problem))
        return
    from pipeline.cli._report import count_line, format_problems

    for path, fingerprint, problems in results:
        if problems:
            print(format_problems(problems, count=False))
        if verbose and fingerprint and not any(p.severity != "info" for p in problems):
            print(f"{path}: ok (fingerprint {fingerprint[:16]})", file=sys.stderr)
    every = [p for _, _, problems in results for p in problems]
    if len(every) > 1:  # one problem is its own summary, as everywhere
        print(count_line(every))


def _json(results: list, strict: bool) -> dict:
    files = []
    for path, fingerprint, problems in results:
        files.append(
            {
                "path": path,
                "valid": not _fails(problems, strict),
                "fingerprint": fingerprint,
                "problems": [{**p.to_json(), "severity": _level(p)} for p in problems],
            }
        )
    count = {s: sum(_level(p) == s for _, _, ps in results for p in ps) for s in ("error", "warning", "notice")}
    return {"files": files, "errors": count["error"], "warnings": count["warning"], "notices": count["notice"]}


def _github(problem: Problem) -> str:
    """A GitHub Actions workflow command: ``::error file=F,line=L,col=C,title=KEY::MESSAGE``
    (``::warning``, ``::notice`` for infos)."""
    loc = problem.location
    props = []
    if loc and loc.file:
        props.append(f"file={_escape_property(loc.file)}")
        if loc.line is not None:
            props.append(f"line={loc.line}")
            if loc.col is not None:
                props.append(f"col={loc.col}")
    if problem.key:
        props.append(f"title={_escape_property(problem.key)}")
    message = problem.message + (f" ({problem.hint})" if problem.hint else "")
    head = "::" + _level(problem) + (" " + ",".join(props) if props else "")
    return f"{head}::{_escape_data(message)}"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")
