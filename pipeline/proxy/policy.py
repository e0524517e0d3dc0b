"""The profile's system prompt, applied to each request on the wire.

The agent sends its own system prompt; the profile says what surrounds it
(``system_prompt.base`` and each section's ``owner``, as for ``pipeline export``):

* ``base: agent`` (the default): the agent's own prompt stands where the profile's first
  ``owner: agent`` section stands; the team's sections (``owner: team``) before it and
  after it are rendered once, at start-up, for ``--cwd`` and without the tool catalog (the
  agent's own tools bring their guidance), and added around the agent's text. A profile
  with no team section changes nothing: the client's bytes go upstream as they came.
* ``base: profile``: the profile's whole prompt, rendered with its tool catalog, replaces
  the agent's.

Sections the agent fills from its own inputs (custom and appended prompts, context files,
skills) and a team ``tool_list`` are left to the agent, as in an export. The added text is
the same on every request, so the forwarded prefix is byte-stable and the provider's
prompt cache keeps hitting. Only the system part of a body is touched, in each provider's
own shape; its other blocks (``cache_control`` markers included) and the messages stay as
the client sent them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Collection, Optional, Protocol, Sequence

from pipeline.compaction.triggers import fires
from pipeline.prompt.catalog import with_catalog
from pipeline.prompt.context import RenderContext
from pipeline.prompt.render import RenderedSection, render_sections
from pipeline.proxy.wire import Request, messages_of

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pipeline.facade import Pipeline
    from pipeline.model.compaction import Compaction
    from pipeline.proxy.windows import Windows


class Policy(Protocol):
    """What the proxy does to a request the profile governs."""

    def apply(self, request: Request, body: dict[str, Any]) -> Optional[dict[str, Any]]:
        """The body to forward instead of ``body`` (the client's, ``request.body``, or the one the
        policy before this one made), or None to leave it as it is; ``request``: the request's one
        parsed view (its route, the client's headers for a policy that calls the upstream as the
        client, its chain and sizes computed once). It runs in a worker thread: it may block."""
        ...

#: the section kinds an agent fills from its own inputs: never added on the wire
HOST_KINDS = ("custom_prompt", "append_prompt", "context_files", "skills", "tool_list")


@dataclass(frozen=True)
class Surround:
    """What the profile puts around the agent's own prompt (``replace``: instead of it)."""

    before: str = ""
    after: str = ""
    #: the separator between the agent's text and ``after`` (the first following section's)
    joint: str = "\n\n"
    replace: Optional[str] = None

    @property
    def empty(self) -> bool:
        return self.replace is None and not self.before and not self.after

    def text(self, own: str) -> str:
        """The whole prompt for an agent whose own prompt is ``own``."""
        if self.replace is not None:
            return self.replace
        text = self.before + ("\n\n" if self.before and own else "") + own
        return text + (self.joint if text and self.after else "") + self.after


def surround(pipeline: "Pipeline", cwd: str) -> Surround:
    """The profile's text around the agent's prompt, rendered for ``cwd``."""
    plan = pipeline.render_plan
    bare = RenderContext(cwd=cwd)
    if pipeline.profile.system_prompt.base == "profile":
        sections = render_sections(plan, with_catalog(plan, bare))
        return Surround(replace=_joined(sections))
    owners = {s.id: s.owner for s in pipeline.profile.system_prompt.sections}
    rendered = {s.id: s for s in render_sections(plan, bare)}
    before: list[RenderedSection] = []
    after: list[RenderedSection] = []
    seen_agent = False
    for section in plan.sections:
        if owners.get(section.id) == "agent":
            seen_agent = True
        elif section.kind not in HOST_KINDS and section.id in rendered:
            (after if seen_agent else before).append(rendered[section.id])
    joint = after[0].separator if after else "\n\n"
    return Surround(_joined(before), _joined(after), joint or "\n\n")


def _joined(sections: "Sequence[RenderedSection]") -> str:
    return "".join(("" if i == 0 else s.separator) + s.text for i, s in enumerate(sections))


class SystemPromptPolicy:
    """:class:`~pipeline.proxy.policy.Policy` that puts the profile's sections around the agent's prompt."""

    def __init__(self, around: Surround) -> None:
        self.around = around

    def apply(self, request: Request, body: dict[str, Any]) -> Optional[dict[str, Any]]:
        route = request.route
        if route.kind == "messages":
            return _anthropic(body, self.around)
        if route.kind == "chat":
            return _chat(body, self.around)
        if route.kind == "responses":
            return _responses(body, self.around)
        if route.kind == "gemini":
            return _gemini(body, self.around)
        return None


def _texts(blocks: list[Any], around: Surround, block: dict[str, Any]) -> list[Any]:
    """A list of text blocks (Anthropic's ``system``, OpenAI's content parts, Gemini's parts)
    with the profile's text as blocks of its own around them: the client's blocks stay whole."""
    if around.replace is not None:
        return [{**block, "text": around.replace}]
    return ([{**block, "text": around.before}] if around.before else []) + list(blocks) + (
        [{**block, "text": around.after}] if around.after else [])


def _anthropic(body: dict[str, Any], around: Surround) -> Optional[dict[str, Any]]:
    system = body.get("system")
    if isinstance(system, list):
        return {**body, "system": _texts(system, around, {"type": "text"})}
    if system is None or isinstance(system, str):
        return {**body, "system": around.text(system or "")}
    return None  # a shape the API does not define: the client's bytes, as sent


def _chat(body: dict[str, Any], around: Surround) -> Optional[dict[str, Any]]:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None
    first = messages[0] if messages and isinstance(messages[0], dict) else None
    if first is None or first.get("role") not in ("system", "developer"):
        return {**body, "messages": [{"role": "system", "content": around.text("")}, *messages]}
    content = first.get("content")
    if isinstance(content, list):
        new = {**first, "content": _texts(content, around, {"type": "text"})}
    elif isinstance(content, str):
        new = {**first, "content": around.text(content)}
    else:
        return None
    return {**body, "messages": [new, *messages[1:]]}


def _responses(body: dict[str, Any], around: Surround) -> Optional[dict[str, Any]]:
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        return None
    return {**body, "instructions": around.text(instructions or "")}


def _gemini(body: dict[str, Any], around: Surround) -> Optional[dict[str, Any]]:
    system = body.get("systemInstruction", body.get("system_instruction"))
    key = "system_instruction" if "system_instruction" in body and "systemInstruction" not in body \
        else "systemInstruction"
    if system is None:
        return {**body, key: {"parts": [{"text": around.text("")}]}}
    parts = system.get("parts") if isinstance(system, dict) else None
    if not isinstance(parts, list):
        return None
    return {**body, key: {**system, "parts": _texts(parts, around, {})}}


class Policies:
    """Several policies, each on the body the one before it made (None: nothing changed)."""

    def __init__(self, *policies: Policy) -> None:
        self.policies = policies

    def apply(self, request: Request, body: dict[str, Any]) -> Optional[dict[str, Any]]:
        changed = None
        for policy in self.policies:
            out = policy.apply(request, body if changed is None else changed)
            changed = out if out is not None else changed
        return changed


@dataclass(frozen=True)
class Governed:
    """A request a compaction policy has work on: its model's settings, messages and window."""

    settings: "Compaction"
    messages: list[Any]
    window: int


def governed(request: Request, body: dict[str, Any], compaction: "Compaction", windows: "Windows",
             strategies: Collection[str], share: float = 1.0) -> Optional[Governed]:
    """The one early exit of the compaction policies: the settings of the request's model
    (``compaction.model_overrides`` for the route's provider and the body's model), when
    compaction is on, their strategy is one of ``strategies``, the body has messages and its
    estimate (a quarter of its JSON characters) fires the trigger for the model's window
    scaled by ``1/share`` (a share below 1: a request nearing the trigger); None otherwise. The
    estimate is anchored to the upstream's last report (:meth:`~pipeline.proxy.wire.Request.tokens`)."""
    route = request.route
    model = str(body.get("model") or route.model or "")
    settings = compaction.for_model(route.provider, model)
    if not settings.enabled or settings.strategy not in strategies:
        return None
    messages = messages_of(route.kind, body)
    if not messages:
        return None
    window = windows.tokens(route.provider, model)
    if not fires(request.tokens(body) / (share or 1.0), window, settings):
        return None  # below the trigger: nothing stored can be this history's
    return Governed(settings, messages, window)
