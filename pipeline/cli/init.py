"""Start using context-pipeline in a repository: a profile, a pre-commit hook, a CI job.

Writes, relative to the current directory (or DIR):

* `agent-profiles/team.yaml`: an overlay profile (`extends: builtin:default`), and
  `agent-profiles/profile.schema.json` beside it, which its `$schema` line names;
* `.pre-commit-config.yaml` with a `pipeline validate --strict --project .` hook for the
  profiles and the repository's prompt templates
  (a local hook using the installed `pipeline`, or the project's own hook with --repo
  and --rev); an existing file gets the entry appended under its `repos:`;
* `.github/workflows/context-profiles.yml`: install, `pipeline validate --strict
  --project . --format github` (the profiles and the templates they load here), and on pull requests `pipeline diff --format markdown` against the
  base branch, posted as a comment.

Nothing is overwritten: a file that exists is reported and left as it is (--force
replaces the profile, the schema and the workflow). --target AGENT (repeatable) adds a
hook and a CI step running `pipeline export AGENT PROFILE --check`, with --allow-loss for
what that export reports it cannot carry. See docs/quickstart.md.

examples:
  pipeline init
  pipeline init --name backend --install "context-pipeline @ git+https://github.com/acme/context-pipeline@v0.1.0"
"""

from __future__ import annotations

import argparse
import re
import sys

HELP = "write a starter profile, a pre-commit hook and a CI job into a repository"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", nargs="?", default=".", metavar="DIR", help="the repository (default: the current directory)")
    parser.add_argument("--name", default="team", help="the profile's name and file name (default: team)")
    parser.add_argument("--profile-dir", default="agent-profiles", metavar="PATH", help="where profiles live (default: agent-profiles)")
    parser.add_argument("--install", metavar="SPEC", help="the pip requirement the CI job installs (default: a placeholder to fill in)")
    parser.add_argument("--repo", metavar="URL", help="use context-pipeline's own pre-commit hook from this repository (with --rev)")
    parser.add_argument("--rev", metavar="REV", help="the tag or commit of --repo")
    parser.add_argument("--force", action="store_true", help="replace an existing profile, schema and workflow")
    parser.add_argument("--target", action="append", default=[], choices=AGENT_TARGETS, metavar="AGENT",
                        help="also check in the hook and CI that `pipeline export AGENT` is up to date "
                             "(repeatable; " + ", ".join(AGENT_TARGETS) + ")")


#: pipeline.export.TARGETS' names, written out so the parser imports no export code
AGENT_TARGETS = ("pi", "claude-code", "codex", "opencode", "gemini")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pipeline.cli import _init_files as files
    from pipeline.errors import UsageError
    from pipeline.model.schema import schema_json

    if bool(args.repo) != bool(args.rev):
        raise UsageError("--repo and --rev go together")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", args.name):
        raise UsageError(f"--name {args.name!r}: use letters, digits, `_`, `.`, `-`")
    targets = list(dict.fromkeys(args.target))
    root = Path(args.dir)
    if not root.is_dir():
        raise _error(root, "not a directory (the repository to set up)")
    d = args.profile_dir.strip("/")
    fill = {"dir": d, "name": args.name}
    install = args.install or files.PLACEHOLDER_INSTALL
    note = files.GIVEN_NOTE if args.install else files.PLACEHOLDER_NOTE
    _write(root / d / f"{args.name}.yaml", files.PROFILE.format(**fill), args.force)
    _write(root / d / "profile.schema.json", schema_json(), args.force)
    workflow = files.WORKFLOW.format(install=install, install_note=note, **fill)
    validate = f"        run: pipeline validate --strict --project . --format github {d}/\n"
    allow = {t: _allow_loss(root, f"{d}/{args.name}.yaml", t) for t in targets}
    steps = "".join(files.EXPORT_STEP.format(target=t, allow=allow[t], **fill) for t in targets)
    _write(root / ".github" / "workflows" / "context-profiles.yml", workflow.replace(validate, validate + steps, 1),
           args.force)
    hook = (files.PRE_COMMIT_REMOTE.format(repo=args.repo, rev=args.rev, **fill) if args.repo
            else files.PRE_COMMIT_LOCAL.format(**fill))
    hook += "".join(files.EXPORT_HOOK.format(target=t, allow=allow[t], **fill) for t in targets)
    _pre_commit(root / ".pre-commit-config.yaml", hook)
    if not args.install:
        print("next: fill in the install line of .github/workflows/context-profiles.yml "
              "(<your-org>, <rev>) or run `pipeline init --install SPEC --force`", file=sys.stderr)
    return 0


def _allow_loss(root, profile: str, target: str) -> str:
    """`` --allow-loss KEY...`` for what the profile's export to ``target`` cannot carry (the
    losses `pipeline export` reports), so the check fails on drift, not on known losses."""
    from pipeline import compile_profile
    from pipeline.export import TARGETS, Place, prepare, undeclared_losses

    place = Place(str(root), user=False, profile=profile, extra={"cwd": str(root)})
    export, _ = prepare(TARGETS[target], compile_profile(str(root / profile)), place, force=False)
    keys = [c.key for c in undeclared_losses(export, [])]
    return " --allow-loss " + " ".join(keys) if keys else ""


def _write(path, text: str, force: bool) -> None:
    from pipeline import files

    if files.exists(path) and not force:
        print(f"kept {path} (it exists; --force replaces it)", file=sys.stderr)
        return
    if files.exists(path) and not files.is_regular(path):  # a FIFO would block the write
        raise _error(path, "not a regular file; not replaced", "remove it, or choose another --name/--profile-dir")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise _error(path, f"cannot write: {err.strerror or err}") from None
    print(f"wrote {path}")


def _pre_commit(path, hook: str) -> None:
    from pipeline import files

    if files.missing(path):
        path.write_text("repos:\n" + hook, encoding="utf-8")
        print(f"wrote {path}")
        return
    text = files.read_text(path, "pre-commit config")  # a regular UTF-8 file within its limit, or a located error
    if "pipeline-validate" in text:
        print(f"kept {path} (it has a pipeline-validate hook)", file=sys.stderr)
        return
    if not re.search(r"(?m)^repos:[ \t]*$", text):
        raise _error(path, "has no block `repos:` to add the hook to", "add the entry by hand (docs/profile.md#pre-commit)",
                     "profile.bad-form")
    path.write_text(text.rstrip("\n") + "\n" + hook, encoding="utf-8")
    print(f"added the pipeline-validate hook to {path}")


def _error(path, message: str, hint: str | None = None, code: str = "profile.unreadable"):
    from pipeline.errors import Location, Problem, ProfileError

    return ProfileError(Problem(message, Location(str(path)), hint=hint, code=code))
