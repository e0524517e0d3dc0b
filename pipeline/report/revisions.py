"""Profiles as they were in a git revision: ``REV:path`` references for ``pipeline diff``.

``git show REV:path`` reads the file; it is written under a temporary directory at its
repository-relative path, and every relative ``extends:`` it names is fetched from the
same revision the same way (recursively), so the chain compiles as it would have in that
checkout. ``builtin:NAME`` and absolute ``extends:`` targets are left alone (they resolve
against the installed package and the file system of today).

A file is held to the profile size limit (``pipeline/limits.py``) like a profile on disk:
its blob size is checked before ``git show`` runs, and the output is read as a stream that
stops one byte past the limit; beyond it the error names ``REV:path``.
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
import subprocess
import tempfile
from pathlib import Path
from typing import Optional

from pipeline import files
from pipeline.errors import Location, Problem, ProfileError, UsageError

MAX_FILES = 32


def is_revision_ref(spec: str) -> bool:
    """``REV:path`` (and not an existing file, ``builtin:NAME`` or a Windows drive path)."""
    if spec.startswith("builtin:") or os.path.exists(spec):
        return False
    rev, sep, path = spec.partition(":")
    return bool(sep and rev and path) and not (len(rev) == 1 and path[:1] in ("\\", "/"))


def check_revision(rev: str) -> None:
    """A revision git will read as a revision, never as an option: it may not start with
    ``-`` (``--output=FILE:x`` would make ``git show`` write a file) nor hold control
    characters."""
    if rev.startswith("-"):
        raise UsageError(f"{rev!r}: a revision may not start with `-` (REV:path names a git revision)")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in rev):
        raise UsageError(f"{rev!r}: a revision may not contain control characters")


def _git(args: list[str], cwd: str, shown: Optional[str] = None) -> bytes:
    """Run git; user-given revisions come after ``--end-of-options`` (and :func:`check_revision`).
    A failure is told as ``git SHOWN: git's last line`` (``shown`` defaults to the arguments)."""
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False, stdin=subprocess.DEVNULL)
    except OSError as err:
        raise UsageError(f"cannot run git: {err.strerror or err}") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        shown = shown or " ".join(a for a in args if a != "--end-of-options")
        raise UsageError(f"git {shown}: {message[-1] if message else 'failed'}")
    return done.stdout


def _show(rev: str, path: str, cwd: str) -> bytes:
    """``git show REV:path``, read as a stream up to the profile limit (git is stopped there)."""
    cap = files.limit("profile")
    try:
        with tempfile.TemporaryFile() as errors:
            with subprocess.Popen(["git", "show", "--end-of-options", f"{rev}:{path}"], cwd=cwd,
                                  stdout=subprocess.PIPE, stderr=errors, stdin=subprocess.DEVNULL) as git:
                data = git.stdout.read(cap + 1)
                if len(data) > cap:
                    git.kill()
                    raise _too_large(rev, path, f"more than {cap}")
                code = git.wait()
            errors.seek(0)
            message = errors.read(64 * 1024).decode("utf-8", "replace").strip().splitlines()
    except OSError as err:
        raise UsageError(f"cannot run git: {err.strerror or err}") from None
    if code != 0:
        raise UsageError(f"git show {rev}:{path}: {message[-1] if message else 'failed'}")
    return data


def _too_large(rev: str, path: str, size: str) -> ProfileError:
    return ProfileError(Problem(f"file too large: {size} bytes (the limit for a profile is {files.limit('profile')} bytes)",
                                Location(f"{rev}:{path}"), hint="see docs/limits.md", code="profile.file-too-large"))


def _repo_path(path: str, cwd: str) -> str:
    """The path relative to the repository root, as ``git show REV:path`` reads it."""
    if path.startswith(("./", "../")) or path in (".", ".."):
        prefix = _git(["rev-parse", "--show-prefix"], cwd).decode().strip()
        return posixpath.normpath(posixpath.join(prefix, path))
    return posixpath.normpath(path)


def _require_file(rev: str, path: str, cwd: str) -> None:
    """``REV:path`` is a file (a blob) no larger than a profile may be."""
    shown = f"show {rev}:{path}"  # what is being read, whichever git command finds the problem
    kind = _git(["cat-file", "-t", "--end-of-options", f"{rev}:{path}"], cwd, shown).decode().strip()
    if kind != "blob":
        what = "a directory" if kind == "tree" else f"a git {kind}"
        raise UsageError(f"{rev}:{path} is {what} in that revision, not a profile file")
    size = int(_git(["cat-file", "-s", "--end-of-options", f"{rev}:{path}"], cwd, shown).decode().strip() or 0)
    if size > files.limit("profile"):
        raise _too_large(rev, path, str(size))


def revision_problem(problem: Problem, workdir: Path, rev: str) -> Problem:
    """``problem`` with a file written under ``workdir`` shown as ``REV:path`` (no temporary paths)."""
    location = problem.location
    if location is None or not location.file:
        return problem
    try:
        rel = Path(location.file).resolve().relative_to(workdir.resolve())
    except ValueError:
        return problem
    return dataclasses.replace(problem, location=dataclasses.replace(location, file=f"{rev}:{rel.as_posix()}"))


def _extends_of(text: str) -> Optional[str]:
    from ruamel.yaml import YAML

    try:
        data = YAML(typ="safe", pure=True).load(text)
    except Exception:  # the compiler reports bad YAML with its location
        return None
    target = data.get("extends") if isinstance(data, dict) else None
    return target.strip() if isinstance(target, str) and target.strip() else None


def materialize(spec: str, workdir: Path, cwd: Optional[str] = None) -> Path:
    """Write the profile ``REV:path`` (and its relative ``extends:`` chain) under ``workdir``."""
    cwd = cwd or os.getcwd()
    rev, _, path = spec.partition(":")
    check_revision(rev)
    rel = _repo_path(path, cwd)
    top = workdir / rel
    pending, seen = [rel], set()
    while pending and len(seen) < MAX_FILES:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        if current == ".." or current.startswith("../") or os.path.isabs(current):
            raise UsageError(f"{rev}:{current}: the path leaves the repository")
        _require_file(rev, current, cwd)
        text = _show(rev, current, cwd)
        target = workdir / current
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text)
        parent = _extends_of(text.decode("utf-8", "replace"))
        if parent and not parent.startswith("builtin:") and not os.path.isabs(os.path.expanduser(parent)):
            pending.append(posixpath.normpath(posixpath.join(posixpath.dirname(current), parent)))
    return top
