"""The profile's tool catalog (``system_prompt.tools``) as render inputs.

A host's tools bring their own snippets and guidelines; where a render context gives
none for a tool, the catalog's apply. :meth:`pipeline.Pipeline.render_system_prompt`
does this by default; the pure :func:`~pipeline.prompt.render_sections` renders exactly
the context it is given.
"""

from __future__ import annotations

from pipeline.errors import Problem, ProfileError
from pipeline.model.render_plan import RenderPlan
from pipeline.prompt.context import RenderContext
from pipeline.prompt.render import plan_of

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pipeline.model.profile import Profile


def catalog_inputs(profile: "Profile | RenderPlan") -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """Snippets and guidelines of the profile's tool catalog (``system_prompt.tools``)."""
    catalog = plan_of(profile).catalog
    snippets = {tool.name: _plain(tool.snippet, tool.name) for tool in catalog if tool.snippet is not None}
    guidelines = {tool.name: tuple(_plain(g, tool.name) for g in tool.guidelines) for tool in catalog if tool.guidelines}
    return snippets, guidelines


def with_catalog(profile: "Profile | RenderPlan", context: RenderContext) -> RenderContext:
    """``context`` with the catalog's snippets and guidelines for every tool it gives none for."""
    snippets, guidelines = catalog_inputs(profile)
    if not snippets and not guidelines:
        return context
    return context.replace(
        tool_snippets={**snippets, **context.tool_snippets},
        tool_guidelines={**guidelines, **context.tool_guidelines},
    )


def _plain(text, tool: str) -> str:
    try:
        return text.render({})
    except KeyError as err:
        raise ProfileError(
            Problem(f"catalog texts take no variables, found ${{{err.args[0]}}}", key=f"system_prompt.tools.{tool}",
                    code="profile.unknown-variable")
        ) from None
