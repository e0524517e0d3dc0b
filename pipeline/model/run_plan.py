"""The run plan: what running an agent reads of a profile, as plain data.

A :class:`RunPlan` is the compiled form of everything the agent runtime reads while it
runs (``pipeline run``, ``pipeline chat``, :class:`~pipeline.runtime.conversation.Conversation`, the
adapters' bridge): the system prompt's render plan and patch words, the ``runtime`` texts
and switches, the retry settings, the compaction *check* (per model), the summarizer's
settings, the template settings, the context texts. It is made of frozen, slotted
dataclasses, tuples and :class:`~pipeline.model.text.Text` values, none of them pydantic
models, so a plan read from the head of the compiled-profile cache
(:func:`pipeline.profile_cache.cached_plan`) starts a run without defining the profile's
model classes (the warm start of ``pipeline run``), as the render plan starts ``render``.

:meth:`RunPlan.of` is the one lowering from a validated profile; the compiled profile holds
its plan (:attr:`pipeline.compiler.CompiledProfile.run_plan`). The pydantic models are the
profile language; the plan is the runtime's input. What a run needs of the whole profile
only when it compacts (the summary requests, the planner) it gets from
:meth:`RunPlan.profile`, which loads the profile on demand.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, Protocol, TypeVar, Union

from pipeline.model.ref import ModelRef
from pipeline.model.render_plan import RenderPlan
from pipeline.model.text import Text

if TYPE_CHECKING:  # the profile language's models: a plan read from the cache defines none of them
    from pipeline.model.profile import Profile

__all__ = [
    "CompactionCheck", "ContextTexts", "Estimating", "Firing", "PatchTexts", "RetrySettings", "RunPlan", "RuntimeTexts",
    "SkillTexts",
    "SummarizerSettings", "TemplateSettings", "TemplateSource", "ToolErrorTexts", "ToolOutputTexts", "WireTexts",
]

T = TypeVar("T")


def _lowered(cls: type[T], block: Any, **given: Any) -> T:
    """``cls`` with each of its fields read from ``block``'s attribute of the same name (``given`` first)."""
    values = {f.name: given[f.name] if f.name in given else getattr(block, f.name) for f in fields(cls)}  # type: ignore[arg-type]
    return cls(**values)


# --------------------------------------------------------------------------- texts


@dataclass(frozen=True, slots=True)
class SkillTexts:
    """``runtime.skill``: how ``/skill:name args`` becomes the user message."""

    open: Text
    close: Text
    args: Text


@dataclass(frozen=True, slots=True)
class ToolErrorTexts:
    """``runtime.tool_errors``: tool results the runtime writes itself."""

    unknown: Text
    invalid_arguments: Text
    failed: Text


@dataclass(frozen=True, slots=True)
class WireTexts:
    """``runtime.wire``: texts the message conversion inserts where a provider needs one."""

    orphan_tool_result: Text
    user_image_omitted: Text
    tool_image_omitted: Text
    tool_image_only: Text
    empty_tool_output: Text
    tool_images_intro: Text

    def rendered(self) -> dict[str, str]:
        """Each text rendered, by name (:class:`pipeline.llm.wire.ConvertTexts`' keywords)."""
        return {f.name: getattr(self, f.name).render() for f in fields(self)}


@dataclass(frozen=True, slots=True)
class ToolOutputTexts:
    """``runtime.tool_output``: the built-in tools' result texts."""

    not_found: Text
    not_a_file: Text
    not_a_directory: Text
    outside: Text
    not_regular: Text
    too_large: Text
    unreadable: Text
    empty_directory: Text
    no_matches: Text
    invalid_pattern: Text
    truncated: Text


@dataclass(frozen=True, slots=True)
class RuntimeTexts:
    """The ``runtime`` block: what the runtime writes or shows itself, and pi 1.x's switches."""

    aborted: Text
    record_system_prompt: bool
    context_edits: bool
    record_thinking_level: bool
    skill: SkillTexts
    tool_errors: ToolErrorTexts
    wire: WireTexts
    tool_output: ToolOutputTexts

    @classmethod
    def of(cls, runtime: Any) -> "RuntimeTexts":
        """The plan of a validated ``runtime`` block (:class:`~pipeline.model.runtime.Runtime`)."""
        return _lowered(cls, runtime, skill=_lowered(SkillTexts, runtime.skill),
                        tool_errors=_lowered(ToolErrorTexts, runtime.tool_errors),
                        wire=_lowered(WireTexts, runtime.wire),
                        tool_output=_lowered(ToolOutputTexts, runtime.tool_output))


@dataclass(frozen=True, slots=True)
class PatchTexts:
    """``system_prompt.patch``: how a patch of named sections is framed mid-conversation."""

    changed: Text
    removed: Text
    separator: str = "\n\n"


@dataclass(frozen=True, slots=True)
class ContextTexts:
    """The words the context projection adds around session content: the summary wrappers
    (``summary.projection``) and a user's shell command (``context.bash_execution``).
    Strings given are parsed into :class:`~pipeline.model.text.Text` (``${var}``).

    Variables: ``bash_ran`` → ``command``; ``bash_output`` → ``output``; ``bash_exit_code``
    → ``code``; ``bash_truncated`` → ``path``; the others take none."""

    compaction_open: Text
    compaction_close: Text
    branch_open: Text
    branch_close: Text
    bash_ran: Text
    bash_output: Text
    bash_no_output: Text
    bash_cancelled: Text
    bash_exit_code: Text
    bash_truncated: Text

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, Text):
                object.__setattr__(self, f.name, Text(value))

    @classmethod
    def from_profile(cls, profile: Any) -> "ContextTexts":
        """The texts of a validated :class:`~pipeline.model.profile.Profile`."""
        projection, bash = profile.summary.projection, profile.context.bash_execution
        return cls(
            compaction_open=projection.compaction.open, compaction_close=projection.compaction.close,
            branch_open=projection.branch.open, branch_close=projection.branch.close,
            bash_ran=bash.ran, bash_output=bash.output, bash_no_output=bash.no_output,
            bash_cancelled=bash.cancelled, bash_exit_code=bash.exit_code, bash_truncated=bash.truncated,
        )


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True, slots=True)
class RetrySettings:
    """pi's ``retry`` settings (``settings.json``; docs/pi-rules.md#token-accounting) with pi's defaults; a
    profile's ``retry`` block gives them (:attr:`RunPlan.retry`)."""

    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    max_agent_delay_ms: Optional[int] = None  # pi 1.x caps the wait (60000); 0.84.0 does not

    def delay_ms(self, attempt: int) -> float:
        """Wait before retry ``attempt`` (1-based): ``base_delay_ms · 2^(attempt−1)``, at most
        ``max_agent_delay_ms`` when that is set."""
        delay = self.base_delay_ms * 2 ** (attempt - 1)
        return delay if self.max_agent_delay_ms is None else min(delay, self.max_agent_delay_ms)


class Estimating(Protocol):
    """What a token estimate reads of compaction settings (a :class:`CompactionCheck` or the
    profile's ``compaction`` block)."""

    @property
    def chars_per_token(self) -> int: ...

    @property
    def image_chars(self) -> int: ...

    @property
    def estimate_on(self) -> str: ...


class Firing(Estimating, Protocol):
    """What deciding that compaction fires reads (a :class:`CompactionCheck` or the ``compaction`` block)."""

    @property
    def enabled(self) -> bool: ...

    def threshold(self, context_window: int) -> float: ...


@dataclass(frozen=True, slots=True)
class CompactionCheck:
    """What the compaction check reads of ``compaction`` (pi's ``_checkCompaction``): whether it is
    on, when it fires (``trigger``: ``reserve``, ``percent`` or ``tokens`` with its number), the
    overflow retries and the estimate's settings; ``overrides``: each ``model_overrides`` key's
    own check, its keys laid over these (:meth:`for_model`). The defaults are the block's."""

    enabled: bool = True
    trigger: str = "reserve"
    limit: float = 16384
    overflow_retries: int = 1
    chars_per_token: int = 4
    image_chars: int = 4800
    estimate_on: str = "messages"
    overrides: tuple[tuple[str, "CompactionCheck"], ...] = ()

    @classmethod
    def of(cls, compaction: Any) -> "CompactionCheck":
        """The check of a validated ``compaction`` block (:class:`~pipeline.model.compaction.Compaction`)."""
        overrides = tuple((key, cls._one(compaction.for_model(*key.partition("/")[::2])))
                          for key in compaction.model_overrides)
        return replace(cls._one(compaction), overrides=overrides)

    @classmethod
    def _one(cls, compaction: Any) -> "CompactionCheck":
        trigger = compaction.trigger
        kind, limit = ("reserve", compaction.reserve_tokens) if trigger is None else next(
            (name, getattr(trigger, key)) for name, key in _TRIGGERS if hasattr(trigger, key))
        return _lowered(cls, compaction, trigger=kind, limit=limit, overrides=())

    def for_model(self, provider: Optional[str], model: Optional[str]) -> "CompactionCheck":
        """The check of ``provider/model``: its ``model_overrides`` entry's, else this one."""
        key = ModelRef(provider, model).key
        return next((check for name, check in self.overrides if name == key), self) if key is not None else self

    def threshold(self, context_window: int) -> float:
        """Compaction fires above this many tokens (pi's rule: ``window - reserve_tokens``)."""
        if self.trigger == "tokens":
            return self.limit
        if self.trigger == "percent":
            return context_window * self.limit / 100
        return context_window - self.limit

    def fires(self, tokens: Union[int, float], context_window: int) -> bool:
        """Whether compaction fires at ``tokens`` (``enabled`` and ``tokens > threshold``)."""
        return self.enabled and tokens > self.threshold(context_window)


#: The ``compaction.trigger`` forms: the check's name for each and the key that holds its number.
_TRIGGERS = (("reserve", "reserve_tokens"), ("percent", "percent_of_window"), ("tokens", "tokens"))


@dataclass(frozen=True, slots=True)
class SummarizerSettings:
    """The ``summarizer`` block: the model a run talks to by default, and the bounds of every call."""

    provider: str = "offline"
    model: Optional[str] = None
    base_url: Optional[str] = None
    api_key_env: Optional[str] = None
    max_tokens: Optional[int] = None
    reasoning: bool = False
    reasoning_effort: Optional[str] = None
    context_window: Optional[int] = None
    timeout_s: float = 120.0
    max_retries: int = 3
    call_deadline_s: float = 300.0
    compaction_deadline_s: float = 900.0
    max_response_bytes: int = 8 * 1024 * 1024
    max_chars_per_token: int = 16


@dataclass(frozen=True, slots=True)
class TemplateSource:
    """A ``{dialect, path}`` entry of ``templates.sources`` (a path already resolved)."""

    dialect: str
    path: Optional[str] = None


@dataclass(frozen=True, slots=True)
class TemplateSettings:
    """The ``templates`` block: ``sources`` in order (keywords as written, paths resolved against
    the file that lists them), the two directories, and how arguments are split."""

    sources: tuple[Union[str, Path, TemplateSource], ...]
    global_dir: str
    project_dir: str
    argument_splitting: str

    @classmethod
    def of(cls, templates: Any, sources: Optional[tuple[Any, ...]] = None) -> "TemplateSettings":
        """The plan of a validated ``templates`` block; ``sources``: its entries resolved (default: as written)."""
        given = templates.sources if sources is None else sources
        return _lowered(cls, templates, sources=tuple(
            s if isinstance(s, (str, Path)) else TemplateSource(s.dialect, None if s.path is None else str(s.path))
            for s in given))


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True, slots=True)
class RunPlan:
    """What running an agent reads (see the module's docstring).

    ``runtime`` is None for a profile without a ``runtime`` block (it cannot run a conversation);
    ``default_context_window`` is ``compaction.branch.default_context_window``, the window of a
    model nobody named. ``load_profile`` gives the whole profile on demand (never pickled)."""

    origin: str
    render: RenderPlan
    patch: Optional[PatchTexts]
    runtime: Optional[RuntimeTexts]
    retry: RetrySettings
    compaction: CompactionCheck
    summarizer: SummarizerSettings
    default_context_window: int
    templates: TemplateSettings
    context: ContextTexts
    load_profile: Optional[Callable[[], Profile]] = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, profile: Profile, *, origin: str = "<profile>", template_sources: Optional[tuple[Any, ...]] = None,
           render: Optional[RenderPlan] = None) -> "RunPlan":
        """The one lowering: the plan of a validated :class:`~pipeline.model.profile.Profile` (which
        :meth:`profile` then returns). ``template_sources``: ``templates.sources`` resolved
        (:attr:`pipeline.compiler.CompiledProfile.template_sources`; default: as written)."""
        system_prompt, patch = profile.system_prompt, profile.system_prompt.patch
        return cls(
            origin=origin,
            render=render if render is not None else RenderPlan.of(system_prompt),
            patch=None if patch is None else _lowered(PatchTexts, patch),
            runtime=None if profile.runtime is None else RuntimeTexts.of(profile.runtime),
            retry=_lowered(RetrySettings, profile.retry),
            compaction=CompactionCheck.of(profile.compaction),
            summarizer=_lowered(SummarizerSettings, profile.summarizer),
            default_context_window=profile.compaction.branch.default_context_window,
            templates=TemplateSettings.of(profile.templates, template_sources),
            context=ContextTexts.from_profile(profile),
            load_profile=lambda: profile,
        )

    def with_profile(self, load: Callable[[], Profile]) -> "RunPlan":
        """This plan, its whole profile loaded by ``load`` when asked for (a plan read from the cache)."""
        return replace(self, load_profile=load)

    def profile(self) -> Profile:
        """The whole :class:`~pipeline.model.profile.Profile` this plan was lowered from, loaded now (what a
        compaction or a branch summary reads)."""
        if self.load_profile is None:
            raise RuntimeError("this run plan was read without its profile: give one with with_profile()")
        return self.load_profile()

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled without ``load_profile`` (the cache's head holds plain data only)."""
        return (RunPlan, tuple(getattr(self, f.name) for f in fields(self) if f.name != "load_profile"))
