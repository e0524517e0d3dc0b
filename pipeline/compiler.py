"""The profile front end: load, merge, override, validate, check every cross-field rule, fingerprint.

:mod:`pipeline.source` reads the files of the ``extends:`` chain and merges
them into plain data plus a source map; the pydantic models validate the data (all
errors of a run are reported together, with every unknown ``${variable}``);
:mod:`pipeline.checks` looks at what one field cannot see alone; dotted overrides (a
command's flags) are merged as the last layer and checked like the rest. The result is a
frozen :class:`CompiledProfile`; :class:`pipeline.Pipeline` (:mod:`pipeline.facade`, above
the stages) adds the methods that hand off to them. Nothing here imports a stage.
``docs/profile.md`` lists every rule checked.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Union

from pipeline import profile_cache
from pipeline.errors import Location, PipelineError, Problem, ProfileError
from pipeline.model.profile import Profile
from pipeline.model.render_plan import RenderPlan
from pipeline.model.run_plan import RunPlan
from pipeline.source.tree import SourceEntry, SourceMap, Span
from pipeline.resources import resolve_profile as resolve
from pipeline.source.locate import KeyNames

if TYPE_CHECKING:
    from pipeline.checks import Budgets

PathLike = Union[str, os.PathLike]
#: Dotted key -> value, laid over a profile as its last layer (``{"compaction.reserve_tokens": 8000}``).
Overrides = Mapping[str, Any]

__all__ = ["CompiledProfile", "LoadedProfile", "compile_model", "compile_profile", "fingerprint", "load_profile", "resolve"]


@dataclass(frozen=True)
class LoadedProfile:
    """A merged, validated profile and where each of its values was set."""

    profile: Profile
    source_map: SourceMap
    origin: str

    @property
    def files(self) -> tuple[str, ...]:
        """The files of the ``extends:`` chain, the one asked for first."""
        return self.source_map.files


@dataclass(frozen=True)
class CompiledProfile:
    """A compiled, validated, immutable profile: what the front end hands to the facade.

    The stages read parts of ``profile``; :class:`pipeline.Pipeline` (the facade) is this
    record with the methods that hand off to them. ``render_plan`` is what rendering the
    system prompt reads, ``run_plan`` what running an agent reads (:meth:`RunPlan.of`), both
    made from ``profile`` here; the compiled-profile cache stores them apart, so ``pipeline
    render`` and a warm ``pipeline run`` load them alone."""

    profile: Profile
    origin: str
    fingerprint: str
    warnings: tuple[Problem, ...] = field(default=())
    source_map: SourceMap = field(default_factory=SourceMap, compare=False, repr=False)
    render_plan: RenderPlan = field(init=False, compare=False, repr=False)
    run_plan: RunPlan = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "render_plan", RenderPlan.of(self.profile.system_prompt))
        object.__setattr__(self, "run_plan", RunPlan.of(self.profile, origin=self.origin,
                                                        template_sources=self.template_sources, render=self.render_plan))

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickled (the cache): the run plan, stored without its profile, is given this one."""
        self.__dict__.update(state)
        object.__setattr__(self, "run_plan", state["run_plan"].with_profile(lambda: self.profile))

    def __hash__(self) -> int:  # the profile holds mappings; its fingerprint stands for it
        return hash((self.fingerprint, self.origin))

    @property
    def files(self) -> tuple[str, ...]:
        return self.source_map.files or (self.origin,)

    @property
    def budgets(self) -> Budgets:
        from pipeline.checks import budgets

        return budgets(self.profile)

    @property
    def template_sources(self) -> tuple[Union[str, Path], ...]:
        """``templates.sources`` in order: ``"global"``/``"project"`` as written, every
        other entry as a path resolved against the directory of the file that lists it."""
        from pipeline.model.templates import source_path
        from pipeline.source.locate import template_source_path

        sources = self.profile.templates.sources
        out: list = []
        for i, s in enumerate(sources):
            if source_path(s) is None:
                out.append(s)
                continue
            resolved = _absolute(template_source_path(self.profile, self.source_map, i))
            out.append(resolved if isinstance(s, str) else s.model_copy(update={"path": str(resolved)}))
        return tuple(out)


# --------------------------------------------------------------------------- front end


def load_profile(path_or_name: PathLike, overrides: Overrides | None = None,
                 origin: Mapping[str, str] | None = None) -> LoadedProfile:
    """Read, merge (``extends:``, then ``overrides``) and validate a profile; no cross-field checks.

    Raises :class:`PipelineError` carrying every problem found.
    """
    loaded, problems = _load(path_or_name, _Layer.of(overrides, origin))
    if loaded is None:
        raise ProfileError(_sorted(problems))
    return loaded


def compile_profile(
    source: PathLike | Profile | CompiledProfile = "default",
    overrides: Overrides | None = None,
    origin: Mapping[str, str] | None = None,
) -> CompiledProfile:
    """Compile a profile file, ``builtin:NAME``, a built-in name, a :class:`Profile` or an
    already compiled profile, with ``overrides`` merged as the last layer.

    ``overrides`` maps dotted keys to values (``{"compaction.reserve_tokens": 8000}``); they
    go through every check a value in a file goes through. ``origin`` names where each
    came from (``{"compaction.reserve_tokens": "--reserve"}``): problems about an
    overridden value are located there (``--reserve: compaction.reserve_tokens: ...``).
    A value given where an environment variable's *name* belongs is never shown.
    Raises :class:`PipelineError` with every error; warnings end up in ``.warnings``.
    """
    layer = _Layer.of(overrides, origin)
    if isinstance(source, (Profile, CompiledProfile)):
        return _compile_built(source, layer)
    path, label = resolve(source)
    if profile_cache.is_builtin(path):  # the same result every time: compiled once per code version

        def base() -> CompiledProfile:
            return profile_cache.cached(label, lambda: _compile_file(path, label, _Layer()))

        if not layer.values:
            return base()
        # the same overrides give the same result too: a script's `pipeline run --model M ...`
        # is compiled once, not on every start
        return profile_cache.cached(label, lambda: _compile_built(base(), layer), variant=layer.fingerprint())
    return _compile_file(path, label, layer)


def _compile_file(path: Path, label: str, layer: "_Layer") -> CompiledProfile:
    loaded, problems = _load_resolved(path, label, layer)
    if loaded is None:
        raise ProfileError(_sorted(problems))
    return _finish(loaded.profile, loaded.source_map, loaded.origin, problems)


def compile_model(profile: Profile, origin: str = "<profile>") -> CompiledProfile:
    """Compile an already built :class:`Profile` (no files, so no locations)."""
    from pipeline.checks import variable_problems

    problems = variable_problems(profile.model_dump(mode="json", by_alias=True), SourceMap())
    return _finish(profile, SourceMap(), origin, problems)


def fingerprint(profile: Profile) -> str:
    """sha256 of the canonical JSON of the merged profile (the editor hint `$schema` aside)."""
    data = profile.model_dump(mode="json", by_alias=True, exclude={"schema_ref"})
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- overrides


@dataclass(frozen=True)
class _Layer:
    """The overrides of one run: key paths, values, and the place each is named by."""

    values: tuple[tuple[tuple[Union[str, int], ...], Any], ...] = ()
    names: tuple[str, ...] = ()
    variant: str | None = ""

    @classmethod
    def of(cls, overrides: Overrides | None, origin: Mapping[str, str] | None) -> "_Layer":
        overrides, origin = dict(overrides or {}), dict(origin or {})
        unknown = [k for k in origin if k not in overrides]
        if unknown:
            raise ValueError(f"origin names keys that are not overridden: {', '.join(unknown)}")
        values = tuple((_key_path(key), value) for key, value in overrides.items())
        return cls(values, tuple(origin.get(key, f"<override {key}>") for key in overrides),
                   profile_cache.variant(overrides, origin))

    def fingerprint(self) -> str | None:
        """What the layer's result depends on, as canonical JSON (:func:`pipeline.profile_cache.variant`,
        which a warm start looks the plans up with); None for a value JSON cannot hold exactly."""
        return self.variant

    def apply(self, data: Any, source_map: SourceMap) -> tuple[Any, SourceMap]:
        """``data`` with every override set, and a source map that places each at its name."""
        if not self.values:
            return data, source_map
        entries = dict(source_map.entries)
        for (path, value), name in zip(self.values, self.names):
            data = _set(data, path, value, name)
            entries = {p: e for p, e in entries.items() if p[: len(path)] != path}
            span = Span(name, None, None)  # type: ignore[arg-type]  # a flag has no line
            for depth in range(1, len(path)):
                entries.setdefault(path[:depth], SourceEntry(span, span))
            entries[path] = SourceEntry(span, span)
        return data, replace(source_map, entries=entries)


def _key_path(key: str) -> tuple[Union[str, int], ...]:
    if not isinstance(key, str) or not key or any(not part for part in key.split(".")):
        raise ValueError(f"an override key is a dotted profile key like `compaction.reserve_tokens`, got {key!r}")
    return tuple(int(part) if part.isdigit() else part for part in key.split("."))


def _set(data: Any, path: tuple, value: Any, name: str) -> Any:
    """A copy of ``data`` with ``value`` at ``path`` (missing mappings are created)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(data, list) and isinstance(head, int) and head < len(data):
        return [*data[:head], _set(data[head], rest, value, name), *data[head + 1 :]]
    if not isinstance(data, dict):
        key = ".".join(map(str, path))
        raise ProfileError(Problem(f"cannot set `{key}`: its parent is not a mapping", Location(name), key=key,
                                   code="profile.override"))
    return {**data, head: _set(data.get(head, {}), rest, value, name)}


def _compile_built(source: Profile | CompiledProfile, layer: _Layer) -> CompiledProfile:
    """A profile built in Python, or an already compiled one, with ``layer`` laid over it."""
    if isinstance(source, Profile) and not layer.values:
        return compile_model(source)
    profile = source if isinstance(source, Profile) else source.profile
    source_map = SourceMap() if isinstance(source, Profile) else source.source_map
    label = "<profile>" if isinstance(source, Profile) else source.origin
    data = profile.model_dump(mode="json", by_alias=True, exclude_unset=True)
    loaded, problems = _validated(data, source_map, label, layer)
    if loaded is None:
        raise ProfileError(_sorted(problems))
    return _finish(loaded.profile, loaded.source_map, loaded.origin, problems)


# --------------------------------------------------------------------------- loading


def _load(path_or_name: PathLike, layer: _Layer = _Layer()) -> tuple[LoadedProfile | None, list[Problem]]:
    return _load_resolved(*resolve(path_or_name), layer)


def _load_resolved(path: Path, label: str, layer: _Layer) -> tuple[LoadedProfile | None, list[Problem]]:
    from pipeline.source.load import load_merged_with_warnings  # only a compile reads files: a cached start does not

    try:
        data, source_map, warnings = load_merged_with_warnings(path, label)
    except PipelineError as err:
        raise ProfileError(_sorted(_dedupe([*err.problems, *_standalone_problems(path, label)]))) from None
    loaded, problems = _validated(data, source_map, label, layer)
    return loaded, warnings + problems


def _validated(data: Any, source_map: SourceMap, label: str, layer: _Layer) -> tuple[LoadedProfile | None, list[Problem]]:
    from pydantic import ValidationError

    from pipeline.checks import variable_problems
    from pipeline.model.diagnostics import problems_from

    data, source_map = layer.apply(data, source_map)
    problems = variable_problems(data, source_map)
    try:
        profile = Profile.model_validate(_frozen(data), strict=True, by_name=False)
    except ValidationError as err:
        found = problems_from(err, Profile, _locator(source_map), KeyNames(data), source_map.key_text)
        return None, problems + [_without_secret(p, layer) for p in found]
    return LoadedProfile(profile, source_map, label), problems


def _without_secret(problem: Problem, layer: _Layer) -> Problem:
    """A type error about an overridden secret-bearing value says what is wrong, never the value."""
    from pipeline.checks import SECRET_KEYS

    loc = problem.location
    if loc is None or loc.file not in layer.names or (problem.key or "") not in SECRET_KEYS:
        return problem
    return Problem("expected a string", loc, key=problem.key, hint=problem.hint, code=problem.code)


def _standalone_problems(path: Path, label: str) -> list[Problem]:
    """The file's own mistakes when its ``extends:`` chain or overlay could not be merged.

    So that one run reports every problem in the file, its keys, types and variables are
    still checked on their own: without the base, so keys the base would supply are not
    reported missing, and overlay directives are left aside. A file that does not even
    parse adds nothing (its syntax error is already reported).
    """
    from pydantic import ValidationError

    from pipeline.checks import variable_problems
    from pipeline.model.diagnostics import problems_from
    from pipeline.source.tree import flatten
    from pipeline.source.reader import load

    try:
        data, source_map = flatten(load(path, label))
    except PipelineError:
        return []
    if not isinstance(data, dict):
        return []
    data = _without_overlay_keys(data)
    problems = variable_problems(_with_known_kinds(data), source_map)
    try:
        Profile.model_validate(_frozen(data), strict=True, by_name=False)
    except ValidationError as err:
        found = problems_from(err, Profile, _locator(source_map), KeyNames(data))
        problems += [p for p in found if p.code != "profile.missing-key"]
    return problems


def _without_overlay_keys(data: dict) -> dict:
    from pipeline.source.merge import DIRECTIVES  # only a compile merges: a cached start reads no layers

    data = _without_append_keys({k: v for k, v in data.items() if k != "extends"})
    prompt = data.get("system_prompt")
    if isinstance(prompt, dict) and isinstance(prompt.get("sections"), list):
        sections = [
            {k: v for k, v in s.items() if k not in DIRECTIVES} if isinstance(s, dict) else s
            for s in prompt["sections"]
        ]
        data["system_prompt"] = {**prompt, "sections": sections}
    return data


def _without_append_keys(data: Any) -> Any:
    """``KEY+`` lists left aside (what they append to is the base's)."""
    from pipeline.source.lists import append_target

    if isinstance(data, dict):
        return {k: _without_append_keys(v) for k, v in data.items() if append_target(k) is None}
    if isinstance(data, list):
        return [_without_append_keys(item) for item in data]
    return data


def _with_known_kinds(data: dict) -> dict:
    """Sections that do not say their kind are left out of the variable check: which
    variables they offer depends on the kind the base gives them."""
    prompt = data.get("system_prompt")
    if not (isinstance(prompt, dict) and isinstance(prompt.get("sections"), list)):
        return data
    sections = [s for s in prompt["sections"] if isinstance(s, dict) and "kind" in s]
    return {**data, "system_prompt": {**prompt, "sections": sections}}


def _dedupe(problems: Iterable[Problem]) -> list[Problem]:
    return list(dict.fromkeys(problems))


def _frozen(value: Any) -> Any:
    """Lists -> tuples (strict validation wants the models' tuple types)."""
    if isinstance(value, dict):
        return {k: _frozen(v) for k, v in value.items()}
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def _locator(source_map: SourceMap):
    def locate(path: tuple, where: str) -> Location | None:
        if where == "key":
            return source_map.key_location(path)
        if where == "parent":
            return source_map.key_location(path[:-1]) if len(path) > 1 else source_map.value_location(())
        return source_map.value_location(path)

    return locate


def _sorted(problems: Iterable[Problem]) -> list[Problem]:
    def order(p: Problem) -> tuple:
        loc = p.location or Location()
        return (loc.file or "", loc.line or 0, loc.col or 0)

    return sorted(problems, key=order)


def _finish(profile: Profile, source_map: SourceMap, origin: str, problems: list[Problem]) -> CompiledProfile:
    from pipeline.checks import check_profile

    everything = problems + check_profile(profile, source_map)
    errors = [p for p in everything if p.severity == "error"]
    if errors:
        raise ProfileError(_sorted(errors))
    warnings = tuple(_sorted(p for p in everything if p.severity == "warning"))
    return CompiledProfile(profile, origin, fingerprint(profile), warnings, source_map)


def _absolute(path: Path) -> Path:
    return Path(os.path.normpath(path.absolute()))
