"""Summaries in each wire format: where a conversation may be cut, how the summary stands in for
what it replaces, and (for OpenAI Responses and Gemini) the summary call in the same format.

:mod:`pipeline.proxy.summary` decides when and what to summarize; it asks this module how, per
format (:data:`TURNS`). Each format's rules are functions of its wire module
(:mod:`pipeline.llm.wire.anthropic`, :mod:`~pipeline.llm.wire.chat`,
:mod:`~pipeline.llm.wire.responses`, :mod:`~pipeline.llm.wire.gemini`):

* **Anthropic Messages** (``messages``): the kept messages may start at any message but a user
  message of ``tool_result`` blocks; a ``role: "system"`` message inside
  ``messages`` (Claude Code's) is kept whole before the summary when among the replaced ones;
  ``system`` is not touched. The summary is one user message of text blocks.
* **OpenAI chat** (``messages``): the kept messages may start at any message
  (never a ``role: tool`` result); the leading ``system``/``developer`` messages are set apart,
  and those among the replaced ones are kept whole. The summary is one user message of text parts.
* **OpenAI Responses** (``input``, a list of items): the kept items may start at a user
  ``message`` or at an item of the model's output, never at a ``function_call_output`` or
  ``custom_tool_call_output``, never right after a ``reasoning`` item (a reasoning item stays
  with the call or message it led to, its ``encrypted_content`` whole), and never where a kept
  output would lose its call (pairs are by ``call_id``, parallel calls included). Leading
  ``system``/``developer`` messages are not counted in the history, and those among the
  replaced items are kept whole before the summary. ``instructions`` are not touched. The
  summary is one user ``message`` of ``input_text`` parts.
* **Gemini** (``contents``): the kept contents may start at a ``model`` content or at a
  ``user`` content without ``functionResponse`` parts (a model's ``functionCall`` and the
  ``functionResponse`` after it stay together, their ``thoughtSignature`` whole);
  ``systemInstruction`` is not touched. The summary is one ``user`` content of text parts.

In every format, when the kept part starts with the user's own message
its parts join the summary message (the roles keep alternating), and when the cut falls inside
a turn the user's request that started it is repeated after the summary.

The Responses and Gemini summary call goes to the request's own upstream in its format (``/responses``,
``/v1beta/models/M:generateContent``) with the client's key: the bearer token, Gemini's
``x-goog-api-key`` header or ``key`` query parameter.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable, Mapping
from urllib.parse import parse_qs, urlsplit

from pipeline.llm.gemini import GeminiClient
from pipeline.llm.http import HTTPSummaryClient
from pipeline.llm.openai_responses import OpenAIResponsesClient
from pipeline.llm.retry import RetryPolicy
from pipeline.llm.wire import anthropic, chat, gemini, responses
from pipeline.proxy.routes import Route, Upstreams
from pipeline.proxy.wire import Json, messages_of


@dataclass(frozen=True)
class Turns:
    """One wire format's rules (see the module docstring), its wire module's functions."""

    #: how many leading messages are set apart, kept whole before the summary
    head: Callable[[list[Any]], int]
    #: may the kept messages start at ``messages[at]``?
    boundary: Callable[[list[Any], int], bool]
    #: is this message the user's own (a turn's start, not a tool result)?
    turn_start: Callable[[Any], bool]
    #: is this message kept whole when it is among the replaced ones?
    kept_whole: Callable[[Any], bool]
    #: a user message's parts
    parts: Callable[[Any], list[Any]]
    #: the summary message: the wrapped summary text, then parts of the user's
    summary: Callable[[str, list[Any]], Json]

    def forwarded(self, body: Json, kind: Any, head: int, replaced: int, wrapped: str) -> Json:
        """A copy of ``body`` with messages ``head:replaced`` replaced by the summary message: the
        summary, then the user's request when the cut is inside its turn, then the first kept
        message when it is the user's; the messages kept whole among the replaced ones before it."""
        out = copy.deepcopy(body)
        messages = messages_of(kind, out) or []
        kept = messages[replaced:]
        if kept and self.turn_start(kept[0]):
            extra = self.parts(kept.pop(0))
        else:
            request = next((m for m in reversed(messages[head:replaced]) if self.turn_start(m)), None)
            extra = self.parts(request) if request is not None else []
        inside = [m for m in messages[head:replaced] if self.kept_whole(m)]
        messages[head:] = [*inside, self.summary(wrapped, extra), *kept]
        return out


def _turns(module: Any) -> Turns:
    return Turns(module.head, module.boundary, module.turn_start, module.kept_whole, module.parts,
                 module.summary_message)


#: each format's rules, by route kind
TURNS: dict[str, Turns] = {"messages": _turns(anthropic), "chat": _turns(chat), "responses": _turns(responses),
                           "gemini": _turns(gemini)}


def client_key(route: Route, headers: Mapping[str, str]) -> str:
    """The client's own key: Gemini's ``x-goog-api-key`` or ``key`` query parameter, else the bearer token."""
    bearer = headers.get("authorization", "")
    query = parse_qs(urlsplit(route.url).query).get("key", [""])[0] if route.provider == "gemini" else ""
    return headers.get("x-goog-api-key") or query or (bearer[7:] if bearer.lower().startswith("bearer ") else "")


def summary_client(route: Route, upstreams: Upstreams, model: str, key_env: str, env: Mapping[str, str],
                   max_retries: int, bounds: Mapping[str, Any]) -> HTTPSummaryClient:
    """The summary client for ``route``'s format, to its upstream, the key read from ``env[key_env]``."""
    if route.kind == "gemini":
        return GeminiClient(model=model, base_url=upstreams.gemini, api_key_env=key_env, env=env,
                            retry=RetryPolicy(max_retries=max_retries), **bounds)
    return OpenAIResponsesClient(model=model, base_url=upstreams.openai, api_key_env=key_env, env=env,
                                 retry=RetryPolicy(max_retries=max_retries), **bounds)
