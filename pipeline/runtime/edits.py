"""Context edits (``runtime.context_edits``, pi 1.x): how the conversation reads its context
from the session and how a failed attempt leaves it.

pi 1.x keeps a failed reply in the session file and omits it from the model's context with
a ``context_edit`` entry (``replacement: null``) aimed at it and at its tool results, before
it retries the turn (or compacts to recover from an overflow). The context read from a
session is then the *projection* (:func:`~pipeline.session.projection.project_path`):
context edits applied, and after a compaction the snapshot of the system prompt it carries
(``systemMessage``) first, where the recorded system messages before it were.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from pipeline.session.entries import Entry, MessageEntry
from pipeline.session.messages import AgentMessage, AssistantMessage
from pipeline.session.projection import build_session_context, project_path
from pipeline.session.system import is_context_edit
from pipeline.session.snapshot import projected_messages


def uses_projection(runtime: Any) -> bool:
    """Whether the context is pi 1.x's projection: with context edits, or a recorded system
    prompt (whose replay after a compaction starts from the compaction's snapshot)."""
    return bool(runtime.context_edits or runtime.record_system_prompt)


def context_messages(session: Any, runtime: Any) -> tuple[tuple[AgentMessage, ...], Any]:
    """(the context's agent messages, the thinking level) of the session's current branch."""
    context = build_session_context(session)
    if not uses_projection(runtime):
        return context.messages, context.thinking_level
    return tuple(projected_messages(session.path_to())), context.thinking_level


def attempt_targets(path: Sequence[Entry], entry_id: str, reply: AssistantMessage) -> list[str]:
    """The entry ids pi omits for a failed attempt: the reply's entry ``entry_id`` and the
    entries of the results of its tool calls that follow it (up to the next reply)."""
    index = next((i for i, e in enumerate(path) if e.id == entry_id), None)
    if index is None:
        return []
    calls = {c.id for c in reply.tool_calls}
    targets = [entry_id]
    for entry in path[index + 1:]:
        if not isinstance(entry, MessageEntry):
            continue
        if entry.role == "assistant":
            break
        if entry.role == "toolResult" and entry.raw["message"].get("toolCallId") in calls:
            targets.append(entry.id)
    return targets


def omit_attempt(session: Any, entry_id: str, reply: AssistantMessage) -> list[Entry]:
    """Append the ``context_edit`` entries that omit ``reply`` (entry ``entry_id``) and its tool results."""
    path = session.path_to()
    return [session.append_context_edit(target, None) for target in attempt_targets(path, entry_id, reply)]


def edited_tokens(session: Any, settings: Any) -> Optional[float]:
    """pi 1.x's trigger estimate once the branch has context edits (``compaction.estimate_on:
    projection``): ``estimateProjectedContextTokens`` of the projection; ``None`` otherwise."""
    if settings.estimate_on != "projection":
        return None
    path = session.path_to()
    projected = project_path(path)
    if not any(is_context_edit(item.entry) for item in projected):
        return None
    from pipeline.compaction.tokens import projected_context_tokens

    return projected_context_tokens(projected, path, settings)
