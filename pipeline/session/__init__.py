"""Sessions: pi's append-only JSONL tree store (0.84.0 and 1.x entries) and its projection to LLM context.

Typical use::

    from pipeline.session import ContextTexts, SessionFile, build_context

    session = SessionFile.open("chat.jsonl")       # streaming load; damage in .problems
    session.entries, session.leaf_id, session.path_to(session.leaf_id)
    context = build_context(session, ContextTexts.from_profile(profile))
    context.messages                                 # pi's convertToLlm output (typed)
    session.append_message({"role": "user", "content": "hi", "timestamp": 1})

Modules: :mod:`~pipeline.session.messages` and :mod:`~pipeline.session.entries` (typed
models keeping their raw JSON), :mod:`~pipeline.session.reader` (streaming load,
problems), :mod:`~pipeline.session.migrate` (v1→v2→v3 in memory),
:mod:`~pipeline.session.tree` (navigation, integrity), :mod:`~pipeline.session.log`
(the locked append log), :mod:`~pipeline.session.store` (the session: tree, leaf, typed
appends), :mod:`~pipeline.session.projection` (projection)
and the profile words the projection adds, a :class:`~pipeline.model.run_plan.ContextTexts`.
"""

from pipeline.session.projection import (
    LAST,
    LlmContext,
    ModelRef,
    SessionContext,
    build_context,
    build_context_entries,
    build_session_context,
    context_entries_of_path,
    context_settings,
    convert_to_llm,
    entry_messages,
    entry_roles,
    session_path,
)
from pipeline.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    CustomEntry,
    CustomMessageEntry,
    Entry,
    FileLists,
    LabelEntry,
    MessageEntry,
    ModelChangeEntry,
    SessionHeader,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
    UnknownEntry,
    new_entry_id,
    parse_entry,
)

from pipeline.session.messages import (
    AgentMessage,
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    ContentBlock,
    Cost,
    CustomMessage,
    ImageContent,
    LlmMessage,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UnknownBlock,
    UnknownMessage,
    Usage,
    UserMessage,
    parse_message,
)
from pipeline.session.store import SessionFile
from pipeline.model.run_plan import ContextTexts
from pipeline.session.tree import SessionTree

__all__ = [
    "AgentMessage", "AssistantMessage", "BashExecutionMessage", "BranchSummaryEntry", "BranchSummaryMessage",
    "CompactionEntry", "CompactionSummaryMessage", "ContentBlock", "ContextEditEntry", "ContextTexts", "Cost", "CustomEntry",
    "CustomMessage", "CustomMessageEntry", "Entry", "FileLists", "ImageContent", "LAST", "LabelEntry",
    "LlmContext", "LlmMessage", "MessageEntry", "ModelChangeEntry", "ModelRef", "SessionContext",
    "SessionFile", "SessionHeader", "SessionInfoEntry", "SessionTree", "SystemMessage", "TextContent", "ThinkingContent",
    "ThinkingLevelChangeEntry", "ToolCall", "ToolResultMessage", "UnknownBlock", "UnknownEntry",
    "UnknownMessage", "Usage", "UserMessage", "build_context", "build_context_entries",
    "build_session_context", "context_entries_of_path", "context_settings", "convert_to_llm",
    "entry_messages", "entry_roles", "new_entry_id", "parse_entry", "parse_message", "session_path",
]
