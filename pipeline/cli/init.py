"""Start using context-pipeline in a repository: a profile, a pre-commit hook, a CI job.

Writes, relative to the current directory (or DIR):

* `agent-profiles/team.yaml`: an overlay profile (`extends: builtin:default`), and
  `agent-profiles/profile.schema.json` beside it, which its `$schema` line names;
* the repository's profile setting, which `export`, `validate`, `render`, `diff` and
  `explain` use when no PROFILE is given: `[tool.context-pipeline] profile = "..."` added
  to pyproject.toml when the repository has one, else `.context-pipeline.toml`
  (docs/profile.md#the-repositorys-profile);
* `.pre-commit-config.yaml` with a `pipeline validate --strict --project .` hook for the
  profiles and the repository's prompt templates
  (a local hook using the installed `pipeline`, or the project's own hook with --repo
  and --rev); an existing file gets the entry appended under its `repos:`;
* `.github/workflows/context-profiles.yml`: install, `pipeline validate --strict
  --project . --format github` (the profiles and the templates they load here), and on pull requests `pipeline diff --format markdown` against the
  base branch, posted as a comment.

Nothing is overwritten: a file that exists is reported and left as it is (--force
replaces the profile, the schema and the workflow; a profile or workflow that differs
from what init writes is first kept as FILE.bak, and init says so). --target AGENT
(repeatable) adds a hook and a CI step running `pipeline export AGENT --check`, with
--allow-loss for what that export reports it cannot carry; they run when the profiles,
the templates they load or the files that export writes change.

Run again in a set-up repository (one whose profile setting is found), init keeps the
repository's profile and its setting as they are and adds only what is missing: the
hook and CI step of each new --target. Running it twice changes nothing.
See docs/quickstart.md.

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
AGENT_TARGETS = ("pi", "claude-code", "codex", "opencode", "gemini", "qwen-code", "kilo", "copilot", "agents-md")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from pipeline.cli import _init_files as files
    from pipeline.cli import _repo_profile
    from pipeline.errors import UsageError
    from pipeline.model.schema import schema_json

    if bool(args.repo) != bool(args.rev):
        raise UsageError("--repo and --rev go together")
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", args.name):
        raise UsageError(f"--name {args.name!r}: use letters, digits, `_`, `.`, `-`")
    root = Path(args.dir)
    if not root.is_dir():
        raise _error(root, "not a directory (the repository to set up)")
    repo = _repo_profile.find(root)  # a set-up repository keeps its profile; a broken setting is a located error
    profile = _profile_of(root, repo, args)
    d = profile.rpartition("/")[0] or "."
    fill = {"dir": d, "name": profile.rpartition("/")[2].rsplit(".", 1)[0], "profile": profile}
    builtin = profile.startswith("builtin:")
    if repo is not None and not args.force:
        print(f"kept {root / profile} (the repository's profile, set in {repo.where})", file=sys.stderr)
    elif not builtin:
        _write(root / profile, files.PROFILE.format(**fill), args.force, backup=True)
    if not builtin:
        _write(root / d / "profile.schema.json", schema_json(), args.force)
    if repo is None:
        _record(root, profile)
    workflow, config = root / ".github" / "workflows" / "context-profiles.yml", root / ".pre-commit-config.yaml"
    targets = list(dict.fromkeys([*_existing_targets(workflow, config), *args.target]))
    exported = {t: _export_facts(root, profile, t) for t in targets}
    sources = _watched_sources(root, profile, d)
    _workflow(workflow, args, fill, exported, sources)
    _pre_commit(config, args, fill, {t: exported[t] for t in dict.fromkeys(args.target)}, sources)
    if not args.install:
        print("next: fill in the install line of .github/workflows/context-profiles.yml "
              "(<your-org>, <rev>) or run `pipeline init --install SPEC --force`", file=sys.stderr)
    return 0


def _profile_of(root, repo, args: argparse.Namespace) -> str:
    """The profile init sets up, relative to ``root``: the repository's when it has one."""
    import os
    from pathlib import Path

    if repo is None:
        return f"{args.profile_dir.strip('/')}/{args.name}.yaml"
    if repo.value.startswith("builtin:"):
        return str(repo.value)
    full = Path(os.path.normpath(repo.setting.parent.absolute() / repo.value))
    return Path(os.path.relpath(full, root.absolute())).as_posix()


def _export_facts(root, profile: str, target: str) -> tuple[str, list[str]]:
    """For the export of ``profile`` to ``target``: `` --allow-loss KEY...`` for what it
    cannot carry (the losses `pipeline export` reports, so the check fails on drift, not on
    known losses), and the places it writes (top folders, or files at the root)."""
    from pipeline import compile_profile
    from pipeline.export import TARGETS, Place, prepare, undeclared_losses

    source = profile if profile.startswith("builtin:") else str(root / profile)
    place = Place(str(root), user=False, profile=profile, extra={"cwd": str(root)})
    export, plan = prepare(TARGETS[target], compile_profile(source), place, force=False)
    keys = [c.key for c in undeclared_losses(export, [])]
    written = [c.path for c in plan.changes] + [TARGETS[target].manifest_path(place)]
    block_file = getattr(TARGETS[target], "block_file", None)  # GEMINI.md, AGENTS.md: written once there are sections
    if block_file is not None:
        written.append(block_file)
    return (" --allow-loss " + " ".join(keys) if keys else ""), _places(written)


def _watched_sources(root, profile: str, d: str) -> list[str]:
    """What the profile is made of here: its folder (or file), its `project` template folder
    and the folders of the templates it loads from inside the repository."""
    import os

    from pipeline import compile_profile

    if profile.startswith("builtin:"):
        return []
    pipeline = compile_profile(str(root / profile))
    found = [f"{d}/" if d != "." else profile]
    if "project" in pipeline.template_sources:
        found.append(pipeline.profile.templates.project_dir)
    base = os.path.abspath(root)
    for template in pipeline.load_templates(root).templates:
        if template.path is not None and os.path.abspath(template.path).startswith(base + os.sep):
            found.append(os.path.relpath(os.path.dirname(os.path.abspath(template.path)), base))
    return _places((f.strip("/") + "/" if not f.endswith((".yaml", ".yml")) else f for f in found), top=False)


def _places(paths, *, top: bool = True) -> list[str]:
    """Paths as the places a hook watches, in order, without repeats: a folder (written
    ``dir/``) or a path in one as its folder (with ``top``, the top one), a file at the root
    as its name. Paths out of the repository (``..``) are left out."""
    from pathlib import PurePosixPath

    out = []
    for path in paths:
        text = str(path).replace("\\", "/")
        parts = PurePosixPath(text).parts
        if not parts or parts[0] == "..":
            continue
        folder = parts if text.endswith("/") else parts[:-1]
        if not folder:
            out.append(parts[0])
        else:
            out.append("/".join(folder[:1] if top else folder) + "/")
    return _outermost(out)


def _outermost(places) -> list[str]:
    """``places`` without repeats and without those inside a folder also listed."""
    unique = list(dict.fromkeys(places))
    return [p for p in unique if not any(o != p and o.endswith("/") and p.startswith(o) for o in unique)]


def _pattern(places: list[str]) -> str:
    """A pre-commit ``files:`` regex matching every path under (or at) ``places``."""
    def literal(text: str) -> str:
        return re.sub(r"([.^$*+?{}\[\]\\|()])", r"\\\1", text)

    return "^(" + "|".join(literal(p) if p.endswith("/") else literal(p) + "$" for p in places) + ")"


def _globs(places: list[str]) -> list[str]:
    """GitHub ``paths:`` globs for ``places``."""
    return [p + "**" if p.endswith("/") else p for p in places]


def _existing_targets(workflow, config) -> list[str]:
    """The targets an earlier init set up here (their hook or CI step)."""
    from pipeline import files

    found: list[str] = []
    for path, kind, pattern in ((config, "pre-commit config", r"id: pipeline-export-([a-z-]+)"),
                                (workflow, "settings file", r"name: export ([a-z-]+) is up to date")):
        if files.is_regular(path):
            found += re.findall(pattern, files.read_text(path, kind))
    return [t for t in dict.fromkeys(found) if t in AGENT_TARGETS]


def _record(root, profile: str) -> None:
    """Record ``profile`` as the repository's: in pyproject.toml when there is one, else in
    .context-pipeline.toml."""
    import json

    from pipeline import files
    from pipeline.cli import _init_files as text
    from pipeline.cli._repo_profile import PYPROJECT, SETTING_FILE

    value = json.dumps(profile)  # a TOML basic string
    pyproject = root / PYPROJECT
    if files.is_regular(pyproject):
        old = files.read_text(pyproject, "settings file")
        _save(pyproject, old.rstrip("\n") + "\n\n" + text.SETTING_TABLE.format(profile=value))
        print(f"added [tool.context-pipeline] profile = {value} to {pyproject}")
        return
    _write(root / SETTING_FILE, text.SETTING.format(profile=value), False)


def _workflow(path, args: argparse.Namespace, fill: dict, exported: dict, sources: list[str]) -> None:
    """Write the CI workflow, or add the steps and watched paths of new targets to it."""
    from pipeline import files
    from pipeline.cli import _init_files as text

    watched = _globs(_outermost([*sources, *(p for _, places in exported.values() for p in places)]))
    steps = "".join(text.EXPORT_STEP.format(target=t, allow=allow, **fill) for t, (allow, _) in exported.items())
    if args.force or files.missing(path):
        install = args.install or text.PLACEHOLDER_INSTALL
        note = text.GIVEN_NOTE if args.install else text.PLACEHOLDER_NOTE
        workflow = text.WORKFLOW.format(install=install, install_note=note, paths=json_list(watched), **fill)
        validate = f"        run: pipeline validate --strict --project . --format github {fill['dir']}/\n"
        _write(path, workflow.replace(validate, validate + steps, 1), args.force, backup=True)
        return
    old = files.read_text(path, "settings file")
    new = _add_steps(old, path, {t: a for t, (a, _) in exported.items()}, fill)
    new = re.sub(r"(?m)^(    paths: )(\[.*\])$", lambda m: m.group(1) + _merge_paths(m.group(2), watched), new)
    if new == old:
        print(f"kept {path} (it has every step; --force replaces it)", file=sys.stderr)
        return
    _save(path, new)
    print(f"added to {path}: the steps and paths of the new targets")


def json_list(items: list[str]) -> str:
    import json

    return json.dumps(items)


def _merge_paths(written: str, watched: list[str]) -> str:
    import json

    try:
        old = json.loads(written)
    except ValueError:  # edited by hand into something else: left as it is
        return written
    if not isinstance(old, list):
        return written
    return json.dumps([*old, *(p for p in watched if p not in old)])


def _add_steps(text: str, path, allow: dict, fill: dict) -> str:
    """``text`` with an export step for each target it has none for, after the last export
    step (else the validate step)."""
    from pipeline.cli import _init_files as files

    for target, allowed in allow.items():
        if f"name: export {target} is up to date" in text:
            continue
        anchors = list(re.finditer(r"(?m)^ +run: pipeline (export \S+ .*--check|validate --strict)[^\n]*\n", text))
        if not anchors:
            print(f"{path}: no `pipeline validate` step to add the {target} export step after; add it by hand:\n"
                  + files.EXPORT_STEP.format(target=target, allow=allowed, **fill), file=sys.stderr)
            continue
        at = anchors[-1].end()
        text = text[:at] + files.EXPORT_STEP.format(target=target, allow=allowed, **fill) + text[at:]
    return text


def _write(path, text: str, force: bool, *, backup: bool = False) -> None:
    """Write ``path`` unless it exists (``force``: replace it; with ``backup`` a file that
    differs is first kept as ``path.bak``, and the user told)."""
    import shutil

    from pipeline import files

    if files.exists(path) and not force:
        print(f"kept {path} (it exists; --force replaces it)", file=sys.stderr)
        return
    if files.exists(path) and not files.is_regular(path):  # a FIFO would block the write
        raise _error(path, "not a regular file; not replaced", "remove it, or choose another --name/--profile-dir")
    if backup and files.exists(path) and files.read_text(path, "profile" if path.suffix == ".yaml" else "settings file",
                                                        lenient=True) != text:
        kept = _free_name(path)
        try:
            shutil.copy2(path, kept)
        except OSError as err:
            raise _error(kept, f"cannot keep a copy of {path.name}: {err.strerror or err}; nothing replaced") from None
        print(f"kept your version of {path} as {kept} (--force replaced it)", file=sys.stderr)
    _save(path, text)
    print(f"wrote {path}")


def _free_name(path):
    """``path.bak``, else ``path.bak.2``, ``.3``...: a name no file has."""
    from pipeline import files

    candidate, n = path.with_name(path.name + ".bak"), 2
    while files.exists(candidate):
        candidate, n = path.with_name(f"{path.name}.bak.{n}"), n + 1
    return candidate


def _save(path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise _error(path, f"cannot write: {err.strerror or err}") from None


def _pre_commit(path, args: argparse.Namespace, fill: dict, exported: dict, sources: list[str]) -> None:
    """Write the pre-commit config, or append the hooks it lacks (the validate hook, one per new target)."""
    from pipeline import files
    from pipeline.cli import _init_files as text

    validate = (text.PRE_COMMIT_REMOTE.format(repo=args.repo, rev=args.rev, **fill) if args.repo
                else text.PRE_COMMIT_LOCAL.format(files=_pattern(sources or [fill["profile"]]), **fill))
    hooks = {"pipeline-validate": validate}
    for target, (allow, places) in exported.items():
        hooks[f"pipeline-export-{target}"] = text.EXPORT_HOOK.format(
            target=target, allow=allow, files=_pattern(_outermost([*sources, *places])), **fill)
    if files.missing(path):
        _save(path, "repos:\n" + "".join(hooks.values()))
        print(f"wrote {path}")
        return
    old = files.read_text(path, "pre-commit config")  # a regular UTF-8 file within its limit, or a located error
    missing = [hook for hook_id, hook in hooks.items() if not re.search(rf"id: {hook_id}\s*$", old, re.M)]
    if not missing:
        print(f"kept {path} (it has the pipeline-validate hook{' and the export hooks' if exported else ''})",
              file=sys.stderr)
        return
    if not re.search(r"(?m)^repos:[ \t]*$", old):
        raise _error(path, "has no block `repos:` to add the hook to", "add the entry by hand (docs/profile.md#pre-commit)",
                     "profile.bad-form")
    _save(path, old.rstrip("\n") + "\n" + "".join(missing))
    print(f"added {', '.join(h for h in hooks if hooks[h] in missing)} to {path}")


def _error(path, message: str, hint: str | None = None, code: str = "profile.unreadable"):
    from pipeline.errors import Location, Problem, ProfileError

    return ProfileError(Problem(message, Location(str(path)), hint=hint, code=code))
