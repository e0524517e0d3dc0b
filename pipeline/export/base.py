"""What a target is: the files it produces from a compiled Pipeline and its loss report.

A :class:`Target` turns a :class:`~pipeline.facade.Pipeline` into an :class:`Export`:

* :class:`OwnedFile`: a file the export writes whole (``.pi/prompts/review.md``, the
  generated extension); it is recorded in the manifest, and a re-export rewrites or
  removes it;
* :class:`SharedJson`: keys of a JSON file the export shares with the user
  (``.pi/settings.json``): only the listed dotted keys are the export's, every other
  key of the file is kept as it is;
* :class:`SharedToml`: the same for a TOML file (Codex's ``config.toml``); only top-level
  keys, edited line by line so the user's comments and layout stay;
* :class:`SharedBlock`: a marked block of a text file shared with the user (Gemini CLI's
  ``GEMINI.md``): the export owns the block, the user's lines around it stay;
* :class:`Carried`: one line of the loss report, a profile setting and how the target
  receives it: ``native`` (a file or key), ``extension`` (through the code the export
  writes), ``own`` (the agent's own prompt stands in its place: ``system_prompt.base:
  agent``), ``mismatch`` (written, in place of the agent's own prompt, but for pi's tools:
  ``system_prompt.base: profile``) or ``lost`` (with why).

Targets never write: :mod:`pipeline.export.apply` compares an export with the disk and
the manifest, and writes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, fields
from typing import Any, Literal, Mapping, Protocol

from pipeline.prompt.context import BLOCK_BEGIN as _BLOCK_BEGIN
from pipeline.prompt.context import BLOCK_END as _BLOCK_END

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pipeline.facade import Pipeline

How = Literal["native", "extension", "own", "mismatch", "lost"]
#: the labels that fail `pipeline export --check` unless `--allow-loss` names the key
LOSSY: tuple[How, ...] = ("lost", "mismatch")


@dataclass(frozen=True)
class OwnedFile:
    """A file the export writes whole; ``path`` is relative to the export root."""

    path: str
    text: str


Key = tuple[str, ...]  # a path into nested JSON objects (model ids hold dots, so no dotted strings)


@dataclass(frozen=True)
class SharedJson:
    """Keys of a JSON object file shared with the user: (path, value) pairs, each path a leaf.

    A key in ``extend`` holds a list the user shares (Claude Code's ``hooks.PreCompact``):
    its value is the export's items, added to the user's list, never put in its place."""

    path: str
    keys: tuple[tuple[Key, Any], ...]
    extend: tuple[Key, ...] = ()


@dataclass(frozen=True)
class SharedToml(SharedJson):
    """Top-level keys of a TOML file shared with the user (each key path has one part)."""

    def __post_init__(self) -> None:
        for key, _ in self.keys:
            if len(key) != 1:
                raise ValueError(f"SharedToml keys are top-level keys, not {key!r}")


@dataclass(frozen=True)
class SharedBlock:
    """A marked block of a text file shared with the user (``GEMINI.md``): the export owns the
    lines from :data:`BLOCK_BEGIN` to :data:`BLOCK_END`, every other line stays the user's."""

    path: str
    text: str


#: the lines around a :class:`SharedBlock` (tool markers, not prompt text: HTML comments); the
#: renderer drops such a block from the context files it reads (pipeline.prompt.context)
BLOCK_BEGIN, BLOCK_END = _BLOCK_BEGIN, _BLOCK_END


@dataclass(frozen=True)
class Carried:
    """How one profile setting reaches the target."""

    key: str  # the profile's key, dotted (``compaction.reserve_tokens``)
    how: How
    where: str = ""  # the file or key that carries it (native, extension)
    why: str = ""  # why it is lost

    def to_json(self) -> dict[str, str]:
        return line_json(self, optional=("where", "why"))


@dataclass(frozen=True)
class Export:
    """Everything one export produces."""

    target: str
    files: tuple[OwnedFile, ...] = ()
    shared: tuple[SharedJson, ...] = ()
    report: tuple[Carried, ...] = ()
    blocks: tuple[SharedBlock, ...] = ()

    @property
    def losses(self) -> tuple[Carried, ...]:
        return tuple(c for c in self.report if c.how in LOSSY)


@dataclass(frozen=True)
class Place:
    """Where an export goes: a project (``.pi/...``) or a user-level directory laid out as the
    target's home folder (``~/.pi/agent``)."""

    root: str
    user: bool = False
    #: the profile argument as given (recorded in the manifest)
    profile: str = "default"
    extra: Mapping[str, Any] = field(default_factory=dict)


class Target(Protocol):
    """One coding agent the profile can be exported to."""

    @property
    def name(self) -> str:
        """The TARGET argument (``pi``)."""
        ...

    @property
    def agent(self) -> str:
        """The agent and version the export is written for (``pi 1.6.0``)."""
        ...

    def manifest_path(self, place: Place) -> str:
        """The manifest's path, relative to the export root."""
        ...

    def export(self, pipeline: "Pipeline", place: Place) -> Export:
        """The files, shared keys and loss report of ``pipeline`` for ``place``."""
        ...


@dataclass(frozen=True)
class FolderTarget:
    """A target whose project files live under one folder of the project (``.claude/``) and
    whose ``--user-dir`` root is laid out as that folder (``~/.claude``); the manifest is
    ``context-pipeline-export.json`` in it.

    A subclass says what the export writes under the folder (:meth:`build`); its module's ``TARGET``
    gives the name, the agent and the folder (``pipeline.export.TARGETS`` lists them all)."""

    #: the TARGET argument (``claude-code``)
    name: str
    #: the agent and version the export is written for (``Claude Code 2.1.328``)
    agent: str
    #: the project's folder of the agent, with its slash (``.claude/``)
    folder: str

    def _prefix(self, place: Place) -> str:
        return "" if place.user else self.folder

    def manifest_path(self, place: Place) -> str:
        return self._prefix(place) + "context-pipeline-export.json"

    def export(self, pipeline: "Pipeline", place: Place) -> Export:
        return self.build(pipeline, place, self._prefix(place))

    def build(self, pipeline: "Pipeline", place: Place, pre: str) -> Export:
        """The export of ``pipeline`` for ``place``, its paths under ``pre`` (the folder, or nothing
        at a ``--user-dir`` root)."""
        raise NotImplementedError


def line_json(line: Any, optional: tuple[str, ...]) -> dict[str, str]:
    """A report line's JSON (:class:`Carried`, a ``--verify`` item): its fields in order, the
    ``optional`` ones left out when empty."""
    return {f.name: getattr(line, f.name) for f in fields(line) if f.name not in optional or getattr(line, f.name)}


def key_text(key: Key) -> str:
    """A key path as people read it (``compaction.modelOverrides["loop/m"].reserveTokens``)."""
    out = ""
    for part in key:
        out += f".{part}" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part) else f"[{json.dumps(part)}]"
    return out.lstrip(".")
