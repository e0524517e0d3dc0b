"""Per-turn system-prompt overrides (docs/pi-rules.md#per-run-prompt-overrides).

The base system prompt is rendered when the runtime starts or reloads, when the active
tools change and when resources are added — never per turn. Before each user prompt the
host's before-agent-start hooks run in order; each sees the prompt as the previous one
left it and may return a new one (an empty string counts). If any did, their last value
is the prompt of the whole run (every turn, retries and compact-and-retry included);
otherwise the base prompt is (re)installed. At each turn boundary inside the run the
prompt is reset to ``override if set else base`` — with the base as it is *then* (a tool
change mid-run rebuilds it). When the run ends the override is cleared.

A hook result is the ``system_prompt`` it returns: a string, or ``None`` for "no change"
(a hook that returns nothing, returns only a message, or fails).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence


@dataclass(frozen=True)
class HookChain:
    """What the before-agent-start hooks did: what each one saw, and the override."""

    seen: tuple[str, ...]
    override: Optional[str]


def run_hooks(base: str, results: Iterable[Optional[str]]) -> HookChain:
    """Thread ``base`` through the hook results in order (pi's ``emitBeforeAgentStart``).

    ``seen[i]`` is the prompt hook ``i`` was shown; ``override`` is the last non-``None``
    result, or ``None`` when no hook set a prompt.
    """
    current, seen, override = base, [], None
    for result in results:
        seen.append(current)
        if result is not None:
            current = override = result
    return HookChain(tuple(seen), override)


@dataclass(frozen=True)
class RunPrompt:
    """The system prompt state of one agent run: the base prompt and the run's override."""

    base: str
    override: Optional[str] = None

    @property
    def prompt(self) -> str:
        """The prompt in force: the override when one is set (even ``""``), else the base."""
        return self.override if self.override is not None else self.base

    def at_turn(self, base: Optional[str] = None) -> str:
        """The prompt of the next turn of the run; ``base`` is the base prompt as rebuilt
        since the run started (``None``: unchanged)."""
        return self.with_base(base).prompt if base is not None else self.prompt

    def with_base(self, base: str) -> "RunPrompt":
        """The same run after the base prompt was rebuilt (e.g. the active tools changed)."""
        return RunPrompt(base, self.override)

    def end(self) -> "RunPrompt":
        """The run ended: the override is cleared."""
        return RunPrompt(self.base)


def start_run(base: str, results: Sequence[Optional[str]] = ()) -> RunPrompt:
    """The prompt state of a new run: ``base`` plus the hooks' override, if any set one."""
    return RunPrompt(base, run_hooks(base, results).override)
