"""Anthropic messages API: ``POST {base_url}/v1/messages``.

Body (keys in this order)::

    {"model": ..., "max_tokens": N, "system": ...,
     "messages": [{"role": "user", "content": [{"type": "text", "text": ...}]}],
     "thinking": {"type": "enabled", "budget_tokens": B}?}

``system`` is a plain string (no ``cache_control`` anywhere) and is left out when empty
(the API rejects empty text). Headers: ``x-api-key``, ``anthropic-version: 2023-06-01``,
``accept-encoding: identity``; no beta or caching headers.

Reasoning → thinking budget: pi's budgets per level (``minimal`` 1024, ``low`` 2048,
``medium`` 8192, ``high`` and ``xhigh`` 16384), cut to ``max_tokens - 1024`` so at least
1024 tokens stay for the answer (pi's ``MIN_ANSWER_TOKENS``). ``max_tokens`` is sent as
the request gives it (pi would add the budget on top, up to the model's output limit,
which this layer does not know). A budget below 1024 (the API's minimum, i.e.
``max_tokens < 2048``) means no ``thinking`` field: reasoning is dropped, not faked.

Reading: ``text`` blocks joined by ``"\\n"``, ``thinking`` blocks joined by ``"\\n"``,
``stop_reason`` mapped like pi (``end_turn``/``stop_sequence``/``pause_turn`` → stop,
``max_tokens`` → length, ``tool_use`` → toolUse; ``refusal`` and anything else are errors),
usage ``input_tokens``/``output_tokens``/``cache_read_input_tokens``/
``cache_creation_input_tokens``, ``totalTokens`` = their sum (as pi computes it).
"""

from __future__ import annotations

from pipeline.llm.errors import LLMResponseError
from pipeline.llm.http import HTTPSummaryClient, JSONObject, answer_completion
from pipeline.llm.providers import PROVIDERS
from pipeline.llm.types import Completion, StopReason, SummaryRequest
from pipeline.llm.wire import anthropic

API_VERSION = "2023-06-01"
MIN_ANSWER_TOKENS = 1024
MIN_THINKING_BUDGET = 1024
THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 16384}
_STOP: dict[str, StopReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "tool_use": "toolUse",
}


def thinking_budget(level: str | None, max_tokens: int) -> int | None:
    """Thinking budget for a reasoning level under ``max_tokens``, or ``None`` for no thinking."""
    if level is None:
        return None
    budget = min(THINKING_BUDGETS[level], max_tokens - MIN_ANSWER_TOKENS)
    return budget if budget >= MIN_THINKING_BUDGET else None


class AnthropicMessagesClient(HTTPSummaryClient):
    """Client for Anthropic's messages API."""

    provider = "anthropic"
    default_base_url = PROVIDERS["anthropic"].base_url
    default_key_env = PROVIDERS["anthropic"].key_env
    path = "/v1/messages"

    def build_body(self, request: SummaryRequest) -> JSONObject:
        """The messages body for ``request`` (see the module docstring)."""
        return anthropic.summary_body(self.resolve_model(request), request.system_prompt, request.user_text,
                                      request.max_tokens,
                                      thinking_budget=thinking_budget(request.reasoning_level, request.max_tokens))

    def _headers(self, key: str) -> dict[str, str]:
        credentials = {"x-api-key": key} if key else {}  # no key: an anonymous (local) server
        return {
            **credentials,
            "anthropic-version": API_VERSION,
            "content-type": "application/json",
            "accept": "application/json",
            "accept-encoding": "identity",
        }

    def _parse(self, data: JSONObject, request: SummaryRequest) -> Completion:
        answer = anthropic.read_summary(data)
        if answer is None:
            raise self.unexpected("no content list")
        return answer_completion(answer, self._stop_reason(answer.stop), self.resolve_model(request), self.provider)

    def _stop_reason(self, raw: object) -> StopReason:
        mapped = _STOP.get(raw) if isinstance(raw, str) else None
        if mapped is None:
            raise LLMResponseError(f"{self.provider}: the model stopped with stop_reason {raw!r}")
        return mapped
