"""The one wire layer: every provider format the project speaks, built and read in one place.

One module per format, each the one home of that format's knowledge: the conversation's key
in a body (``KEY``), pi's messages → a request body, a body's messages → pi's messages
(``read_message``, ``tool_results``), the replies and stream events the loopback servers send,
and the replies and stream events the runtime's client and the proxy's usage reader read:

* :mod:`.chat`: OpenAI chat completions;
* :mod:`.anthropic`: Anthropic Messages;
* :mod:`.responses`: the OpenAI Responses API (Codex CLI, the OpenAI Agents SDK);
* :mod:`.gemini`: the Gemini API (Gemini CLI);
* :mod:`.sse`: server-sent event framing, both ways.

Shared by them: :mod:`.types` (the target model, tools, the texts pi inserts),
:mod:`.prepare` (pi-ai's provider-neutral pass before a request is built), :mod:`.reply`
(pi's assistant message, usage and cost, error replies) and :mod:`.history` (the pieces of
pi's messages a body is read back into). The runtime (:mod:`pipeline.llm.chat`,
:mod:`pipeline.runtime.request`), the OpenAI Agents adapter, the loopback servers and the
proxy all use these modules. Only the standard library (and :mod:`pipeline.js`): the
loopback servers import it.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Optional

from pipeline.llm.wire import anthropic, chat, gemini, responses
from pipeline.llm.wire.anthropic import (
    anthropic_messages, anthropic_tool_call_id, anthropic_tools, from_anthropic_messages, from_anthropic_stream,
    to_anthropic_messages,
)
from pipeline.llm.wire.chat import (
    from_openai_chat, from_openai_stream, openai_messages, openai_tool_call_id, openai_tools, openai_usage,
    to_openai_chat,
)
from pipeline.llm.wire.prepare import SystemUpdate, prepare_messages
from pipeline.llm.wire.reply import calculate_cost, error_message, error_reply
from pipeline.llm.wire.types import ConvertTexts, ModelCost, OpenAICompat, TargetModel, ToolDefinition

__all__ = [
    "ConvertTexts", "ModelCost", "OpenAICompat", "SystemUpdate", "TargetModel", "ToolDefinition",
    "anthropic_messages", "anthropic_tool_call_id", "anthropic_tools", "calculate_cost", "error_message",
    "error_reply", "format_module", "from_anthropic_messages", "from_anthropic_stream", "from_openai_chat",
    "from_openai_stream", "openai_messages", "openai_tool_call_id", "openai_tools", "openai_usage",
    "prepare_messages", "reported", "to_anthropic_messages", "to_openai_chat",
]

#: the module of each wire format, by the name the proxy's routes and the runtime's clients give it
_MODULES: dict[str, ModuleType] = {"messages": anthropic, "anthropic": anthropic, "chat": chat, "openai": chat,
                                   "responses": responses, "gemini": gemini}


def format_module(kind: str) -> ModuleType:
    """The module of wire format ``kind`` (``messages``/``anthropic``, ``chat``/``openai``, ``responses``, ``gemini``)."""
    return _MODULES[kind]


def reported(answer: Any) -> Optional[tuple[int, int, int]]:
    """The input usage an answer (a JSON body, or one event of a stream) reports, in whichever
    format: (input tokens, cached ones included; read from the cache; written to it), or None.

    The format is told by the fields: Gemini's ``usageMetadata``; a ``usage`` (at the top, or in
    a stream event's ``message``/``response``) with Anthropic's cache fields or an
    ``input_tokens`` without Responses' details is Anthropic's, with ``prompt_tokens`` chat
    completions', with ``input_tokens`` the Responses API's."""
    if not isinstance(answer, dict):
        return None
    inner = answer.get("message") or answer.get("response")
    usage = answer.get("usage") or (inner.get("usage") if isinstance(inner, dict) else None)
    if isinstance(usage, dict):
        if "cache_read_input_tokens" in usage or "cache_creation_input_tokens" in usage or (
                "input_tokens" in usage and "input_tokens_details" not in usage):
            return anthropic.reported(usage)
        if "prompt_tokens" in usage:
            return chat.reported(usage)
        if "input_tokens" in usage:
            return responses.reported(usage)
        return None
    meta = answer.get("usageMetadata")
    if isinstance(meta, dict) and "promptTokenCount" in meta:
        return gemini.reported(meta)
    return None
