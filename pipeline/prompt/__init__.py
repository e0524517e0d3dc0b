"""The system prompt: explicit render inputs, pure assembly, and discovery from disk.

* :class:`RenderContext` (with :class:`ContextFile`, :class:`Skill`): every input of a render.
* :func:`render_system_prompt` / :func:`render_sections`: pure, deterministic assembly.
* :mod:`pipeline.prompt.discover`: gathering context files, skills and prompt files from
  the file system, as an agent would (kept apart from rendering).
"""

from pipeline.prompt.context import ContextFile, RenderContext, Skill
from pipeline.prompt.render import (
    RenderedSection,
    render_sections,
    render_system_prompt,
)

__all__ = [
    "ContextFile", "RenderContext", "RenderedSection", "Skill", "render_sections", "render_system_prompt",
]
