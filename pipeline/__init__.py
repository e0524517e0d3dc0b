"""context-pipeline: an agent's context policy as a compiled, immutable Pipeline.

The facade::

    from pipeline import compile_profile
    p = compile_profile("default")          # a built-in name, builtin:NAME, or a path
    p.profile.compaction.reserve_tokens     # the validated, merged profile
    p.fingerprint                           # sha256 of the canonical merged profile

    from pipeline import load_profile
    loaded = load_profile("team.yaml")      # merged + validated, no cross-field checks
    loaded.source_map.get(("compaction", "reserve_tokens"))   # where it was set

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
