"""The files ``pipeline export`` wrote, as the rest of the tool recognises them.

Every export keeps a manifest, ``context-pipeline-export.json``, in the target's folder of
its root (``.pi/``, ``.claude/``, ... of a project; the root itself for a ``--user-dir``
export laid out as the agent's home folder). It lists each file the export wrote, relative
to the root, with the SHA-256 of its bytes (:func:`digest`).

Some of those files land where the profile's own discovery looks: the pi export copies the
profile's templates into ``.pi/prompts/``, which is the ``project`` template source, and
an export may write a context file or a command folder a dialect source reads. Read back,
such a copy would shadow (or collide with) the profile's own file it was made from.
:class:`ExportedCopies` answers, for a file discovery found, whether it is an export's
copy *as written*: listed in a manifest above it, or in a folder beside one of those
folders (``<root>/.pi/``, ``<root>/.codex/``, ...), with the digest of its bytes now. The
journal an interrupted export left beside a manifest (``<manifest>.pending``, the manifest
it was about to record) counts too: a file holding either the old or the new bytes is the
export's, as the export itself reads it (:mod:`pipeline.export.manifest`).
An edited copy is the user's again and is read. Nothing here raises: a manifest that
cannot be read lists nothing. The export (:mod:`pipeline.export.apply`) writes the
manifests; this is the reading rule stages may use (a stage never imports the export).
"""

from __future__ import annotations

import hashlib
import json
import os

from pipeline import files
from pipeline.errors import PipelineError

#: the manifest's file name, in each target's folder (``.pi/context-pipeline-export.json``)
MANIFEST_NAME = "context-pipeline-export.json"
#: the file kind the manifest is read as (its size limit: pipeline.limits.FILE_LIMITS)
MANIFEST_KIND = "export manifest"
#: the journal beside a manifest while an export writes (left by one that was interrupted)
PENDING = ".pending"


def digest(data: bytes) -> str:
    """The digest a manifest records for a file's bytes (SHA-256, hex)."""
    return hashlib.sha256(data).hexdigest()


def manifest_files(path: str) -> dict[str, str]:
    """The ``files`` of the manifest at ``path`` (entry -> digest); empty when there is no
    readable manifest there."""
    try:
        data = json.loads(files.read_text(path, MANIFEST_KIND))
    except (PipelineError, ValueError, RecursionError):
        return {}
    listed = data.get("files") if isinstance(data, dict) else None
    if not isinstance(listed, dict):
        return {}
    return {k: v for k, v in listed.items() if isinstance(k, str) and isinstance(v, str)}


class ExportedCopies:
    """Which files are an export's copies, left as it wrote them. One instance per discovery:
    it reads each folder's manifests once."""

    def __init__(self) -> None:
        self._by_folder: dict[str, dict[str, set[str]]] = {}  # a folder -> {real path of an entry: digests}

    def is_copy(self, path: str | os.PathLike[str], kind: str) -> bool:
        """Whether ``path`` (a file of ``kind``, for its size limit) is listed in an export's
        manifest and its bytes are still the ones the export wrote."""
        recorded = self.recorded(path)
        if not recorded:
            return False
        try:
            data = files.read_bytes(path, kind)
        except PipelineError:
            return False  # the reader that loads it reports the problem
        return digest(data) in recorded

    def recorded(self, path: str | os.PathLike[str]) -> set[str]:
        """The digests the manifests (and their journals) record for ``path`` (empty: none)."""
        absolute = os.path.abspath(path)
        real = os.path.realpath(absolute)
        for folder in dict.fromkeys(_ancestors(absolute) + _ancestors(real)):
            found = self._listed(folder).get(real)
            if found:
                return found
        return set()

    def _listed(self, folder: str) -> dict[str, set[str]]:
        listed = self._by_folder.get(folder)
        if listed is None:
            listed = {}
            for manifest in _manifests_of(folder):
                for entry, recorded in manifest_files(manifest).items():
                    if entry and not os.path.isabs(entry):
                        listed.setdefault(os.path.realpath(os.path.join(folder, entry)), set()).add(recorded)
            self._by_folder[folder] = listed
        return listed


def _ancestors(path: str) -> list[str]:
    out = []
    parent = os.path.dirname(path)
    while parent and parent not in out:
        out.append(parent)
        parent = os.path.dirname(parent)
    return out


def _manifests_of(folder: str) -> list[str]:
    """The manifests whose root is ``folder``: its own (a ``--user-dir`` export) and those in
    its folders whose names start with a dot (``.pi/``, ``.claude/``: a project's exports)."""
    out = [os.path.join(folder, MANIFEST_NAME)]
    try:
        with os.scandir(folder) as entries:
            out += sorted(os.path.join(e.path, MANIFEST_NAME) for e in entries
                          if e.name.startswith(".") and _is_dir(e))
    except OSError:
        return []
    return [m for manifest in out for m in (manifest, manifest + PENDING) if files.is_regular(m)]


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False
