"""From a session tree to the LLM context: pi 0.84.0's ``buildSessionContext`` and
``convertToLlm`` (docs/pi-rules.md#session-to-context).

Two steps, kept apart because the compaction engine uses the first on its own:

1. :func:`build_session_context` — walk the path to the leaf, track the thinking level
   and model, apply the latest compaction on the path (its summary, then the kept entries
   from ``firstKeptEntryId`` on, then everything after it) and project each entry into
   agent messages (:func:`entry_messages`);
2. :func:`convert_to_llm` — turn pi's own roles into user messages, with the wrapper and
   shell-command words taken from a :class:`~pipeline.model.run_plan.ContextTexts`.

Leaf selection follows pi: ``None`` → an empty context; a known id → that entry;
anything else (the default :data:`LAST`, or an unknown id) → the last entry in file
order. Odd values in a file (``null`` content, a missing summary, a bad timestamp) are
treated the way JavaScript treats them, so the result equals pi's for any file pi loads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Protocol, Sequence, Union, overload

from pipeline.model.ref import ModelRef as ModelReference
from pipeline.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    ContextEditEntry,
    CustomMessageEntry,
    Entry,
    MessageEntry,
    ModelChangeEntry,
    ThinkingLevelChangeEntry,
    message_views,
)
from pipeline.gcpause import gc_paused
from pipeline.js import MISSING, date_ms, js_get, js_nullish, js_object, js_string, js_truthy
from pipeline.session.messages import (
    AgentMessage,
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    LlmMessage,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
    parse_message,
)
from pipeline.session.masks import masked_entries, masked_message
from pipeline.model.run_plan import ContextTexts
from pipeline.session.tree import SessionTree


class _Last:
    def __repr__(self) -> str:
        return "LAST"


#: Leaf argument meaning "the last entry in file order" (pi's default).
LAST: Any = _Last()

class HasTree(Protocol):
    """A session file (:class:`~pipeline.session.store.SessionFile`): a tree and a current leaf."""

    tree: SessionTree
    leaf_id: str | None


#: Where entries come from: a session file, a tree, or entries in file order.
Source = Union[HasTree, SessionTree, Sequence[Entry]]


@dataclass(frozen=True, slots=True)
class ModelRef(ModelReference):
    """The model in effect: from the last model change or assistant message on the path, as the
    one model reference (:class:`pipeline.model.ref.ModelRef`: ``provider``, ``id``, ``key``).

    ``raw`` is pi's ``{provider, modelId}`` object with the values as found (a missing
    value is left out, a null one kept).
    """

    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def model_id(self) -> str | None:
        """pi's name for ``id`` (``modelId``)."""
        return self.id

    @classmethod
    def recorded(cls, source: Any, id_key: str) -> "ModelRef":
        """From a ``model_change`` entry (``modelId``) or an assistant message (``model``)."""
        raw = js_object([("provider", js_get(source, "provider")), ("modelId", js_get(source, id_key))])
        provider, model = raw.get("provider"), raw.get("modelId")
        return cls(provider if isinstance(provider, str) else None, model if isinstance(model, str) else None, raw)

    def to_json(self) -> dict[str, Any]:
        return self.raw


@dataclass(frozen=True, slots=True)
class SessionContext:
    """pi's ``buildSessionContext`` result: agent messages plus the settings on the path."""

    messages: tuple[AgentMessage, ...]
    thinking_level: str | None
    model: ModelRef | None
    thinking_level_json: Any = field(default=MISSING, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class LlmContext:
    """The projection all the way to provider messages (``convertToLlm`` applied)."""

    messages: tuple[LlmMessage | SystemMessage, ...]  # system messages in pi 1.x's projection only
    agent_messages: tuple[AgentMessage, ...]
    thinking_level: str | None
    model: ModelRef | None
    thinking_level_json: Any = field(default=MISSING, repr=False, compare=False)
    #: pi 1.x's projection (context edits applied, recorded system messages and a
    #: compaction's snapshot kept as ``system`` messages), not 0.84's context
    projection: bool = False

    def to_json(self, *, messages: bool = True) -> dict[str, Any]:
        """The oracle's ``build_context`` shape: ``{messages, agentMessages, thinkingLevel, model}``
        (``messages=False``: the last two only), and ``"projection": "pi-1"`` for pi 1.x's."""
        lists = [("messages", [m.raw for m in self.messages]),
                 ("agentMessages", [m.raw for m in self.agent_messages])] if messages else []
        return js_object([
            *lists,
            ("thinkingLevel", self.thinking_level_json),
            ("model", self.model.to_json() if self.model else None),
            *([("projection", "pi-1")] if self.projection else []),
        ])


# --------------------------------------------------------------------------- path


def _tree(source: Any) -> SessionTree:
    if isinstance(source, SessionTree):
        return source
    tree = getattr(source, "tree", None)
    return tree if isinstance(tree, SessionTree) else SessionTree(source)


def _default_leaf(source: Any) -> Any:
    """A session file's current leaf (it moves on append/branch); otherwise the last entry."""
    return LAST if isinstance(source, SessionTree) else getattr(source, "leaf_id", LAST)


def session_path(source: Source, leaf_id: Any = LAST) -> list[Entry]:
    """pi's ``buildSessionPath``: root → leaf, with pi's leaf rules (see the module doc)."""
    tree = _tree(source)
    if leaf_id is None:
        return []
    if leaf_id is LAST or leaf_id not in tree:
        leaf_id = tree.last_id
    return tree.path_to(leaf_id)


def context_entries_of_path(path: Sequence[Entry]) -> list[Entry]:
    """The compaction-aware entry list of one path (pi's ``buildContextEntries`` after the walk)."""
    for latest in reversed(path):  # a loop, not a generator: this runs over every entry of a long path
        if isinstance(latest, CompactionEntry):
            break
    else:
        return list(path)
    index = next(i for i, e in enumerate(path) if e is latest)
    kept: list[Entry] = [latest]
    found = False
    for entry in path[:index]:
        found = found or entry.id == latest.first_kept_entry_id
        if found:
            kept.append(entry)
    kept.extend(path[index + 1 :])
    return kept


def build_context_entries(source: Source, leaf_id: Any = LAST) -> list[Entry]:
    """pi's ``buildContextEntries``: the entries behind the context, latest compaction first."""
    return context_entries_of_path(session_path(source, leaf_id))


# --------------------------------------------------------------------------- projection (pi 1.x)

@dataclass(frozen=True, slots=True)
class ProjectedEntry:
    """One entry of pi 1.x's session projection (``buildSessionProjection``): the entry and
    the messages it shows the model now (a context edit may have replaced or removed them)."""

    entry: Entry
    messages: tuple[AgentMessage, ...]
    edited: bool = False


def project_path(path: Sequence[Entry]) -> list[ProjectedEntry]:
    """pi 1.x's projection of one root→leaf path: the compaction-aware entries (the latest
    compaction first; system-message entries of its kept range left out), each with its
    messages after the newest context edit aimed at it; an older compaction in the kept
    range shows nothing."""
    entries = _projection_entries(path)
    edits = {e.target_id: e for e in entries if isinstance(e, ContextEditEntry)}
    projected = []
    for index, entry in enumerate(entries):
        if isinstance(entry, CompactionEntry):
            messages = _compaction_messages(entry) if index == 0 else []
            projected.append(ProjectedEntry(entry, tuple(messages)))
            continue
        edit = edits.get(entry.id)
        messages = entry_messages(entry)
        if edit is None:
            projected.append(ProjectedEntry(entry, tuple(messages)))
        else:
            projected.append(ProjectedEntry(entry, tuple(_edited(messages, edit.replacement)), True))
    return projected


def _projection_entries(path: Sequence[Entry]) -> list[Entry]:
    entries = context_entries_of_path(path)
    if not entries or not isinstance(entries[0], CompactionEntry):
        return entries
    index = next(i for i, e in enumerate(path) if e is entries[0])
    kept = len(entries) - (len(path) - index - 1)  # [compaction, kept range..., after...]
    return [entries[0], *(e for e in entries[1:kept] if not _is_system_entry(e)), *entries[kept:]]


def _is_system_entry(entry: Entry) -> bool:
    return isinstance(entry, MessageEntry) and entry.role == SystemMessage.role


def _compaction_messages(entry: CompactionEntry) -> list[AgentMessage]:
    system = js_get(entry.raw, "systemMessage")
    summary = _compaction_summary_message(entry)
    return [parse_message(system), summary] if isinstance(system, dict) else [summary]


_EDITABLE = ("user", "assistant", "toolResult", "custom")


def _edited(messages: list[AgentMessage], replacement: Any) -> list[AgentMessage]:
    """pi's ``projectContextEntry``: ``null`` removes the messages; otherwise the content of
    each user/assistant/tool-result/custom message becomes the replacement's (a string
    becomes one text block for assistant and tool-result messages)."""
    if replacement is None:
        return []
    content = js_get(replacement, "content") if isinstance(replacement, dict) else MISSING
    out = []
    for message in messages:
        if message.role not in _EDITABLE:
            out.append(message)
            continue
        raw = {k: v for k, v in message.raw.items() if k != "content"}
        if isinstance(content, str) and message.role in ("assistant", "toolResult"):
            raw["content"] = [{"type": "text", "text": content}]
        elif content is not MISSING:
            raw["content"] = content
        out.append(parse_message(raw))
    return out


# --------------------------------------------------------------------------- entries → messages


def entry_roles(entry: Entry) -> tuple[str, ...]:
    """The roles of what :func:`entry_messages` gives, without building the messages."""
    if isinstance(entry, MessageEntry):
        return (entry.role,)
    if isinstance(entry, CustomMessageEntry):
        return (CustomMessage.role,)
    if isinstance(entry, BranchSummaryEntry):
        return (BranchSummaryMessage.role,) if js_truthy(js_get(entry.raw, "summary")) else ()
    if isinstance(entry, CompactionEntry):
        return (CompactionSummaryMessage.role,)
    return ()


def entry_messages(entry: Entry) -> list[AgentMessage]:
    """pi's ``sessionEntryToContextMessages``: what one entry contributes to the context."""
    if isinstance(entry, MessageEntry):
        return [entry.message if entry.indexed else _with_content(entry.message)]
    if isinstance(entry, CustomMessageEntry):
        return [_custom_message(entry)]
    if isinstance(entry, BranchSummaryEntry) and js_truthy(js_get(entry.raw, "summary")):
        return [branch_summary_message(entry)]
    if isinstance(entry, CompactionEntry):
        return [_compaction_summary_message(entry)]
    return []


def _with_content(message: AgentMessage) -> AgentMessage:
    """User/assistant/tool-result messages with null or missing content get ``content: []``."""
    if message.role in ("user", "assistant", "toolResult") and js_nullish(js_get(message.raw, "content")):
        return parse_message({**message.raw, "content": []})
    return message


def _custom_message(entry: CustomMessageEntry) -> CustomMessage:
    raw, content = entry.raw, js_get(entry.raw, "content")
    return CustomMessage.from_json(js_object([
        ("role", "custom"), ("customType", js_get(raw, "customType")),
        ("content", [] if js_nullish(content) else content), ("display", js_get(raw, "display")),
        ("details", js_get(raw, "details")), ("timestamp", date_ms(js_get(raw, "timestamp"))),
    ]))


def branch_summary_message(entry: BranchSummaryEntry) -> BranchSummaryMessage:
    """The ``branchSummary`` message of a branch summary entry (its summary as stored)."""
    raw = entry.raw
    return BranchSummaryMessage.from_json(js_object([
        ("role", "branchSummary"), ("summary", js_get(raw, "summary")), ("fromId", js_get(raw, "fromId")),
        ("timestamp", date_ms(js_get(raw, "timestamp"))),
    ]))


def _compaction_summary_message(entry: CompactionEntry) -> CompactionSummaryMessage:
    raw = entry.raw
    return CompactionSummaryMessage.from_json(js_object([
        ("role", "compactionSummary"), ("summary", js_get(raw, "summary")),
        ("tokensBefore", js_get(raw, "tokensBefore")), ("timestamp", date_ms(js_get(raw, "timestamp"))),
    ]))


# --------------------------------------------------------------------------- session context


def context_settings(path: Sequence[Entry]) -> tuple[str | None, ModelRef | None]:
    """Thinking level (default ``off``) and model: the last change of each on the path;
    an assistant message counts as a model change. A change entry without a string
    level gives ``None``."""
    thinking, model = _settings(path)
    return (thinking if isinstance(thinking, str) else None), model


def _settings(path: Sequence[Entry]) -> tuple[Any, ModelRef | None]:
    """The level as its JSON value (:data:`~pipeline.js.MISSING` when absent)."""
    thinking: tuple[Any] | None = None
    model: ModelRef | None = None
    for entry in reversed(path):
        if thinking is None and isinstance(entry, ThinkingLevelChangeEntry):
            thinking = (js_get(entry.raw, "thinkingLevel"),)
        elif model is None and isinstance(entry, ModelChangeEntry):
            model = ModelRef.recorded(entry.raw, "modelId")
        elif model is None and isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
            model = ModelRef.recorded(entry.message.raw, "model")
        if thinking is not None and model is not None:
            break
    return (thinking[0] if thinking else "off"), model


def build_session_context(source: Source, leaf_id: Any = LAST) -> SessionContext:
    """pi's ``buildSessionContext``: agent messages of the leaf's path, plus its settings.

    With a session file and no ``leaf_id``, the file's current leaf is used (as pi's
    ``SessionManager.buildSessionContext()`` does).
    """
    tree = _tree(source)
    if leaf_id is LAST:
        leaf_id = _default_leaf(source)
    path = session_path(tree, leaf_id)
    thinking, model = _settings(path)
    masks = masked_entries(path)
    with gc_paused(promote=True):  # the messages are built once and kept by their entries
        if masks:  # masked tool results (pipeline.session.masks): the slower, general path
            messages = tuple(
                masked_message(m, masks[e.id]) if e.id in masks else m
                for e in context_entries_of_path(path) for m in entry_messages(e)
            )
        else:
            messages = tuple(_context_messages(context_entries_of_path(path)))
    return SessionContext(messages, thinking if isinstance(thinking, str) else None, model, thinking)


def _context_messages(entries: Iterable[Entry]) -> list[AgentMessage]:
    """:func:`entry_messages` of every entry (message entries, nearly all, inline)."""
    return message_views(entries, entry_messages)


# --------------------------------------------------------------------------- convertToLlm


@overload
def convert_to_llm(messages: Iterable[AgentMessage], texts: ContextTexts, *, drop_failed: bool = ...,
                   keep_system: Literal[False] = ...) -> list[LlmMessage]: ...
@overload
def convert_to_llm(messages: Iterable[AgentMessage], texts: ContextTexts, *, drop_failed: bool = ...,
                   keep_system: bool) -> list[LlmMessage | SystemMessage]: ...
def convert_to_llm(
    messages: Iterable[AgentMessage], texts: ContextTexts, *, drop_failed: bool = False, keep_system: bool = False
) -> list[LlmMessage | SystemMessage] | list[LlmMessage]:
    """pi's ``convertToLlm``: pi's own roles become user messages, unknown roles are dropped
    (``keep_system``: pi 1.x's, which keeps ``system`` messages as they are).

    ``drop_failed`` also drops assistant messages whose ``stopReason`` is ``error`` or
    ``aborted``, as pi's provider layer does just before a request (they stay in the file
    and in pi's ``convertToLlm`` output, so the default keeps them).
    """
    if keep_system:
        messages = list(messages)
        if any(isinstance(m, SystemMessage) for m in messages):
            kept: list[LlmMessage | SystemMessage] = []
            for message in messages:
                if isinstance(message, SystemMessage):
                    kept.append(message)
                else:
                    kept.extend(convert_to_llm((message,), texts, drop_failed=drop_failed))
            return kept
    unchanged = _UNCHANGED
    if not drop_failed:  # one comprehension: this runs over every message of a context
        # type(message) in unchanged: an LLM message (mypy cannot narrow on it)
        return [m for message in messages  # type: ignore[return-value]
                if (m := message if type(message) in unchanged else _convert_one(message, texts)) is not None]
    out: list[LlmMessage] = []
    for message in messages:
        converted = _convert_one(message, texts)
        if converted is None or (drop_failed and _failed(converted)):
            continue
        out.append(converted)
    return out


_UNCHANGED = frozenset({UserMessage, AssistantMessage, ToolResultMessage})


def _failed(message: LlmMessage) -> bool:
    return isinstance(message, AssistantMessage) and js_get(message.raw, "stopReason") in ("error", "aborted")


def _convert_one(message: AgentMessage, texts: ContextTexts) -> LlmMessage | None:
    if isinstance(message, (UserMessage, AssistantMessage, ToolResultMessage)):
        return message
    if isinstance(message, BashExecutionMessage):
        if js_truthy(js_get(message.raw, "excludeFromContext")):
            return None
        return _user_text(bash_execution_text(message, texts), message)
    if isinstance(message, CustomMessage):
        content = js_get(message.raw, "content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        return UserMessage.from_json(js_object([("role", "user"), ("content", blocks), _timestamp(message)]))
    if isinstance(message, BranchSummaryMessage):
        return _user_text(_wrap(texts.branch_open, message, texts.branch_close), message)
    if isinstance(message, CompactionSummaryMessage):
        return _user_text(_wrap(texts.compaction_open, message, texts.compaction_close), message)
    return None


def _timestamp(message: AgentMessage) -> tuple[str, Any]:
    return ("timestamp", js_get(message.raw, "timestamp"))


def _user_text(text: str, source: AgentMessage) -> UserMessage:
    return UserMessage.from_json(
        js_object([("role", "user"), ("content", [{"type": "text", "text": text}]), _timestamp(source)])
    )


def _wrap(open_text: Any, message: AgentMessage, close_text: Any) -> str:
    return open_text.render() + js_string(js_get(message.raw, "summary")) + close_text.render()


def bash_execution_text(message: BashExecutionMessage, texts: ContextTexts) -> str:
    """pi's ``bashExecutionToText`` with the profile's words: ran + (output | no output)
    + (cancelled | non-zero exit code) + (truncated, when there is a full-output path)."""
    raw = message.raw
    text = texts.bash_ran.render(command=js_string(js_get(raw, "command")))
    output = js_get(raw, "output")
    text += texts.bash_output.render(output=js_string(output)) if js_truthy(output) else texts.bash_no_output.render()
    code = js_get(raw, "exitCode")
    if js_truthy(js_get(raw, "cancelled")):
        text += texts.bash_cancelled.render()
    elif not js_nullish(code) and not _is_zero(code):
        text += texts.bash_exit_code.render(code=js_string(code))
    path = js_get(raw, "fullOutputPath")
    if js_truthy(js_get(raw, "truncated")) and js_truthy(path):
        text += texts.bash_truncated.render(path=js_string(path))
    return text


def _is_zero(value: Any) -> bool:
    """``value === 0`` (a boolean is never 0 in JavaScript)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0


# --------------------------------------------------------------------------- all at once


def build_context(
    source: Source, texts: ContextTexts, leaf_id: Any = LAST, *, drop_failed: bool = False, projection: bool = False
) -> LlmContext:
    """:func:`build_session_context` then :func:`convert_to_llm` (the oracle's ``build_context``).

    ``projection``: pi 1.x's ``buildSessionContext`` instead (:func:`project_path`: context
    edits applied; the recorded system messages, after a compaction its ``systemMessage``
    snapshot first, kept as ``system`` messages), as pi 1.6.0's ``build_context`` gives it."""
    context = build_session_context(source, leaf_id)
    agent = context.messages
    if projection:
        path = session_path(source, _default_leaf(source) if leaf_id is LAST else leaf_id)
        agent = tuple(m for item in project_path(path) for m in item.messages)
    llm = convert_to_llm(agent, texts, drop_failed=drop_failed, keep_system=projection)
    return LlmContext(tuple(llm), agent, context.thinking_level, context.model, context.thinking_level_json,
                      projection=projection)
