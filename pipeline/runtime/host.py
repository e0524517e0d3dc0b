"""What a host hands the runtime: the model it talks to, its tools, its hooks.

* :class:`ModelInfo` — identity, limits and prices of the model (pi's ``Model``);
* :class:`Tool` — a host tool: name, JSON schema, a Python callable, and optionally the
  description, snippet and guidelines (else the profile's tool catalog supplies them);
* :class:`ToolOutput` — what a tool callable may return besides a plain string;
* :class:`HookResult` — what a before-agent-start hook returns (a per-run system prompt,
  a message to add before the run, and — for a profile whose sessions record the system
  prompt — changes to the run's render options: caller sections and guidelines).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from pipeline.llm.wire import ModelCost, TargetModel
from pipeline.llm.providers import PROVIDERS
from pipeline.runtime.policy import CurrentModel

#: pi's API names for the two wire formats (:data:`pipeline.llm.providers.PROVIDERS`).
APIS = {wire: provider.api for wire, provider in PROVIDERS.items()}


@dataclass(frozen=True, kw_only=True)
class ModelInfo:
    """The model the conversation talks to.

    ``context_window`` and ``max_tokens`` (its own output limit) of 0 mean unknown: no
    threshold compaction and no length recovery then. ``api`` is what pi records on each
    reply (``openai-completions``, ``anthropic-messages`` or a host's own name).
    """

    id: str
    provider: str
    api: str = APIS["openai"]
    context_window: int = 0
    max_tokens: int = 0
    reasoning: bool = False
    input: tuple[str, ...] = ("text",)
    cost: ModelCost = field(default_factory=ModelCost)
    mid_conversation_system: bool = False

    def target(self) -> TargetModel:
        """The converters' view of the model."""
        return TargetModel(id=self.id, provider=self.provider, api=self.api, reasoning=self.reasoning,
                           input=self.input, max_tokens=self.max_tokens or 32000, cost=self.cost)

    def runnable_level(self, level: Optional[str]) -> str:
        """``level`` as this model runs it: ``off`` without reasoning (pi's clamp)."""
        return (level or "off") if self.reasoning else "off"

    def current(self) -> CurrentModel:
        """The policy's view of the model."""
        return CurrentModel(self.provider, self.id, self.context_window, self.max_tokens)


@dataclass(frozen=True, kw_only=True)
class ToolOutput:
    """A tool's result: text (or content blocks), whether it is an error, details kept in the session."""

    content: Union[str, Sequence[Mapping[str, Any]]]
    is_error: bool = False
    details: Any = None

    def blocks(self) -> list[Mapping[str, Any]]:
        if isinstance(self.content, str):
            return [{"type": "text", "text": self.content}]
        return [dict(b) for b in self.content]


#: A tool callable: the call's arguments (a JSON object) → a string or a :class:`ToolOutput`.
ToolFunction = Callable[[Mapping[str, Any]], Union[str, ToolOutput]]


@dataclass(frozen=True, kw_only=True)
class Tool:
    """A tool the model may call. ``description``/``snippet``/``guidelines`` left ``None`` come
    from the profile's tool catalog entry of the same name (``system_prompt.tools``)."""

    name: str
    parameters: Mapping[str, Any]
    function: ToolFunction = field(compare=False)
    description: Optional[str] = None
    snippet: Optional[str] = None
    guidelines: Optional[tuple[str, ...]] = None


@dataclass(frozen=True)
class HookResult:
    """What a before-agent-start hook returns: ``system_prompt`` for this run (``None``: no
    change; with a recording profile it is the whole prompt of the run's requests, while the
    structured sections are still recorded as usual), ``message`` = a custom message added after the user's
    (``{customType, content, display?, details?}``).

    For a profile whose sessions record the system prompt (``runtime.record_system_prompt``)
    a hook may also change the render options of this run: ``sections`` sets caller sections
    by name (a text; ``None`` removes the caller section of that name), ``guidelines`` adds
    caller guidelines. The changes hold for this run only; the next prompt starts from the
    conversation's own options again."""

    system_prompt: Optional[str] = None
    message: Optional[Mapping[str, Any]] = None
    sections: Mapping[str, Optional[str]] = field(default_factory=dict)
    guidelines: tuple[str, ...] = ()


@dataclass(frozen=True)
class AgentStart:
    """What a before-agent-start hook sees: the user's (expanded) text, the prompt so far and
    the run's caller sections so far (after earlier hooks' changes)."""

    prompt: str
    system_prompt: str
    sections: Mapping[str, str] = field(default_factory=dict)


#: A before-agent-start hook.
BeforeAgentStart = Callable[[AgentStart], Optional[HookResult]]
#: An input hook: the typed text → replacement text (``None``: unchanged).
InputHook = Callable[[str], Optional[str]]
