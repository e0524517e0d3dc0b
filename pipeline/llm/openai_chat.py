"""OpenAI-compatible chat completions: ``POST {base_url}/chat/completions``.

Body (keys in this order)::

    {"model": ..., "messages": [{"role": "system", "content": ...},
                                {"role": "user", "content": ...}],
     "max_completion_tokens": N, "stream": false, "reasoning_effort": LEVEL?}

The output cap goes in ``max_completion_tokens`` by default: it is what OpenAI's reasoning
models require (they reject ``max_tokens``) and what pi sends to OpenAI; servers that
only know the older ``max_tokens`` (some local or compatible servers) can be served with
``max_tokens_field="max_tokens"``. ``reasoning_effort`` is the request's level as is
(``minimal``/``low``/``medium``/``high``/``xhigh``), absent when reasoning is off. The key
goes in ``Authorization: Bearer``; ``accept-encoding: identity`` asks for an uncompressed
answer (a compressed one is still read, within the size cap). No ``prompt_cache_key``,
``store`` or ``user`` fields.

Reading: ``choices[0].message.content`` (a string, or a list of parts whose ``text`` are
joined by ``"\\n"``), ``reasoning_content``/``reasoning`` as thinking, ``finish_reason``
mapped like pi (``stop``/``end``/null → stop, ``length`` → length, tool calls → toolUse;
anything else, e.g. ``content_filter``, is an error), usage like pi: ``input =
prompt_tokens - cached_tokens - cache_write_tokens``, ``cacheRead = cached_tokens``,
``output = completion_tokens``, ``totalTokens`` = the sum of the four (as pi computes it;
the server's ``total_tokens`` is equal for OpenAI and otherwise not used).
"""

from __future__ import annotations

from typing import Any, Literal

from pipeline.llm.errors import LLMConfigError, LLMResponseError
from pipeline.llm.http import HTTPSummaryClient, JSONObject, count, obj, text_of
from pipeline.llm.providers import PROVIDERS
from pipeline.llm.types import Completion, StopReason, SummaryRequest
from pipeline.session.messages import Usage

MaxTokensField = Literal["max_completion_tokens", "max_tokens"]
_FINISH: dict[str | None, StopReason] = {
    None: "stop",
    "stop": "stop",
    "end": "stop",
    "length": "length",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
}


class OpenAIChatClient(HTTPSummaryClient):
    """Client for OpenAI's (and compatible servers') chat completions API."""

    provider = "openai"
    default_base_url = PROVIDERS["openai"].base_url
    default_key_env = PROVIDERS["openai"].key_env
    path = "/chat/completions"

    def __init__(self, *, max_tokens_field: MaxTokensField = "max_completion_tokens", **options: Any) -> None:
        if max_tokens_field not in ("max_completion_tokens", "max_tokens"):
            raise LLMConfigError(f"openai: unknown max_tokens_field {max_tokens_field!r}")
        super().__init__(**options)
        self.max_tokens_field = max_tokens_field

    def build_body(self, request: SummaryRequest) -> JSONObject:
        """The chat completions body for ``request`` (see the module docstring)."""
        body: JSONObject = {
            "model": self.resolve_model(request),
            "messages": [
                {"role": "system", "content": request.system_prompt},
                {"role": "user", "content": request.user_text},
            ],
            self.max_tokens_field: request.max_tokens,
            "stream": False,
        }
        if request.reasoning_level:
            body["reasoning_effort"] = request.reasoning_level
        return body

    def _headers(self, key: str) -> dict[str, str]:
        credentials = {"authorization": f"Bearer {key}"} if key else {}  # no key: an anonymous (local) server
        return {
            **credentials,
            "content-type": "application/json",
            "accept": "application/json",
            "accept-encoding": "identity",
        }

    def _parse(self, data: JSONObject, request: SummaryRequest) -> Completion:
        choices = data.get("choices")
        choice = obj(choices[0]) if isinstance(choices, list) and choices else None
        message = obj(choice.get("message")) if choice else None
        if message is None or choice is None:
            raise self.unexpected("no choices[0].message")
        return Completion(
            text=_content_text(message.get("content")),
            thinking=text_of(message.get("reasoning_content")) or text_of(message.get("reasoning")),
            usage=_usage(obj(data.get("usage")) or {}),
            stop_reason=self._stop_reason(choice.get("finish_reason")),
            model=self.resolve_model(request),
            provider=self.provider,
        )

    def _stop_reason(self, finish: object) -> StopReason:
        if isinstance(finish, str) or finish is None:
            mapped = _FINISH.get(finish)
            if mapped:
                return mapped
        raise LLMResponseError(f"{self.provider}: the model stopped with finish_reason {finish!r}")


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = (obj(part) or {} for part in content)
        return "\n".join(p["text"] for p in parts if isinstance(p.get("text"), str))
    return ""


def _usage(raw: JSONObject) -> Usage:
    details = obj(raw.get("prompt_tokens_details")) or {}
    cache_read = count(details.get("cached_tokens"))
    cache_write = count(details.get("cache_write_tokens"))
    uncached = max(0, count(raw.get("prompt_tokens")) - cache_read - cache_write)
    return Usage.of(uncached, count(raw.get("completion_tokens")), cache_read, cache_write)
