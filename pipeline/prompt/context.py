"""The explicit, frozen inputs of one system-prompt render.

A :class:`RenderContext` holds everything a render may use. Rendering reads no clock,
no environment and no file system: the same pipeline and the same context always give
the same bytes. Gathering these inputs from disk is :mod:`pipeline.prompt.discover`'s job.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Optional, Sequence

from pipeline.js import js_trim


@dataclass(frozen=True)
class ContextFile:
    """A project instruction file (``AGENTS.md`` ...): its path as discovered and its raw text."""

    path: str
    content: str


#: the lines around the block ``pipeline export`` writes into a context file it shares with the
#: user (``AGENTS.md``, ``GEMINI.md``, ...): tool markers (HTML comments), not prompt text.
#: pipeline/export/pi_extension.js holds the same two strings (tests/export/test_context_block.py).
BLOCK_BEGIN = "<!-- context-pipeline: begin -->"
BLOCK_END = "<!-- context-pipeline: end -->"
_MARKS = (BLOCK_BEGIN, BLOCK_END)


def block_marks(lines: Sequence[str]) -> Optional[tuple[int, ...]]:
    """The indexes of the marker lines of ``lines`` (``str.splitlines(keepends=True)``):
    ``()`` when there are none, ``(begin, end)`` for one well-formed block, ``None`` when the
    markers are broken (not exactly one :data:`BLOCK_BEGIN` line followed by one
    :data:`BLOCK_END` line)."""
    marks = tuple(i for i, line in enumerate(lines) if line.rstrip("\r\n") in _MARKS)
    if not marks:
        return ()
    if len(marks) != 2 or [lines[i].rstrip("\r\n") for i in marks] != list(_MARKS):
        return None
    return marks


def without_export_block(content: str) -> Optional[str]:
    """A context file's text as the profile reads it: the export's well-formed block (its
    marker lines included) removed, since it is a copy of the profile's own sections; the
    text unchanged when there is no block or the markers are broken; ``None`` when nothing
    but white space is left once a block was removed (the file is then left out)."""
    lines = content.splitlines(keepends=True)
    marks = block_marks(lines)
    if not marks:
        return content
    rest = "".join(lines[:marks[0]] + lines[marks[1] + 1:])
    return rest if js_trim(rest) else None


def profile_context_files(found: Iterable[ContextFile]) -> tuple[ContextFile, ...]:
    """The context files a profile renders: each without the export's block, the ones left
    empty by that removal dropped (:func:`without_export_block`)."""
    out = []
    for file in found:
        content = without_export_block(file.content)
        if content is not None:
            out.append(file if content == file.content else ContextFile(file.path, content))
    return tuple(out)


@dataclass(frozen=True)
class Skill:
    """A skill the model may load; ``file_path`` is its ``SKILL.md`` (or loose ``.md``) file."""

    name: str
    description: str
    file_path: str
    base_dir: str = ""
    disable_model_invocation: bool = False


def _frozen_map(value: Mapping[str, Any] | None, convert) -> Mapping[str, Any]:
    return MappingProxyType({str(k): convert(v) for k, v in (value or {}).items()})


def _str_tuple(values: Iterable[str] | str) -> tuple[str, ...]:
    if isinstance(values, str):
        raise TypeError("expected a list of strings, not one string")
    return tuple(values)


@dataclass(frozen=True)
class RenderContext:
    """Everything one render reads (all fields keyword-only).

    * ``cwd``: the working directory as the host knows it (backslashes are shown as ``/``).
    * ``tools``: the selected tools in order; ``None`` selects the profile's ``default_tools``.
    * ``tool_snippets``: one line per tool, as the host's tools carry them (normalised to
      one line when rendered); a selected tool without one is left out of the tool list
      but still counts as selected.
    * ``tool_guidelines``: per tool, the guidelines it brings while selected (trimmed,
      empties dropped, de-duplicated within the tool, then taken in tool order).
    * ``guidelines``: guidelines the caller adds (after the tools' ones, where the
      profile's ``from: caller_guidelines`` rule puts them).
    * ``custom_prompt``: replaces the sections marked ``replaced_by_custom_prompt``;
      ``None`` and ``""`` mean absent, whitespace-only counts as present.
    * ``append_prompts``: joined with a blank line; absent when the result is empty.
    * ``context_files``, ``skills``: as discovered, in order.
    * ``hidden_tools``: selected tools the prompt does not describe (left out of the tool
      list and of ``tools_include``/``tools_exclude`` tests; ``selected_any`` still sees them).
    * ``sections``: named sections the caller adds, in order (the profile's
      ``system_prompt.caller_sections`` says which names it takes); one whose name is
      already rendered takes that section's place, the others come last; empty ones are skipped.
    * ``forced_prompt``: when set (even ``""``), the whole prompt; no section renders.
    """

    cwd: str
    tools: Optional[tuple[str, ...]] = None
    tool_snippets: Mapping[str, str] = field(default_factory=dict)
    tool_guidelines: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    guidelines: tuple[str, ...] = ()
    custom_prompt: Optional[str] = None
    append_prompts: tuple[str, ...] = ()
    context_files: tuple[ContextFile, ...] = ()
    skills: tuple[Skill, ...] = ()
    hidden_tools: tuple[str, ...] = ()
    sections: Mapping[str, str] = field(default_factory=dict)
    forced_prompt: Optional[str] = None

    def __post_init__(self) -> None:
        put = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731
        if self.tools is not None:
            put("tools", _str_tuple(self.tools))
        put("tool_snippets", _frozen_map(self.tool_snippets, str))
        put("tool_guidelines", _frozen_map(self.tool_guidelines, _str_tuple))
        put("guidelines", _str_tuple(self.guidelines))
        put("append_prompts", _str_tuple(self.append_prompts))
        put("context_files", tuple(self.context_files))
        put("skills", tuple(self.skills))
        put("hidden_tools", _str_tuple(self.hidden_tools))
        put("sections", _frozen_map(self.sections, str))

    def __hash__(self) -> int:
        return hash(json.dumps(self.to_json(), sort_keys=True, ensure_ascii=False))

    def replace(self, **changes: Any) -> "RenderContext":
        """A copy with some fields changed."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(changes)
        return RenderContext(**values)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the same keys as the constructor and the vector files)."""
        out = {
            "cwd": self.cwd,
            "tools": None if self.tools is None else list(self.tools),
            "tool_snippets": dict(self.tool_snippets),
            "tool_guidelines": {k: list(v) for k, v in self.tool_guidelines.items()},
            "guidelines": list(self.guidelines),
            "custom_prompt": self.custom_prompt,
            "append_prompts": list(self.append_prompts),
            "context_files": [{"path": f.path, "content": f.content} for f in self.context_files],
            "skills": [_skill_json(s) for s in self.skills],
        }
        newer = {"hidden_tools": list(self.hidden_tools), "sections": dict(self.sections),
                 "forced_prompt": self.forced_prompt}
        out.update({k: v for k, v in newer.items() if v not in ([], {}, None)})  # only when used: older files stay as they were
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "RenderContext":
        """The inverse of :meth:`to_json`."""
        return cls(
            cwd=data["cwd"],
            tools=None if data.get("tools") is None else tuple(data["tools"]),
            tool_snippets=data.get("tool_snippets") or {},
            tool_guidelines=data.get("tool_guidelines") or {},
            guidelines=tuple(data.get("guidelines") or ()),
            custom_prompt=data.get("custom_prompt"),
            append_prompts=tuple(data.get("append_prompts") or ()),
            context_files=tuple(ContextFile(**f) for f in data.get("context_files") or ()),
            skills=tuple(Skill(**s) for s in data.get("skills") or ()),
            hidden_tools=tuple(data.get("hidden_tools") or ()),
            sections=data.get("sections") or {},
            forced_prompt=data.get("forced_prompt"),
        )


def _skill_json(skill: Skill) -> dict[str, Any]:
    return {
        "name": skill.name,
        "description": skill.description,
        "file_path": skill.file_path,
        "base_dir": skill.base_dir,
        "disable_model_invocation": skill.disable_model_invocation,
    }
