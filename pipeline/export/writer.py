"""Writing an export: locked, staged, journaled, renamed into place, rolled back on failure.

:func:`export_lock` holds an ``flock`` on the export root itself (a folder, so nothing is
left behind to commit or ignore): two exports into one root queue, and one plans and
writes on what the other left complete. :func:`write_changes` then

1. writes the journal: the manifest it is about to record, as ``<manifest>.pending``
   (:mod:`pipeline.export.manifest` reads it with the manifest, so a file holding the
   old or the new bytes is the export's, and the next plain export succeeds whatever
   moment an interrupt or a kill chose);
2. stages every new file as ``.<name>.context-pipeline-new`` beside its target, written
   and fsynced, before anything is replaced;
3. renames each into place (a hard link ``.<name>.context-pipeline-old`` keeps the old
   bytes until the end; a file to delete is renamed to that name), so every file is at
   every moment wholly old or wholly new;
4. renames the journal over the manifest, removes the old copies and fsyncs the folders.

An error on the way (a read-only folder, a full disk) puts back what was renamed,
removes what was staged and created, and raises :class:`ExportWriteError` (exit 4)
naming the file: the project is as it was. Ctrl-C does the same, then goes on as an
interrupt: each rename is recorded before it is made, so an interrupt between any two
steps is undone whole; one after the manifest's rename (the commit point) leaves the new
export standing. Leftover ``-new``/``-old`` files of a killed export are removed by the next.
"""

from __future__ import annotations

import json
import os
import stat
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

from pipeline import files
from pipeline.errors import EXIT_OUTPUT, Location, PipelineError, Problem
from pipeline.export.manifest import PENDING
from pipeline.export.paths import is_link, replace_links
from pipeline.export.plan import Plan

NEW, OLD = ".context-pipeline-new", ".context-pipeline-old"


class ExportWriteError(PipelineError):
    """The export's files could not be written; the project was left as it was (exit 4)."""

    exit_code = EXIT_OUTPUT


@contextmanager
def export_lock(root: Path, exclusive: bool = True) -> Iterator[None]:
    """An advisory lock on the export root (shared for a dry run or a check)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no advisory lock
        yield
        return
    fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        except OSError:  # pragma: no cover - a file system without locks: go on unlocked
            pass
        yield
    finally:
        os.close(fd)


def side(path: Path, suffix: str) -> Path:
    return path.with_name(f".{path.name}{suffix}")


@dataclass
class _Undo:
    """What the write did so far, to put back in reverse."""

    dirs: list[Path] = field(default_factory=list)
    links: list[tuple[Path, str]] = field(default_factory=list)
    staged: list[Path] = field(default_factory=list)
    done: list[tuple[str, Path]] = field(default_factory=list)  # (created|replaced|deleted, target)
    journal: Optional[Path] = None
    committing: bool = False  # the journal is being renamed over the manifest

    def committed(self) -> bool:
        """Whether the journal became the manifest (then the export stands, whatever interrupts)."""
        return self.committing and self.journal is not None and not os.path.lexists(self.journal)

    def rollback(self) -> None:
        for what, target in reversed(self.done):
            _quietly(lambda: os.replace(side(target, OLD), target) if what != "created" else os.unlink(target))
        for path in [*self.staged, *((self.journal, side(self.journal, NEW)) if self.journal else ())]:
            _quietly(lambda: os.unlink(path))
        for folder in reversed(self.dirs):
            _quietly(lambda: os.rmdir(folder))
        for folder, link in reversed(self.links):
            _quietly(lambda: _relink(folder, link))


def _relink(folder: Path, link: str) -> None:
    os.rmdir(folder)
    os.symlink(link, folder)


def _quietly(action) -> None:
    try:
        action()
    except OSError:
        pass


def write_changes(plan: Plan) -> None:
    """Write every change and the manifest (call only when ``plan.conflicts`` is empty)."""
    undo = _Undo()
    current: Path = plan.root
    try:
        _clean_leftovers(plan)
        manifest = plan.root / plan.manifest_path
        current = manifest
        _mkdirs(plan.root, plan.manifest_path, undo)
        journal = manifest.with_name(manifest.name + PENDING)
        undo.journal = journal
        _atomic(journal, json.dumps(plan.manifest, indent=2, ensure_ascii=False) + "\n", undo)
        writes = [c for c in plan.changes if c.action in ("create", "update")]
        for change in writes:
            current = plan.root / change.path
            _mkdirs(plan.root, change.path, undo)
            undo.staged.append(_stage(current, change.text or ""))
        for change in plan.changes:
            current = plan.root / change.path
            _commit(current, change.action, undo)
        current = manifest
        undo.committing = True
        os.replace(journal, manifest)  # the commit point: after it, the new manifest is the record
        undo.journal = None
    except OSError as err:
        undo.rollback()
        raise ExportWriteError(Problem(f"cannot write: {err.strerror or err}; nothing was changed",
                                       Location(str(current)), hint="make the folder writable (or free space), "
                                       "then export again", code="profile.export-write")) from None
    except BaseException:
        if not undo.committed():
            undo.rollback()  # an interrupt before the commit point; after it the export stands
        raise
    for what, target in undo.done:
        if what != "created":
            _quietly(lambda: os.unlink(side(target, OLD)))
    for folder in {p.parent for _, p in undo.done} | {manifest.parent}:
        files.fsync_dir(folder)


def _mkdirs(root: Path, rel: str, undo: _Undo) -> None:
    """The folders above ``rel`` (a link among them, accepted by --force, replaced by a folder)."""
    undo.links += replace_links(root, rel)
    here = root
    for part in rel.split("/")[:-1]:
        here = here / part
        if not os.path.lexists(here):
            os.mkdir(here)
            undo.dirs.append(here)


def _stage(target: Path, text: str) -> Path:
    """``text`` written and fsynced beside ``target`` (with the mode of the file it replaces)."""
    temp = side(target, NEW)
    mode = 0o666
    if not is_link(target) and os.path.exists(target):
        mode = stat.S_IMODE(os.stat(target).st_mode)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(temp, flags, mode)
    try:  # a temp file that could not be written whole is removed here (the caller never saw it)
        data = text.encode("utf-8")
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        _quietly(lambda: os.unlink(temp))
        raise
    os.close(fd)
    return temp


def _atomic(path: Path, text: str, undo: _Undo) -> None:
    temp = _stage(path, text)
    os.replace(temp, path)


def _commit(target: Path, action: str, undo: _Undo) -> None:
    """One rename, recorded in ``undo`` before it is made: an interrupt between the two
    (Ctrl-C lands between any two bytecodes) leaves nothing the rollback does not know."""
    exists = os.path.lexists(target)
    if action in ("create", "update"):
        if exists:
            os.link(target, side(target, OLD), follow_symlinks=False)
        undo.done.append(("replaced" if exists else "created", target))
        os.replace(side(target, NEW), target)
        undo.staged.remove(side(target, NEW))
    elif action == "delete" and exists:
        undo.done.append(("deleted", target))
        os.replace(target, side(target, OLD))


def _clean_leftovers(plan: Plan) -> None:
    """The ``-new``/``-old`` copies an interrupted export left beside the files it knows, and
    in their folders: one killed after it recorded its manifest, before it removed the
    copies of the files it deleted, leaves copies of files no manifest names any more."""
    known = {c.path for c in plan.changes} | plan.known | {plan.manifest_path, plan.manifest_path + PENDING}
    root = os.path.realpath(plan.root)
    folders = {(plan.root / rel).parent for rel in known}
    for folder in sorted(folders):
        if os.path.realpath(folder) != os.path.normpath(os.path.join(root, os.path.relpath(folder, plan.root))):
            continue  # reached through a link: never looked into (the export stays inside its root)
        try:
            names = [e.name for e in os.scandir(folder) if e.name.startswith(".") and e.name.endswith((NEW, OLD))]
        except OSError:
            continue
        for name in names:
            leftover = folder / name
            try:
                info = os.lstat(leftover)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
                os.unlink(leftover)
