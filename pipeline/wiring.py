"""Agent wiring: the reference agent as ``pipeline run`` wires it, from a typed options object.

:meth:`pipeline.Pipeline.agent` hands its keywords here as one :class:`AgentOptions`;
:func:`build_agent` makes the model (:func:`model_info`), the endpoint (:class:`Endpoint`: a
key given as a value is read from a mapping of its own, under the provider's variable from
:data:`pipeline.llm.providers.PROVIDERS`), the chat and summary clients, the tools, the
session (:func:`pipeline.runtime.driver.open_session`), what pi discovers in the working
directory, and the :class:`~pipeline.runtime.conversation.Conversation` the
:class:`~pipeline.runtime.loop.Agent` drives. Below the facade, above the stages: it reads the
profile's :class:`~pipeline.model.run_plan.RunPlan` (a compiled profile's, or the one a warm
``pipeline run`` reads from the cache) and calls the stages, never the facade.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, Union

from pipeline.errors import PipelineError, Problem

from pipeline.model.run_plan import RunPlan

if TYPE_CHECKING:  # pragma: no cover
    from pipeline.llm.types import SummaryClient
    from pipeline.runtime.loop import Agent
    from pipeline.runtime.events import Listener
    from pipeline.runtime.host import ModelInfo, Tool
    from pipeline.runtime.loop import ModelClient
    from pipeline.session import SessionFile

__all__ = ["DEFAULT_TOOLS", "AgentOptions", "Endpoint", "build_agent", "builtin_tool_names", "model_info"]

#: The tools ``Pipeline.agent`` offers unless told: the read-only ones (``bash``, ``edit``, ``write`` are opt-in).
DEFAULT_TOOLS = ("read", "ls", "find", "grep")


def builtin_tool_names() -> tuple[str, ...]:
    """The names ``Pipeline.agent(tools=...)`` knows: the read-only tools, then the opt-in ones."""
    from pipeline.runtime.tools import OPT_IN, READ_ONLY

    return (*READ_ONLY, *OPT_IN)


@dataclass(frozen=True, kw_only=True)
class AgentOptions:
    """What :meth:`pipeline.Pipeline.agent` takes besides the session (see its docstring)."""

    model: Union[str, "ModelInfo", None] = None
    tools: Sequence[Union[str, "Tool"]] = DEFAULT_TOOLS
    cwd: Union[str, "os.PathLike[str]", None] = None
    wire: str = "openai"
    base_url: Optional[str] = None
    api_key: Optional[str] = field(default=None, repr=False)
    api_key_env: Optional[str] = None
    anonymous: Optional[bool] = None
    context_window: Optional[int] = None
    max_tokens: Optional[int] = None
    mid_conversation_system: bool = False
    discover: bool = True
    templates: bool = True
    listener: Optional["Listener"] = None
    client: Optional["ModelClient"] = None
    summarizer: Optional["SummaryClient"] = None
    thinking_level: Optional[str] = None

    @property
    def folder(self) -> str:
        """The working directory, absolute (default: the current one)."""
        return os.path.abspath(os.fspath(self.cwd if self.cwd is not None else os.getcwd()))


@dataclass(frozen=True)
class Endpoint:
    """Where a model is reached: ``base_url``, the key's variable, whether no key is sent, and
    ``env``, the mapping a key given as a value is read from (``None``: the environment)."""

    base_url: Optional[str] = None
    api_key_env: Optional[str] = None
    anonymous: bool = False
    env: Optional[Mapping[str, str]] = field(default=None, repr=False)

    @classmethod
    def of(cls, options: AgentOptions) -> "Endpoint":
        """A key given as a value is read under the provider's variable (or ``api_key_env``); with
        a ``base_url`` and no key named, no key is sent (a local server) unless ``anonymous`` says."""
        from pipeline.llm.providers import key_variable

        env, name = None, options.api_key_env
        if options.api_key is not None:
            name = options.api_key_env or key_variable(options.wire)
            env = {name: options.api_key}
        anonymous = options.anonymous if options.anonymous is not None else (
            options.base_url is not None and options.api_key is None and options.api_key_env is None)
        return cls(options.base_url, name, anonymous, env)

    def client_options(self) -> dict[str, Any]:
        """The options of the clients' factories (``env`` only when a key was given as a value)."""
        options: dict[str, Any] = {"base_url": self.base_url, "api_key_env": self.api_key_env,
                                   "anonymous": self.anonymous}
        if self.env is not None:
            options["env"] = dict(self.env)
        return options


def model_info(plan: RunPlan, model: Optional[str] = None, wire: str = "openai", *,
               context_window: Optional[int] = None, max_tokens: Optional[int] = None,
               mid_conversation_system: bool = False) -> ModelInfo:
    """The :class:`~pipeline.runtime.host.ModelInfo` of ``model`` (default: ``summarizer.model``) on ``wire``:
    its window defaults to ``summarizer.context_window``, else ``compaction.branch.default_context_window``,
    its output limit to ``summarizer.max_tokens``."""
    from pipeline.llm.providers import api_name
    from pipeline.runtime.host import ModelInfo

    summary = plan.summarizer
    name = model or summary.model
    if not name:
        raise PipelineError(Problem("no model given", key="model", hint="pass a model or set summarizer.model",
                                    code="provider.config"))
    window = context_window or summary.context_window or plan.default_context_window
    return ModelInfo(id=name, provider=wire, api=api_name(wire), context_window=window,
                     max_tokens=max_tokens or summary.max_tokens or 0, mid_conversation_system=mid_conversation_system)


def build_agent(plan: RunPlan, session: Union["SessionFile", str, "os.PathLike[str]"],
                options: AgentOptions) -> Agent:
    """The reference agent on ``session`` wired as ``options`` say (:meth:`pipeline.Pipeline.agent`).
    A missing key raises :class:`pipeline.llm.errors.LLMAuthError` before any file is created."""
    from pipeline.llm.clients import summarizer_client
    from pipeline.runtime.conversation import Conversation
    from pipeline.runtime.driver import open_session
    from pipeline.runtime.loop import Agent, model_client

    folder, wire = options.folder, options.wire
    info = options.model if options.model is not None and not isinstance(options.model, str) else model_info(
        plan, options.model, wire, context_window=options.context_window, max_tokens=options.max_tokens,
        mid_conversation_system=options.mid_conversation_system)
    endpoint = Endpoint.of(options).client_options()
    chat = options.client
    if chat is None:
        chat = model_client(plan, info, wire, **endpoint)
        chat.check_ready()  # a missing key is raised before the session is touched
    toolset = _tools(plan, options.tools, folder)
    opened = open_session(session, folder)
    summarizer = options.summarizer or summarizer_client(plan.summarizer, provider=wire, model=info.id, **endpoint)
    conversation = Conversation.open(
        plan, opened, model=info, tools=toolset, cwd=folder, thinking_level=options.thinking_level,
        summarizer=summarizer, templates=_templates(plan, folder) if options.templates else (),
        **_discovered(folder, options.discover),
    )
    return Agent(conversation, chat, wire=wire, listener=options.listener)


def _tools(plan: RunPlan, tools: Sequence[Union[str, "Tool"]], cwd: str) -> list[Tool]:
    """Built-in tools by name (in ``cwd``, the profile's texts) and a host's own, in the order given."""
    from pipeline.runtime.tools import builtin_tools

    names = [t for t in tools if isinstance(t, str)]
    built = iter(builtin_tools(names, cwd, plan) if names else [])
    return [next(built) if isinstance(t, str) else t for t in tools]


def _templates(plan: RunPlan, cwd: str) -> tuple[Any, ...]:
    """The prompt templates ``templates.sources`` names, for ``cwd``."""
    from pipeline.templates.discovery import load_profile_templates

    loaded = load_profile_templates(plan.templates, plan.templates.sources, cwd)
    return tuple(loaded.templates)


def _discovered(cwd: str, discover: bool) -> dict[str, Any]:
    """What pi loads for an agent in ``cwd`` (context files, skills, prompt files), as conversation options."""
    if not discover:
        return {}
    from pipeline.agentdir import agent_dir
    from pipeline.prompt.discover import discover as scan

    found = scan(cwd, str(agent_dir()))
    return {"skills": found.skills, "context_files": found.context_files, "custom_prompt": found.custom_prompt,
            "append_prompts": found.append_prompts}
