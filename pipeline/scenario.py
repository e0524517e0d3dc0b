"""Scenario files: every render input in one YAML file, for reviews, diffs and snapshots.

Review tooling, above the facade: a scenario may lay an overlay over the profile under
test, so it compiles profiles (through :func:`pipeline.facade.compile_profile`).

A scenario is strict (unknown keys are errors, with their line) and says nothing about
*which* profile renders it: ``pipeline render PROFILE --scenario FILE`` and
``pipeline diff OLD NEW --scenario FILE`` pick that. The format is documented in
``docs/rendering.md``; the tool catalog of the profile (``system_prompt.tools``) supplies
snippets and guidelines for tools the scenario says nothing about (``catalog: false`` turns
that off).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pipeline import files
from pipeline.errors import Location, PipelineError, Problem, ProfileError
from pipeline.limits import YAML_MAX_DEPTH, yaml_excess
from pipeline.model.profile import Profile
from pipeline.prompt import ContextFile, RenderContext, Skill
from pipeline.prompt.catalog import catalog_inputs


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ScenarioContextFile(_Strict):
    path: str = Field(description="the path shown in the prompt, as discovery would give it")
    content: str = Field(description="the file's text, unchanged")


class ScenarioSkill(_Strict):
    name: str
    description: str
    file_path: str = Field(description="the skill's SKILL.md (shown as its location)")
    base_dir: Optional[str] = Field(None, description="the skill's directory; default: the file's directory")
    disable_model_invocation: bool = False


class Scenario(_Strict):
    """All inputs of one render (see ``docs/rendering.md``)."""

    description: Optional[str] = Field(None, description="what the scenario shows (not rendered)")
    cwd: str = Field(description="the working directory the prompt names")
    tools: Optional[tuple[str, ...]] = Field(None, description="selected tools in order; absent = the profile's default_tools")
    catalog: bool = Field(True, description="take snippets/guidelines the scenario does not give from the profile's tool catalog")
    tool_snippets: dict[str, str] = Field(default_factory=dict, description="per tool: its one-line snippet")
    tool_guidelines: dict[str, tuple[str, ...]] = Field(default_factory=dict, description="per tool: its guidelines")
    guidelines: tuple[str, ...] = Field((), description="guidelines the caller adds")
    custom_prompt: Optional[str] = Field(None, description='replaces the default sections ("" = absent)')
    append: tuple[str, ...] = Field((), description="append prompts, joined with a blank line")
    context_files: tuple[ScenarioContextFile, ...] = ()
    skills: tuple[ScenarioSkill, ...] = ()
    hidden_tools: tuple[str, ...] = Field((), description="selected tools the prompt does not describe")
    sections: dict[str, str] = Field(
        default_factory=dict, description="the caller's named sections, in order (the profile's caller_sections rule)"
    )
    overlay: Optional[dict[str, Any]] = Field(
        None, description="a partial profile laid over the profile under test (a team overlay), as with `extends:`"
    )

    def context_for(self, pipeline: Any) -> RenderContext:
        """The render context for a compiled ``pipeline``: :meth:`to_context` of its profile."""
        return self.to_context(pipeline.profile)

    def to_context(self, profile: Profile) -> RenderContext:
        """The render context for ``profile`` (its tool catalog fills what the scenario leaves out)."""
        snippets, guidelines = catalog_inputs(profile) if self.catalog else ({}, {})
        return RenderContext(
            cwd=self.cwd,
            tools=self.tools,
            tool_snippets={**snippets, **self.tool_snippets},
            tool_guidelines={**guidelines, **self.tool_guidelines},
            guidelines=self.guidelines,
            custom_prompt=self.custom_prompt,
            append_prompts=self.append,
            context_files=tuple(ContextFile(f.path, f.content) for f in self.context_files),
            skills=tuple(_skill(s) for s in self.skills),
            hidden_tools=self.hidden_tools,
            sections=self.sections,
        )


def _skill(s: ScenarioSkill) -> Skill:
    base_dir = s.base_dir if s.base_dir is not None else _dirname(s.file_path)
    return Skill(s.name, s.description, s.file_path, base_dir, s.disable_model_invocation)


def _dirname(path: str) -> str:
    cut = max(path.rfind("/"), path.rfind("\\"))
    return path[:cut] if cut > 0 else path[: cut + 1]


# --------------------------------------------------------------------------- loading


def load_scenario(path: str | os.PathLike) -> Scenario:
    """Read and validate a scenario file; problems carry ``file:line:col`` and the key."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    label = str(path)
    text = files.read_text(path, "scenario", label)
    try:
        data = YAML(typ="rt", pure=True).load(text)
    except YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        loc = Location(label, mark.line + 1, mark.column + 1) if mark else Location(label)
        raise ProfileError(Problem(f"invalid YAML: {getattr(err, 'problem', err)}", loc, code="profile.yaml-syntax")) from None
    except RecursionError:
        raise ProfileError(Problem(f"nested too deeply (more than {YAML_MAX_DEPTH} levels)", Location(label),
                                    code="profile.too-deep")) from None
    _check_bounds(data, label)
    if not isinstance(data, Mapping):
        raise ProfileError(Problem("a scenario is a mapping of inputs (cwd, tools, ...)", Location(label, 1, 1), code="profile.bad-scenario"))
    try:
        return Scenario.model_validate(_plain_data(data))
    except ValidationError as err:
        from pipeline.model.diagnostics import problems_from

        def locate(path: tuple, where: str) -> Location:
            return _locate(data, path, label)

        problems = problems_from(err, Scenario, locate, lambda path: ".".join(map(str, path)))
        raise ProfileError(sorted(problems, key=lambda p: (p.location.line or 0, p.location.col or 0))) from None


def _check_bounds(data: Any, label: str) -> None:
    """The profile reader's limits (:mod:`pipeline.limits`) hold for scenarios too, checked
    before anything walks the value (an alias bomb would otherwise expand)."""
    excess = yaml_excess(data)
    if excess is not None:
        code = ("profile.recursive-alias" if "contains it" in excess else "profile.too-deep" if "deeply" in excess
                else "profile.alias-bomb")
        raise ProfileError(Problem(excess, Location(label), hint="a scenario is plain YAML; see docs/limits.md",
                                    code=code))


def _plain_data(node: Any) -> Any:
    if isinstance(node, Mapping):
        return {str(k): _plain_data(v) for k, v in node.items()}
    if isinstance(node, list):
        return tuple(_plain_data(v) for v in node)
    if isinstance(node, str):
        return str(node)
    return node


def _locate(data: Any, loc: tuple, label: str) -> Location:
    """The line/column of the deepest node of ``loc`` that exists in the round-trip tree.

    A list of mappings may also be indexed by an item's ``id`` (sections are keyed by id).
    """
    node, line_col = data, None
    for part in loc:
        lc = getattr(node, "lc", None)
        try:
            if isinstance(node, Mapping) and part in node:
                line_col = lc.key(part) if lc else line_col
                node = node[part]
            elif isinstance(node, list) and _item_index(node, part) is not None:
                index = _item_index(node, part)
                line_col = lc.item(index) if lc else line_col
                node = node[index]
            else:
                break
        except (KeyError, AttributeError, TypeError):
            break
    if line_col is None:
        return Location(label)
    return Location(label, line_col[0] + 1, line_col[1] + 1)


def _item_index(items: list, part: Any) -> Optional[int]:
    """``part`` as a list index: an int in range, or the position of the item whose ``id`` it is."""
    if isinstance(part, int):
        return part if 0 <= part < len(items) else None
    return next((i for i, item in enumerate(items) if isinstance(item, Mapping) and item.get("id") == part), None)


# --------------------------------------------------------------------------- overlays


def scenario_pipeline(profile: str | os.PathLike, scenario: Scenario, scenario_path: str = "<scenario>"):
    """The pipeline a scenario renders with: ``profile``, with the scenario's overlay laid over it."""
    from pipeline.facade import compile_profile

    if scenario.overlay is None:
        return compile_profile(profile)
    if "extends" in scenario.overlay:
        raise ProfileError(Problem("an overlay must not set `extends` (it extends the profile under test)", Location(scenario_path), key="overlay.extends", code="profile.bad-scenario"))
    return _compile_overlay(_extends_target(profile), scenario.overlay, scenario_path)


def _extends_target(profile: str | os.PathLike) -> str:
    from pipeline.compiler import resolve

    text = os.fspath(profile)
    if text.startswith("builtin:"):
        return text
    path, _label = resolve(text)
    return os.path.abspath(path)


def _compile_overlay(base: str, overlay: dict[str, Any], scenario_path: str):
    import dataclasses
    import tempfile

    from ruamel.yaml import YAML

    from pipeline.facade import compile_profile

    with tempfile.TemporaryDirectory(prefix="pipeline-overlay-") as tmp:
        path = Path(tmp) / "overlay.yaml"
        with path.open("w", encoding="utf-8") as handle:
            YAML(typ="safe", pure=True).dump(_as_lists({"extends": base, **overlay}), handle)
        try:
            pipeline = compile_profile(path)
        except PipelineError as err:
            raise ProfileError([_from_overlay(p, str(path), scenario_path) for p in err.problems]) from None
    source_map = _relocated(pipeline, str(path), scenario_path)
    return pipeline.replace(origin=f"{scenario_path} (overlay on {base})", source_map=source_map)


def _relocated(pipeline, temp_file: str, scenario_path: str):
    """The source map with what the overlay set shown in the scenario file (not the deleted temporary copy)."""
    import dataclasses

    from pipeline.source.tree import SourceEntry, SourceMap

    data = _round_trip(scenario_path)
    sections = pipeline.profile.system_prompt.sections

    def move(path: tuple, span):
        if span is None or span.file != temp_file:
            return span
        if path[:2] == ("system_prompt", "sections") and len(path) > 2 and isinstance(path[2], int):
            path = (*path[:2], sections[path[2]].id, *path[3:])  # the overlay lists sections by id
        where = _locate(data, ("overlay", *path), scenario_path)
        return dataclasses.replace(span, file=scenario_path, line=where.line or 1, col=where.col or 1, source=None)

    old = pipeline.source_map
    entries = {path: SourceEntry(move(path, e.value), move(path, e.key)) for path, e in old.entries.items()}
    files = tuple(dict.fromkeys(scenario_path if f == temp_file else f for f in old.files))
    return SourceMap(entries, files)


def _as_lists(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _as_lists(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_as_lists(v) for v in value]
    return value


def _from_overlay(problem: Problem, temp_file: str, scenario_path: str) -> Problem:
    import dataclasses

    if problem.location is None or problem.location.file != temp_file:
        return problem
    key = f"overlay.{problem.key}" if problem.key else "overlay"
    return dataclasses.replace(problem, location=_key_location(scenario_path, key), key=key)


def _key_location(scenario_path: str, key: str) -> Location:
    """Where the dotted ``key`` (or its deepest existing parent) stands in the scenario file."""
    parts = tuple(int(p) if p.isdigit() else p for p in key.split("."))
    return _locate(_round_trip(scenario_path), parts, scenario_path)


def _round_trip(scenario_path: str) -> Any:
    """The scenario file's round-trip tree (with line/column marks), or None if it cannot be read again."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        return YAML(typ="rt", pure=True).load(files.read_text(scenario_path, "scenario"))
    except (PipelineError, YAMLError, RecursionError):
        return None
