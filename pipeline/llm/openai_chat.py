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
from pipeline.llm.http import HTTPSummaryClient, JSONObject, answer_completion
from pipeline.llm.providers import PROVIDERS
from pipeline.llm.types import Completion, StopReason, SummaryRequest
from pipeline.llm.wire import chat

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
        return chat.summary_body(self.resolve_model(request), request.system_prompt, request.user_text,
                                 request.max_tokens, max_tokens_field=self.max_tokens_field,
                                 reasoning_level=request.reasoning_level)

    def _headers(self, key: str) -> dict[str, str]:
        credentials = {"authorization": f"Bearer {key}"} if key else {}  # no key: an anonymous (local) server
        return {
            **credentials,
            "content-type": "application/json",
            "accept": "application/json",
            "accept-encoding": "identity",
        }

    def _parse(self, data: JSONObject, request: SummaryRequest) -> Completion:
        answer = chat.read_summary(data)
        if answer is None:
            raise self.unexpected("no choices[0].message")
        return answer_completion(answer, self._stop_reason(answer.stop), self.resolve_model(request), self.provider)

    def _stop_reason(self, finish: object) -> StopReason:
        if isinstance(finish, str) or finish is None:
            mapped = _FINISH.get(finish)
            if mapped:
                return mapped
        raise LLMResponseError(f"{self.provider}: the model stopped with finish_reason {finish!r}")
