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
and hands off to it (DESIGN's stages)::

    from pipeline.prompt import RenderContext
    prompt = p.render_system_prompt(RenderContext(cwd="/repo", tools=("read", "bash")))

    templates = p.load_templates("/repo")   # templates.sources in order: project, global, paths
    text = p.expand("/review a.py 'error handling'", templates)   # other input: unchanged

    plan = p.plan_compaction("chat.jsonl")  # CompactionPlan | NothingToCompact; nothing written
    done = p.compact("chat.jsonl")          # profile's summarizer (offline by default); appends
    context = p.project("chat.jsonl")       # the LLM messages of the current leaf

``plan_compaction`` takes ``keep_recent_tokens=``/``reserve_tokens=`` overrides;
``compact`` takes a ``client`` (:func:`pipeline.compaction.make_summary_client`) and
``instructions``; sessions are a path or a :class:`pipeline.session.SessionFile`.

Names are imported on first use, so ``import pipeline.errors`` (and the CLI's
start-up) does not pay for pydantic and ruamel.yaml.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from pipeline.errors import Location, PipelineError, Problem

_LAZY = {
    "Pipeline": "pipeline.compiler",
    "LoadedProfile": "pipeline.compiler",
    "compile_profile": "pipeline.compiler",
    "load_profile": "pipeline.compiler",
}

if TYPE_CHECKING:  # pragma: no cover
    from pipeline.compiler import LoadedProfile, Pipeline, compile_profile, load_profile


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "LoadedProfile",
    "Location",
    "Pipeline",
    "PipelineError",
    "Problem",
    "compile_profile",
    "load_profile",
]
