"""context-pipeline: an agent's context policy as a compiled, immutable Pipeline.

The facade::

    from pipeline import compile_profile
    p = compile_profile("default")          # a built-in name, builtin:NAME, or a path
    p.profile.compaction.reserve_tokens     # the validated, merged profile
    p.fingerprint                           # sha256 of the canonical merged profile

    from pipeline import load_profile
    loaded = load_profile("team.yaml")      # merged + validated, no cross-field checks
    loaded.source_map.get(("compaction", "reserve_tokens"))   # where it was set

What a runtime calls: each method of :class:`Pipeline` imports its stage on first use
and hands off to it (the stages of docs/architecture.md)::

    from pipeline.prompt import RenderContext
    prompt = p.render_system_prompt(RenderContext(cwd="/repo", tools=("read", "bash")))

    templates = p.load_templates("/repo")   # templates.sources in order: project, global, paths
    text = p.expand("/review a.py 'error handling'", templates)   # other input: unchanged

    plan = p.plan_compaction("chat.jsonl")  # pipeline.CompactionPlan | pipeline.NothingToCompact; nothing written
    done = p.compact("chat.jsonl")          # profile's summarizer (offline by default); appends
    context = p.project("chat.jsonl")       # the LLM messages of the current leaf

An agent, wired as ``pipeline run`` wires it (model client, key, built-in tools by name or
:class:`pipeline.Tool` objects, discovery, templates), from this one import::

    agent = p.agent("chat.jsonl", model="local-model", base_url="http://127.0.0.1:8080/v1")
    result = agent.run("What does this project do?")   # result.answer; the session is pi's JSONL

Values can be overridden as the profile's last layer, checked like the rest, with
problems named by ``origin`` (a command's flags do this)::

    p = compile_profile("team.yaml", overrides={"compaction.reserve_tokens": 8000},
                        origin={"compaction.reserve_tokens": "--reserve"})

``render_system_prompt`` applies the profile's tool catalog (``catalog=False``: exactly
the context given); ``plan_compaction`` and ``compact`` take ``overrides=`` too;
``compact`` takes a ``client`` (default: the profile's summarizer) and ``instructions``;
sessions are a path or a :class:`pipeline.session.SessionFile`. ``docs/architecture.md``
draws the layers: front end, stages, this facade, review tooling and the CLI.

Names are imported on first use, so ``import pipeline.errors`` (and the CLI's
start-up) does not pay for pydantic and ruamel.yaml, and importing the package itself
runs no other import (a Ctrl-C during start-up lands in the CLI's handler).
"""

from __future__ import annotations

import sys as _sys


#: SIGINTs that arrived while the ``pipeline`` command was starting, before its ``main``
#: took over Ctrl-C (:func:`pipeline.cli.main` ends as interrupted when it holds any).
_early_interrupts: list[int] = []


def _note_interrupt(signum: int, frame: object) -> None:
    _early_interrupts.append(signum)


def _is_the_command() -> bool:
    """This process runs the ``pipeline`` command: its console script or ``python -m pipeline``."""
    first = _sys.argv[0] if _sys.argv else ""
    if first == "-m":  # `python [options] -m NAME`, while NAME is being found
        orig = list(getattr(_sys, "orig_argv", ()))
        return "-m" in orig[:-1] and orig[orig.index("-m") + 1] == "pipeline"
    return first.rsplit("/", 1)[-1] == "pipeline"  # the console script


if _is_the_command():  # the first of our code to run: Ctrl-C is noted from here on, never a traceback
    import _signal  # type: ignore[import-not-found]  # built in (no stub): no import behind it

    try:
        _signal.signal(_signal.SIGINT, _note_interrupt)
    except (ValueError, OSError):  # pragma: no cover - not the main thread
        pass

TYPE_CHECKING = False  # (not imported from typing: the CLI's start-up stays short and interruptible)

_LAZY = {
    **dict.fromkeys(("Location", "PipelineError", "Problem"), "pipeline.errors"),
    **dict.fromkeys(("Pipeline", "compile_profile"), "pipeline.facade"),
    **dict.fromkeys(("CompiledProfile", "LoadedProfile", "load_profile"), "pipeline.compiler"),
    "__version__": "pipeline.version",
    "RenderContext": "pipeline.prompt",
    "SessionFile": "pipeline.session",
    **dict.fromkeys(("ModelInfo", "Tool"), "pipeline.runtime.host"),
    **dict.fromkeys(("CompactionPlan", "NothingToCompact"), "pipeline.compaction.plan"),
    **dict.fromkeys(("LLMError", "LLMAuthError"), "pipeline.llm.errors"),
    "Agent": "pipeline.runtime.loop",
    "Conversation": "pipeline.runtime.conversation",
}

if TYPE_CHECKING:  # pragma: no cover
    from pipeline.compaction.plan import CompactionPlan, NothingToCompact
    from pipeline.compiler import CompiledProfile, LoadedProfile, load_profile
    from pipeline.errors import Location, PipelineError, Problem
    from pipeline.facade import Pipeline, compile_profile
    from pipeline.llm.errors import LLMAuthError, LLMError
    from pipeline.prompt import RenderContext
    from pipeline.runtime.conversation import Conversation
    from pipeline.runtime.host import ModelInfo, Tool
    from pipeline.runtime.loop import Agent
    from pipeline.session import SessionFile


def __getattr__(name: str) -> object:
    """PEP 562: the first access to a name of :data:`_LAZY` imports its module and keeps the
    value here, so later ones are plain lookups. The root package is the one place names are
    imported on first use; stage packages re-export nothing and import what they use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "Agent",
    "CompactionPlan",
    "CompiledProfile",
    "Conversation",
    "LoadedProfile",
    "LLMAuthError",
    "LLMError",
    "Location",
    "ModelInfo",
    "NothingToCompact",
    "Pipeline",
    "PipelineError",
    "Problem",
    "RenderContext",
    "SessionFile",
    "Tool",
    "compile_profile",
    "load_profile",
    "__version__",
]
