"""context-pipeline: an agent's context policy as a compiled, immutable Pipeline.

The facade::

    from pipeline import compile_profile
    p = compile_profile("default")          # or a path to a YAML profile
"""

from pipeline.compiler import Pipeline, compile_profile
from pipeline.errors import Location, PipelineError, Problem

__all__ = ["Location", "Pipeline", "PipelineError", "Problem", "compile_profile"]
