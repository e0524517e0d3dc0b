"""The system prompt: explicit render inputs, pure assembly, and discovery from disk.

* :class:`RenderContext` (with :class:`ContextFile`, :class:`Skill`): every input of a render.
* :func:`render_system_prompt` / :func:`render_sections`: pure, deterministic assembly of
  exactly the context given; :func:`with_catalog` adds the profile's tool catalog
  (``Pipeline.render_system_prompt`` does by default).
* :mod:`pipeline.prompt.discover`: gathering context files, skills and prompt files from
  the file system, as an agent would (kept apart from rendering).
* :mod:`pipeline.prompt.patch`: the record of named sections, the patch between two
  records, replaying patches, and framing a patch as a mid-conversation message.
"""

from pipeline.prompt.catalog import catalog_inputs, with_catalog
from pipeline.prompt.context import ContextFile, RenderContext, Skill
from pipeline.prompt.patch import (
    frame_patch, section_patch, section_record, system_view, turn_patch,
)
from pipeline.prompt.render import (
    RenderedSection,
    render_sections,
    render_system_prompt,
)

__all__ = [
    "ContextFile", "RenderContext", "RenderedSection", "Skill", "catalog_inputs", "render_sections",
    "render_system_prompt", "with_catalog", "frame_patch", "section_patch",
    "section_record", "system_view", "turn_patch",
]
