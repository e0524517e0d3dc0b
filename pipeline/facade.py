"""The facade: :class:`Pipeline`, a compiled profile with the methods runtimes call.

The layers run one way (``docs/architecture.md``): the profile front end
(:mod:`pipeline.compiler`) compiles a :class:`~pipeline.compiler.CompiledProfile`; the
stages (templates, prompt, session, compaction, llm, runtime) each take the part of the
profile they read; this module sits on top of both and hands each call to its stage, as
jinja's ``Environment`` does for its parser and loaders. Review tooling and the CLI call
this, never a stage with ``.profile`` unwrapped. Stages are imported on first use, so
``import pipeline`` stays cheap.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Protocol, Sequence, Union

from pipeline import compiler
from pipeline.compiler import CompiledProfile, Overrides
from pipeline.errors import Location, Problem
from pipeline.model.profile import Profile
from pipeline.model.ref import ModelRef
from pipeline import wiring
from pipeline.wiring import DEFAULT_TOOLS

if TYPE_CHECKING:  # pragma: no cover
    from pipeline.checks import Budgets
    from pipeline.model.render_plan import RenderPlan
    from pipeline.model.run_plan import RunPlan
    from pipeline.source.tree import SourceMap
    from pipeline.compaction.driver import CompactionOutcome
    from pipeline.compaction.engine import Navigated
    from pipeline.compaction.plan import CompactionPlan, NothingToCompact
    from pipeline.compaction.triggers import TriggerAnswer
    from pipeline.model.compaction import Compaction as CompactionSettings
    from pipeline.llm.chat import ChatClient
    from pipeline.llm.types import SummaryClient
    from pipeline.prompt import ContextFile, RenderContext, RenderedSection, Skill
    from pipeline.prompt.inputs import Gathered, RenderRequest
    from pipeline.runtime.loop import Agent
    from pipeline.model.run_plan import RetrySettings
    from pipeline.runtime.loop import ModelClient
    from pipeline.runtime.conversation import Conversation
    from pipeline.runtime.events import Listener
    from pipeline.runtime.host import BeforeAgentStart, InputHook, ModelInfo, Tool
    from pipeline.session import Entry, LlmContext, SessionFile, SessionTree
    from pipeline.templates.discovery import LoadedTemplates
    from pipeline.templates.files import PromptTemplate

PathLike = Union[str, "os.PathLike[str]"]


class _Identified(Protocol):
    """A model object: :class:`pipeline.runtime.host.ModelInfo` or any object with these two attributes."""

    @property
    def provider(self) -> str | None: ...

    @property
    def id(self) -> str | None: ...


#: A model for :meth:`Pipeline.compact`: ``"provider/id"``, ``(provider, id)``, an object with
#: ``provider`` and ``id`` (:class:`pipeline.runtime.host.ModelInfo`), a :class:`~pipeline.model.ref.ModelRef`,
#: or ``None`` (the profile's settings); read by :meth:`ModelRef.of`, the one place.
ModelSpec = Union[str, "tuple[str | None, str | None]", _Identified, ModelRef, None]
#: ``Pipeline.project(leaf=...)`` default: the session's current leaf.
_CURRENT = object()

__all__ = ["DEFAULT_TOOLS", "Patches", "Pipeline", "builtin_tool_names", "compile_profile", "template_problems"]


def compile_profile(
    source: "PathLike | Profile | CompiledProfile | Pipeline" = "default",
    overrides: Overrides | None = None,
    origin: Mapping[str, str] | None = None,
) -> "Pipeline":
    """:func:`pipeline.compiler.compile_profile`, as a :class:`Pipeline`.

    ``overrides`` (dotted keys) are merged as the last layer and checked like the rest;
    ``origin`` names the flag behind each, for messages: ``--reserve: compaction.reserve_tokens: ...``.
    """
    compiled = source.compiled if isinstance(source, Pipeline) else source
    return Pipeline.of(compiler.compile_profile(compiled, overrides, origin))


builtin_tool_names = wiring.builtin_tool_names


class Pipeline:
    """A compiled, validated, immutable profile that runtimes execute: it wraps the front end's
    :class:`~pipeline.compiler.CompiledProfile` (``compiled``) and hands each call to its stage.
    The compiled record's fields are read through (``profile``, ``origin``, ``fingerprint``,
    ``warnings``, ``source_map``, ``render_plan``, ``files``, ``budgets``, ``template_sources``)."""

    __slots__ = ("compiled",)
    compiled: CompiledProfile

    def __init__(self, compiled: CompiledProfile) -> None:
        object.__setattr__(self, "compiled", compiled)

    def __setattr__(self, name: str, value: object) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pipeline) and self.compiled == other.compiled

    def __hash__(self) -> int:
        return hash(self.compiled)

    def __repr__(self) -> str:
        return f"Pipeline(origin={self.origin!r}, fingerprint={self.fingerprint!r})"

    def __reduce__(self) -> tuple[type["Pipeline"], tuple[CompiledProfile]]:
        return Pipeline, (self.compiled,)

    @classmethod
    def of(cls, compiled: "CompiledProfile | Pipeline") -> "Pipeline":
        return compiled if isinstance(compiled, Pipeline) else cls(compiled)

    def replace(self, **changes: Any) -> "Pipeline":
        """The same compiled profile with fields changed (``origin``, ``source_map``...)."""
        return Pipeline(dataclasses.replace(self.compiled, **changes))

    # ------------------------------------------------------------------ the compiled record, read through

    @property
    def profile(self) -> Profile:
        return self.compiled.profile

    @property
    def origin(self) -> str:
        return self.compiled.origin

    @property
    def fingerprint(self) -> str:
        return self.compiled.fingerprint

    @property
    def warnings(self) -> tuple[Problem, ...]:
        return self.compiled.warnings

    @property
    def source_map(self) -> SourceMap:
        return self.compiled.source_map

    @property
    def render_plan(self) -> RenderPlan:
        return self.compiled.render_plan

    @property
    def run_plan(self) -> RunPlan:
        """What running an agent reads (:class:`~pipeline.model.run_plan.RunPlan`): what
        :meth:`conversation` and :meth:`agent` hand the runtime."""
        return self.compiled.run_plan

    @property
    def files(self) -> tuple[str, ...]:
        return self.compiled.files

    @property
    def budgets(self) -> Budgets:
        return self.compiled.budgets

    @property
    def template_sources(self) -> tuple[Union[str, Path], ...]:
        return self.compiled.template_sources

    def with_overrides(self, overrides: Overrides | None, origin: Mapping[str, str] | None = None) -> "Pipeline":
        """This profile with dotted ``overrides`` as its last layer, checked again (``self`` when there are none)."""
        if not overrides:
            return self
        return compile_profile(self, overrides, origin)

    @property
    def retry_settings(self) -> RetrySettings:
        """The profile's ``retry`` block as :class:`pipeline.model.run_plan.RetrySettings` (the run plan's)."""
        return self.run_plan.retry

    # ------------------------------------------------------------------ prompt

    def render_sections(self, context: RenderContext, *, catalog: bool = True) -> tuple[RenderedSection, ...]:
        """The rendered sections for ``context``; ``catalog``: the profile's tool catalog
        (``system_prompt.tools``) gives snippets and guidelines the context does not."""
        from pipeline.prompt import render_sections, with_catalog

        return render_sections(self.render_plan, with_catalog(self.render_plan, context) if catalog else context)

    def render_system_prompt(self, context: RenderContext, *, catalog: bool = True) -> str:
        """The system prompt for ``context`` (:func:`pipeline.prompt.render_system_prompt`),
        with the profile's tool catalog unless ``catalog=False``."""
        from pipeline.prompt import render_system_prompt, with_catalog

        return render_system_prompt(self.render_plan, with_catalog(self.render_plan, context) if catalog else context)

    def system_sections(self, context: RenderContext, *, catalog: bool = True) -> dict[str, str] | None:
        """The record of named sections for ``context`` (name → text, in order); ``None`` for a forced prompt."""
        from pipeline.prompt import section_record

        if context.forced_prompt is not None:
            return None
        return section_record(self.render_sections(context, catalog=catalog))

    @property
    def patches(self) -> "Patches":
        """pi 1.x's prompt patches in the profile's words (``runtime.record_system_prompt``):
        :class:`Patches`."""
        return Patches(self)

    def gather(self, request: RenderRequest | None = None) -> Gathered:
        """The render inputs ``request`` names (files read, discovery when asked), as
        ``pipeline render`` gathers them (:func:`pipeline.prompt.inputs.gather`)."""
        from pipeline.prompt.inputs import RenderRequest, gather

        return gather(self.render_plan, request or RenderRequest())

    # ------------------------------------------------------------------ templates

    def load_templates(
        self, cwd: PathLike | None = None, *, agent: PathLike | None = None,
        home: PathLike | None = None, trusted: bool = True,
    ) -> LoadedTemplates:
        """The prompt templates ``templates.sources`` names, for ``cwd`` (default: the
        current directory); ``trusted=False`` skips ``project`` (see
        :func:`pipeline.templates.discovery.load_profile_templates`)."""
        from pipeline.templates.discovery import load_profile_templates

        def path(value: PathLike | None) -> str | None:
            return None if value is None else os.fspath(value)

        return load_profile_templates(
            self.run_plan.templates, self.run_plan.templates.sources, path(cwd), agent=path(agent), home=path(home),
            trusted=trusted,
        )

    def expand(self, text: str, templates: Iterable[PromptTemplate]) -> str:
        """``/name args`` expanded with ``templates``, the arguments split by the profile's
        ``templates.argument_splitting``; any other input unchanged."""
        from pipeline.templates.invoke import expand_input

        return expand_input(text, templates, self.run_plan.templates.argument_splitting)

    def window_problems(self, context_window: int, name: str | None = None) -> list[Problem]:
        """The compaction rules checked against the context window of the model a runtime
        actually uses (the profile's ``summarizer.context_window`` is checked on compiling):
        ``keep_recent_tokens`` at or over ``context_window - reserve_tokens`` means every
        turn compacts and finds nothing to summarize. ``name`` says where the window came
        from in the messages (default: ``the model window``). Errors and warnings, located
        at the profile's keys; nothing is raised."""
        from pipeline.checks import window_problems

        return window_problems(self.profile, self.source_map, context_window, name or "the model window")

    def template_problems(self) -> list[Problem]:
        """Findings of the template stage for the files ``templates.sources`` lists (:func:`template_problems`)."""
        return template_problems(self)

    # ------------------------------------------------------------------ compaction

    def summary_client(self, **endpoint: Any) -> SummaryClient:
        """The client of the profile's ``summarizer``: offline, or an HTTP client (key read per call) with
        the block's bounds; ``endpoint`` (``provider``, ``model``, ``base_url``, ``api_key_env``, ``anonymous``...)
        replaces the block's (``pipeline run`` summarizes with the chat model). One factory:
        :mod:`pipeline.llm.clients`."""
        if endpoint.get("provider") not in (None, "offline"):
            from pipeline.llm.clients import summarizer_client

            return summarizer_client(self.profile.summarizer, **endpoint)
        from pipeline.compaction.engine import make_summary_client

        return make_summary_client(self.profile, self.profile.summarizer)

    def chat_client(self, model: ModelInfo, wire: str = "openai", **options: Any) -> ChatClient:
        """The agent's model client for ``model`` (a :class:`pipeline.runtime.host.ModelInfo`) with the profile's
        texts and the ``summarizer`` block's bounds (timeout, deadline per call, response size);
        ``options``: ``base_url``, ``api_key_env``, ``anonymous``, ``env``..."""
        from pipeline.runtime.loop import model_client

        return model_client(self.run_plan, model, wire, **options)

    def compaction_settings(self, model: ModelSpec = None) -> CompactionSettings:
        """The ``compaction`` block as it applies to ``model`` (a :data:`ModelSpec`): its
        ``compaction.model_overrides`` entry over the block, or the block itself."""
        return self.profile.compaction.for_model(*ModelRef.of(model))

    def plan_compaction(
        self, session: SessionFile | PathLike, overrides: Overrides | None = None, *,
        origin: Mapping[str, str] | None = None, keep_recent_tokens: int | None = None,
        reserve_tokens: int | None = None, model: ModelSpec = None,
    ) -> CompactionPlan | NothingToCompact:
        """What compacting the session's current branch would do (nothing is called or
        written), with the settings of ``model`` (:meth:`compaction_settings`); ``overrides`` as
        for :func:`compile_profile` (``keep_recent_tokens`` and ``reserve_tokens`` are short for
        ``compaction.*``)."""
        from pipeline.compaction.engine import plan_session

        pipeline = self.with_overrides(_compaction(overrides, keep_recent_tokens, reserve_tokens), origin)
        return plan_session(_session(session), pipeline.compaction_settings(model))

    def would_compact(self, session: SessionFile | PathLike, window: int, *, model: ModelSpec = None) -> TriggerAnswer:
        """Would the trigger of ``model``'s settings fire on the session's current branch, in a context
        window of ``window`` tokens? (the estimate, the threshold and the rule; nothing is written)"""
        from pipeline.compaction.tokens import context_tokens_newest_first
        from pipeline.compaction.triggers import would_trigger
        from pipeline.session.projection import build_session_context

        settings = self.compaction_settings(model)
        messages = build_session_context(_session(session)).messages
        return would_trigger(context_tokens_newest_first(reversed(messages), settings), window, settings)

    def summary_requests(
        self, plan: CompactionPlan, *, instructions: str | None = None, thinking_level: str | None = None,
    ) -> list[Mapping[str, object]]:
        """The request bodies, as the summarizer's provider would receive them, of every
        call compacting ``plan`` makes (history, then turn prefix); nothing is sent."""
        from pipeline.compaction.engine import planned_requests

        client = self.summary_client()
        requests = planned_requests(
            plan, self.profile, self.profile.summarizer, custom_instructions=instructions, thinking_level=thinking_level
        )
        return [client.build_body(request) for request in requests]

    def compact(
        self, session: SessionFile | PathLike, *, model: ModelSpec = None, window: int = 0,
        strategy: str | None = None, instructions: str | None = None, client: SummaryClient | None = None,
        overrides: Overrides | None = None, origin: Mapping[str, str] | None = None,
        progress: Callable[[str], None] | None = None, thinking_level: str | None = None,
    ) -> CompactionOutcome:
        """Compact the current branch the one way every caller does (:func:`pipeline.compaction.driver.compact`):
        the settings of ``model`` (``"provider/id"``, a ``(provider, id)`` pair or an object with
        ``provider`` and ``id``, such as :class:`pipeline.runtime.host.ModelInfo`: its
        ``compaction.model_overrides`` entry applies), their ``compaction.strategy`` (or
        ``strategy``: summarize, mask_tool_results, hybrid; ``window`` is the model's context
        window, which decides ``hybrid``'s summary; default: a model object's ``context_window``).
        ``instructions`` are the caller's extra
        focus; ``client`` defaults to the profile's ``summarizer``; ``overrides`` as for
        :func:`compile_profile`. Returns a :class:`~pipeline.compaction.driver.CompactionOutcome`: the
        entry written, the mask applied, or nothing and why."""
        from pipeline.compaction.driver import compact

        pipeline = self.with_overrides(overrides, origin)
        provider, model_id = ModelRef.of(model)
        window = window or getattr(model, "context_window", 0) or 0
        return compact(
            _session(session), pipeline.profile, client or pipeline.summary_client(), provider=provider,
            model=model_id, window=window, strategy=strategy, instructions=instructions, progress=progress,
            thinking_level=thinking_level,
        )

    def navigate(
        self, session: SessionFile | PathLike, target_id: str, client: SummaryClient | None = None, *,
        instructions: str | None = None, replace_instructions: bool = False,
        progress: Callable[[str], None] | None = None,
    ) -> Navigated:
        """Move the session to ``target_id`` with a summary of the branch left behind (pi's ``/tree``)."""
        from pipeline.compaction.engine import branch_session

        return branch_session(
            _session(session), self.profile, client or self.summary_client(), target_id,
            custom_instructions=instructions, replace_instructions=replace_instructions, progress=progress,
        )

    # ------------------------------------------------------------------ runtime

    def conversation(
        self, session: SessionFile | PathLike, *, model: ModelInfo, cwd: PathLike, tools: Sequence[Tool] = (),
        summarizer: SummaryClient | None = None, templates: Sequence[PromptTemplate] = (),
        skills: Sequence[Skill] = (), context_files: Sequence[ContextFile] = (), custom_prompt: str | None = None,
        append_prompts: Sequence[str] = (), guidelines: Sequence[str] = (), sections: Mapping[str, str] | None = None,
        input_hooks: Sequence[InputHook] = (), before_agent_start: Sequence[BeforeAgentStart] = (),
        listener: Listener | None = None, clock: Callable[[], float] | None = None, thinking_level: str | None = None,
    ) -> Conversation:
        """An agent conversation on ``session`` (a session file or its path) with this profile, for
        ``model`` with ``tools`` run in ``cwd``; the other options are
        :class:`pipeline.runtime.conversation.Conversation`'s (the summarizer, prompt templates, discovered skills and
        context files, a host's prompt parts, hooks, the listener)."""
        from pipeline.runtime.conversation import Conversation

        extra: dict[str, Any] = {} if clock is None else {"clock": clock}
        return Conversation.open(
            self.run_plan, _session(session), model=model, tools=tools, cwd=os.fspath(cwd), summarizer=summarizer,
            templates=templates, skills=skills, context_files=context_files, custom_prompt=custom_prompt,
            append_prompts=append_prompts, guidelines=guidelines, sections=sections or {}, input_hooks=input_hooks,
            before_agent_start=before_agent_start, listener=listener, thinking_level=thinking_level, **extra,
        )

    def agent(
        self, session: SessionFile | PathLike, *, model: str | ModelInfo | None = None,
        tools: Sequence[str | Tool] = DEFAULT_TOOLS, cwd: PathLike | None = None, wire: str = "openai",
        base_url: str | None = None, api_key: str | None = None, api_key_env: str | None = None,
        anonymous: bool | None = None, context_window: int | None = None, max_tokens: int | None = None,
        mid_conversation_system: bool = False, discover: bool = True, templates: bool = True,
        listener: Listener | None = None, client: ModelClient | None = None,
        summarizer: SummaryClient | None = None, thinking_level: str | None = None,
    ) -> Agent:
        """The reference :class:`pipeline.runtime.loop.Agent`, wired as ``pipeline run`` wires it.

        ``model``: a name (default ``summarizer.model``; its window and output limit default to the
        ``summarizer`` block's, see :meth:`model_info`) or a :class:`~pipeline.runtime.host.ModelInfo`, spoken
        to in ``wire`` (``openai``/``anthropic``) at ``base_url``. The key: ``api_key`` (the value), or
        the environment variable ``api_key_env`` (default: the provider's), read per call; ``anonymous``
        sends none when it is unset (the default with a ``base_url`` and no key named: a local server).
        ``client`` replaces the model client. ``tools``: built-in tools by name
        (:func:`builtin_tool_names`) over ``cwd`` (default: the current directory), or
        :class:`~pipeline.runtime.host.Tool` objects. The chat model's endpoint summarizes too unless
        ``summarizer`` is given. ``session``: a session file, or a path (an existing file is continued,
        a missing or empty one starts a new session). ``discover`` reads skills, context files and
        SYSTEM.md as pi does; ``templates`` loads the profile's prompt templates; ``listener`` is given
        every event. A missing key raises :class:`pipeline.llm.errors.LLMAuthError` before any file is
        created."""
        from pipeline.wiring import AgentOptions, build_agent

        options = AgentOptions(
            model=model, tools=tools, cwd=cwd, wire=wire, base_url=base_url, api_key=api_key, api_key_env=api_key_env,
            anonymous=anonymous, context_window=context_window, max_tokens=max_tokens,
            mid_conversation_system=mid_conversation_system, discover=discover, templates=templates,
            listener=listener, client=client, summarizer=summarizer, thinking_level=thinking_level)
        return build_agent(self.run_plan, session, options)

    def model_info(
        self, model: str | None = None, wire: str = "openai", *, context_window: int | None = None,
        max_tokens: int | None = None, mid_conversation_system: bool = False,
    ) -> ModelInfo:
        """The :class:`~pipeline.runtime.host.ModelInfo` of ``model`` (default: ``summarizer.model``) on ``wire``:
        its window defaults to ``summarizer.context_window``, else ``compaction.branch.default_context_window``,
        its output limit to ``summarizer.max_tokens`` (:func:`pipeline.wiring.model_info`)."""
        from pipeline.wiring import model_info

        return model_info(self.run_plan, model, wire, context_window=context_window, max_tokens=max_tokens,
                          mid_conversation_system=mid_conversation_system)

    # ------------------------------------------------------------------ session

    def project(
        self, session: SessionFile | PathLike | SessionTree | Sequence[Entry], leaf: str | None | object = _CURRENT,
        *, drop_failed: bool = False,
    ) -> LlmContext:
        """The LLM context of ``session`` (a session file or its path, a tree, entries) at
        ``leaf`` (default: the current leaf; ``None``: empty), with the profile's words;
        ``drop_failed`` leaves out failed assistant turns (see :func:`pipeline.session.build_context`)."""
        from pipeline.session import LAST, build_context

        texts = self.run_plan.context
        runtime = self.run_plan.runtime  # a profile that records the prompt or edits the context reads pi 1.x's projection
        return build_context(_session(session), texts, LAST if leaf is _CURRENT else leaf, drop_failed=drop_failed,
                             projection=runtime is not None and bool(runtime.record_system_prompt or runtime.context_edits))


def _compaction(overrides: Overrides | None, keep: int | None, reserve: int | None) -> dict[str, Any]:
    out = dict(overrides or {})
    for name, value in (("keep_recent_tokens", keep), ("reserve_tokens", reserve)):
        if value is not None:
            out[f"compaction.{name}"] = value
    return out


def key_variables() -> tuple[str, ...]:
    """Every provider's API-key variable (:data:`pipeline.llm.providers.KEY_VARIABLES`)."""
    from pipeline.llm.providers import KEY_VARIABLES

    return KEY_VARIABLES


def _session(session: Any) -> Any:
    """A session argument: a path is opened as a :class:`~pipeline.session.SessionFile`."""
    if isinstance(session, (str, os.PathLike)):
        from pipeline.session import SessionFile

        return SessionFile.open(session)
    return session


class Patches:
    """pi 1.x's prompt patches for a :class:`Pipeline` (``Pipeline.patches``): what changed between two
    system prompts, framed, replayed and viewed in the profile's words (``system_prompt.patch``, ``join``)."""

    def __init__(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline

    def section_patch(
        self, previous: RenderContext | Mapping[str, str], current: RenderContext | Mapping[str, str], *,
        catalog: bool = True,
    ) -> dict[str, str | None] | None:
        """What a model holding ``previous`` needs to have ``current``: changed and added sections in
        ``current``'s order, then removed ones (``None``) in ``previous``'s order; ``None`` when nothing
        changed. Either side is a render context or a record (:meth:`Pipeline.system_sections`)."""
        from pipeline.prompt import section_patch

        return section_patch(self._record(previous, catalog), self._record(current, catalog))

    def frame_patch(self, patch: Mapping[str, str | None]) -> str:
        """``patch`` as a mid-conversation system message, in the profile's words (``system_prompt.patch``)."""
        from pipeline.prompt import frame_patch

        texts = self.pipeline.run_plan.patch
        if texts is None:
            raise ValueError(f"profile {self.pipeline.profile.name!r} sets no system_prompt.patch texts to frame a patch with")
        return frame_patch(patch, texts)

    def replay_prompt(self, leading: Mapping[str, str], patches: Iterable[Mapping[str, str | None] | None]) -> str:
        """The one system prompt for a model without mid-conversation system messages: ``leading``
        with every patch applied in turn (new names last), joined by the profile's ``join``."""
        from pipeline.session.system import SystemState

        return SystemState(sections=leading).patched(patches).prompt(self.pipeline.profile.system_prompt.join)

    def system_view(
        self, leading: Mapping[str, str], patches: Iterable[Mapping[str, str | None] | None], *,
        mid_conversation: bool,
    ) -> tuple[str, tuple[str, ...]]:
        """What a provider is sent for a conversation's system messages: the replay alone
        (``mid_conversation=False``), or the unchanged leading prompt and each patch framed
        in the profile's words (:func:`pipeline.prompt.system_view`)."""
        from pipeline.prompt import system_view

        plan = self.pipeline.run_plan
        return system_view(leading, patches, mid_conversation=mid_conversation, texts=plan.patch, join=plan.render.join)

    def _record(self, side: RenderContext | Mapping[str, str], catalog: bool) -> Mapping[str, str]:
        if isinstance(side, Mapping):
            return side
        return self.pipeline.system_sections(side, catalog=catalog) or {}


# --------------------------------------------------------------------------- prompt templates


def template_problems(pipeline: "CompiledProfile | Pipeline") -> list[Problem]:
    """Findings of :func:`pipeline.templates.analysis.analyze` for the template files a profile
    lists explicitly in ``templates.sources`` (``global``/``project`` depend on where the
    agent runs, so they are not checked here). Missing paths are already compile warnings.
    """
    from pipeline.model.templates import source_path
    from pipeline.source.locate import template_source_path
    from pipeline.templates.discovery import load_sources, profile_sources

    problems: list[Problem] = []
    for i, source in enumerate(pipeline.profile.templates.sources):
        if source_path(source) is None or source in pipeline.profile.templates.sources[:i]:
            continue
        path = template_source_path(pipeline.profile, pipeline.source_map, i)
        if not path.exists():
            continue
        try:
            loaded = load_sources(profile_sources([pipeline.template_sources[i]], pipeline.profile.templates),
                                  skip_exported=True)
            found = list(loaded.problems) + [p for t in loaded.templates for p in t.problems()]
        except Exception as err:  # a bug in the template stage must not hide the other results
            where = pipeline.source_map.value_location(("templates", "sources", i))
            detail = " ".join(str(err).split())
            message = f"could not check the templates in {path}: internal error ({type(err).__name__}: {detail})"
            found = [Problem(message, where, key=f"templates.sources.{i}", severity="warning", code="profile.internal-error")]
        problems.extend(_relative(p) for p in found)
    return problems


def _relative(problem: Problem) -> Problem:
    from pipeline.resources import display_path

    loc = problem.location
    if loc is None or loc.file is None or not os.path.isabs(loc.file):
        return problem
    return problem.at(Location(display_path(Path(loc.file)), loc.line, loc.col))
