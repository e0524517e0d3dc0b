"""The messages of a request body read as pi's messages, for the profile's summary request.

Every format the proxy summarizes (Anthropic Messages, OpenAI chat completions, OpenAI
Responses, Gemini): a user's text, an assistant's text, thinking and tool calls, a tool's
result (its name found at its call). A Responses ``reasoning`` item reads as thinking from
its readable ``summary`` (its encrypted content is the provider's, not read); a Gemini part
marked ``thought`` is thinking. Images and other blocks are left out of the summary's
conversation text, as pi's serialization leaves them; system and developer messages too
(they are kept whole, never summarized). Each format's reader is its wire module's
``read_message`` (:mod:`pipeline.llm.wire`).
"""

from __future__ import annotations

from typing import Any

from pipeline.llm.wire import format_module
from pipeline.proxy.routes import Kind


def pi_groups(kind: Kind, messages: list[Any]) -> list[list[dict[str, Any]]]:
    """Each of ``messages`` (the conversation's list of a body of ``kind``) as pi's messages' JSON
    (none for a system message, several for an Anthropic user message of tool results or a Gemini
    user content of function responses), one list per message of the body. A Responses turn is
    one item per block, so consecutive groups may each be an assistant message: the session path
    (:mod:`pipeline.proxy.history`) joins them into one."""
    names: dict[str, str] = {}
    read = format_module(kind).read_message
    return [read(m, names) if isinstance(m, dict) else [] for m in messages]
