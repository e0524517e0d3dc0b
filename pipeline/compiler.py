"""Profile -> Pipeline: load, merge, validate, check every cross-field rule, fingerprint.

Stages: :mod:`pipeline.source` reads the files of the ``extends:`` chain and merges
them into plain data plus a source map; the pydantic models validate the data (all
errors of a run are reported together, with every unknown ``${variable}``);
:mod:`pipeline.checks` looks at what one field cannot see alone. The result is a frozen
:class:`Pipeline`, whose methods hand off to the later stages (rendering, templates,
compaction, projection). ``docs/profile.md`` lists every rule checked.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence, Union

from pipeline.checks import (
    LIST_KINDS,
    TEMPLATE_KEYWORDS,
    Budgets,
    budgets,
    check_profile,
    template_source_path,
    variable_problems,
)
from pipeline.errors import Location, PipelineError, Problem
from pipeline.model import Profile
from pipeline.source import BUILTIN, SourceMap, builtin_names, display_path, load_merged
from pipeline.source.chain import builtin_path, suggest_builtin
from pipeline.source.merge import DIRECTIVES
from pipeline.source.locate import render_key

if TYPE_CHECKING:  # pragma: no cover
    from pipeline.compaction import Compacted, CompactionPlan, NothingToCompact
    from pipeline.llm.types import SummaryClient
    from pipeline.prompt import RenderContext
    from pipeline.session import Entry, LlmContext, SessionFile, SessionTree
    from pipeline.templates import LoadedTemplates, PromptTemplate

PathLike = Union[str, os.PathLike]
#: ``Pipeline.project(leaf=...)`` default: the session's current leaf.
_CURRENT = object()

__all__ = [
    "LIST_KINDS", "TEMPLATE_KEYWORDS", "Budgets", "LoadedProfile", "Pipeline", "budgets", "compile_model",
    "compile_profile", "fingerprint", "load_profile", "resolve", "template_problems", "template_source_path",
]


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
class Pipeline:
    """A compiled, validated, immutable profile that runtimes execute."""

    profile: Profile
    origin: str
    fingerprint: str
    warnings: tuple[Problem, ...] = field(default=())
    source_map: SourceMap = field(default_factory=SourceMap, compare=False, repr=False)

    def __hash__(self) -> int:  # the profile holds mappings; its fingerprint stands for it
        return hash((self.fingerprint, self.origin))

    @property
    def files(self) -> tuple[str, ...]:
        return self.source_map.files or (self.origin,)

    @property
    def budgets(self) -> Budgets:
        return budgets(self.profile)

    @property
    def template_sources(self) -> tuple[Union[str, Path], ...]:
        """``templates.sources`` in order: ``"global"``/``"project"`` as written, every
        other entry as a path resolved against the directory of the file that lists it."""
        sources = self.profile.templates.sources
        return tuple(
            s if s in TEMPLATE_KEYWORDS else _absolute(template_source_path(self.profile, self.source_map, i))
            for i, s in enumerate(sources)
        )

    # ------------------------------------------------------------------ runtime facade
    # Each method imports its stage on first use and hands off; see the module docs of
    # pipeline.prompt, pipeline.templates, pipeline.compaction and pipeline.session.

    def render_system_prompt(self, context: RenderContext) -> str:
        """The system prompt for ``context`` (:func:`pipeline.prompt.render_system_prompt`)."""
        from pipeline.prompt import render_system_prompt

        return render_system_prompt(self, context)

    def load_templates(
        self, cwd: PathLike | None = None, *, agent: PathLike | None = None,
        home: PathLike | None = None, trusted: bool = True,
    ) -> LoadedTemplates:
        """The prompt templates ``templates.sources`` names, for ``cwd`` (default: the
        current directory); ``trusted=False`` skips ``project`` (see
        :func:`pipeline.templates.load_pipeline_templates`)."""
        from pipeline.templates import load_pipeline_templates

        return load_pipeline_templates(self, cwd, agent=agent, home=home, trusted=trusted)

    def expand(self, text: str, templates: Iterable[PromptTemplate]) -> str:
        """``/name args`` expanded with ``templates``; any other input unchanged."""
        from pipeline.templates import expand_input

        return expand_input(text, templates)

    def plan_compaction(
        self, session: SessionFile | PathLike, **overrides: int
    ) -> CompactionPlan | NothingToCompact:
        """What compacting the session's current branch would do (nothing is called or
        written); ``overrides``: ``keep_recent_tokens``, ``reserve_tokens``."""
        from pipeline.compaction import compaction_settings, plan_session

        return plan_session(_session(session), compaction_settings(self.profile, **overrides))

    def compact(
        self, session: SessionFile | PathLike, client: SummaryClient | None = None,
        instructions: str | None = None,
    ) -> Compacted | NothingToCompact:
        """Compact the current branch and append the entry; ``client`` defaults to the
        profile's ``summarizer``; ``instructions`` are the caller's extra focus."""
        from pipeline.compaction import compact_session, make_summary_client

        if client is None:
            client = make_summary_client(self.profile, self.profile.summarizer)
        return compact_session(_session(session), self.profile, client, custom_instructions=instructions)

    def project(
        self, session: SessionFile | PathLike | SessionTree | Sequence[Entry], leaf: str | None | object = _CURRENT
    ) -> LlmContext:
        """The LLM context of ``session`` (a session file or its path, a tree, entries) at
        ``leaf`` (default: the current leaf; ``None``: empty), with the profile's words."""
        from pipeline.session import LAST, ContextTexts, build_context

        texts = ContextTexts.from_profile(self.profile)
        return build_context(_session(session), texts, LAST if leaf is _CURRENT else leaf)


def _session(session: Any) -> Any:
    """A session argument: a path is opened as a :class:`~pipeline.session.SessionFile`."""
    if isinstance(session, (str, os.PathLike)):
        from pipeline.session import SessionFile

        return SessionFile.open(session)
    return session


# --------------------------------------------------------------------------- facade


def resolve(path_or_name: PathLike) -> tuple[Path, str]:
    """A profile argument -> (file, label): an existing path, ``builtin:NAME`` or a bare built-in name."""
    text = os.fspath(path_or_name)
    if text.startswith(BUILTIN):
        return builtin_path(text[len(BUILTIN) :])
    path = Path(text)
    if path.exists():
        return path, text
    if text in builtin_names():
        return builtin_path(text)
    raise PipelineError(Problem("no such profile file", Location(text), hint=suggest_builtin(text)))


def load_profile(path_or_name: PathLike) -> LoadedProfile:
    """Read, merge (``extends:``) and validate a profile; no cross-field checks.

    Raises :class:`PipelineError` carrying every problem found.
    """
    loaded, problems = _load(path_or_name)
    if loaded is None:
        raise PipelineError(_sorted(problems))
    return loaded


def compile_profile(path_or_name: PathLike | Profile = "default") -> Pipeline:
    """Compile a profile file, ``builtin:NAME``, a built-in name or a :class:`Profile`.

    Raises :class:`PipelineError` with every error; warnings end up in ``.warnings``.
    """
    if isinstance(path_or_name, Profile):
        return compile_model(path_or_name)
    loaded, problems = _load(path_or_name)
    if loaded is None:
        raise PipelineError(_sorted(problems))
    return _finish(loaded.profile, loaded.source_map, loaded.origin, problems)


def compile_model(profile: Profile, origin: str = "<profile>") -> Pipeline:
    """Compile an already built :class:`Profile` (no files, so no locations)."""
    problems = variable_problems(profile.model_dump(mode="json", by_alias=True), SourceMap())
    return _finish(profile, SourceMap(), origin, problems)


def fingerprint(profile: Profile) -> str:
    """sha256 of the canonical JSON of the merged profile (the editor hint `$schema` aside)."""
    data = profile.model_dump(mode="json", by_alias=True, exclude={"schema_ref"})
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- loading


def _load(path_or_name: PathLike) -> tuple[LoadedProfile | None, list[Problem]]:
    from pydantic import ValidationError

    from pipeline.model.diagnostics import problems_from

    path, label = resolve(path_or_name)
    try:
        data, source_map = load_merged(path, label)
    except PipelineError as err:
        raise PipelineError(_sorted(_dedupe([*err.problems, *_standalone_problems(path, label)]))) from None
    problems = variable_problems(data, source_map)
    try:
        profile = Profile.model_validate(_frozen(data), strict=True, by_name=False)
    except ValidationError as err:
        return None, problems + problems_from(err, Profile, _locator(source_map), lambda p: render_key(p, data))
    return LoadedProfile(profile, source_map, label), problems


def _standalone_problems(path: Path, label: str) -> list[Problem]:
    """The file's own mistakes when its ``extends:`` chain or overlay could not be merged.

    So that one run reports every problem in the file, its keys, types and variables are
    still checked on their own: without the base, so keys the base would supply are not
    reported missing, and overlay directives are left aside. A file that does not even
    parse adds nothing (its syntax error is already reported).
    """
    from pydantic import ValidationError

    from pipeline.model.diagnostics import problems_from
    from pipeline.source import flatten
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
        found = problems_from(err, Profile, _locator(source_map), lambda p: render_key(p, data))
        problems += [p for p in found if p.code != "missing"]
    return problems


def _without_overlay_keys(data: dict) -> dict:
    data = {k: v for k, v in data.items() if k != "extends"}
    prompt = data.get("system_prompt")
    if isinstance(prompt, dict) and isinstance(prompt.get("sections"), list):
        sections = [
            {k: v for k, v in s.items() if k not in DIRECTIVES} if isinstance(s, dict) else s
            for s in prompt["sections"]
        ]
        data["system_prompt"] = {**prompt, "sections": sections}
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
    unique: list[Problem] = []
    for problem in problems:
        if problem not in unique:
            unique.append(problem)
    return unique


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


def _finish(profile: Profile, source_map: SourceMap, origin: str, problems: list[Problem]) -> Pipeline:
    everything = problems + check_profile(profile, source_map)
    errors = [p for p in everything if p.severity == "error"]
    if errors:
        raise PipelineError(_sorted(errors))
    warnings = tuple(_sorted(p for p in everything if p.severity == "warning"))
    return Pipeline(profile, origin, fingerprint(profile), warnings, source_map)


# --------------------------------------------------------------------------- prompt templates


def template_problems(pipeline: Pipeline) -> list[Problem]:
    """Findings of :func:`pipeline.templates.analyze` for the template files a profile
    lists explicitly in ``templates.sources`` (``global``/``project`` depend on where the
    agent runs, so they are not checked here). Missing paths are already compile warnings.
    """
    from pipeline.templates import explicit_sources, load_sources

    problems: list[Problem] = []
    for i, source in enumerate(pipeline.profile.templates.sources):
        if source in TEMPLATE_KEYWORDS or source in pipeline.profile.templates.sources[:i]:
            continue
        path = template_source_path(pipeline.profile, pipeline.source_map, i)
        if not path.exists():
            continue
        try:
            loaded = load_sources(explicit_sources([path.absolute()]))
            found = list(loaded.problems) + [p for t in loaded.templates for p in t.problems()]
        except Exception as err:  # a bug in the template stage must not hide the other results
            where = pipeline.source_map.value_location(("templates", "sources", i))
            detail = " ".join(str(err).split())
            message = f"could not check the templates in {path}: internal error ({type(err).__name__}: {detail})"
            found = [Problem(message, where, key=f"templates.sources.{i}", severity="warning", code="internal-error")]
        problems.extend(_relative(p) for p in found)
    return problems


def _relative(problem: Problem) -> Problem:
    loc = problem.location
    if loc is None or loc.file is None or not os.path.isabs(loc.file):
        return problem
    return problem.at(Location(display_path(Path(loc.file)), loc.line, loc.col))


def _absolute(path: Path) -> Path:
    return Path(os.path.normpath(path.absolute()))
