"""LLM client layer: send a summary request, get a completion back.

Provider-neutral types (:class:`SummaryRequest`, :class:`Completion`; usage is :class:`pipeline.session.Usage`),
two HTTP wire formats on httpx (:class:`OpenAIChatClient`, :class:`AnthropicMessagesClient`),
one retry policy (:mod:`pipeline.llm.retry`) and :func:`make_client`. Every provider format is
built and read in one place, the wire layer :mod:`pipeline.llm.wire` (standard library only).
This package only transports what the caller gives: it holds no prompt text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.lazy import lazy_attributes

from pipeline.llm.errors import (
    LLMAuthError,
    LLMConfigError,
    LLMConnectionError,
    LLMEmptyCompletionError,
    LLMError,
    LLMResponseError,
    LLMRetriesExhaustedError,
    LLMRetryDelayError,
    LLMStatusError,
    LLMTimeoutError,
)
from pipeline.llm.deadline import LLMDeadlineError, compaction_deadline, within

# The HTTP side (httpx) is imported on first use, so code that only needs the types
# (the compaction engine, the offline summarizer, CLI start-up) does not pay for it; the
# types (they read pi's usage from the session layer) too, so the wire layer
# (:mod:`pipeline.llm.wire`, standard library only) stays light for the loopback servers.
_LAZY = {
    **dict.fromkeys(("REASONING_LEVELS", "Completion", "StopReason", "SummaryClient", "SummaryRequest"), "types"),
    **dict.fromkeys(("AnthropicMessagesClient", "thinking_budget"), "anthropic_messages"),
    "make_client": "factory",
    "HTTPSummaryClient": "http",
    **dict.fromkeys(("Limits", "LLMResponseTooLargeError", "LLMSummaryTooLongError"), "limits"),
    "OpenAIChatClient": "openai_chat",
    **dict.fromkeys(("RetryPolicy", "call_with_retries", "is_retryable_status", "parse_retry_after"), "retry"),
}

if TYPE_CHECKING:  # pragma: no cover
    from pipeline.llm.types import REASONING_LEVELS, Completion, StopReason, SummaryClient, SummaryRequest
    from pipeline.llm.anthropic_messages import AnthropicMessagesClient, thinking_budget
    from pipeline.llm.factory import make_client
    from pipeline.llm.http import HTTPSummaryClient
    from pipeline.llm.limits import Limits, LLMResponseTooLargeError, LLMSummaryTooLongError
    from pipeline.llm.openai_chat import OpenAIChatClient
    from pipeline.llm.retry import RetryPolicy, call_with_retries, is_retryable_status, parse_retry_after


#: the HTTP-side names, imported on first access
__getattr__ = lazy_attributes(__name__, globals(), _LAZY)


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "AnthropicMessagesClient", "Completion", "HTTPSummaryClient", "LLMAuthError", "LLMConfigError",
    "LLMConnectionError", "LLMDeadlineError", "LLMEmptyCompletionError", "LLMError", "LLMResponseError",
    "LLMResponseTooLargeError", "LLMRetriesExhaustedError", "LLMRetryDelayError", "LLMStatusError",
    "LLMSummaryTooLongError", "LLMTimeoutError", "Limits", "OpenAIChatClient", "REASONING_LEVELS", "RetryPolicy",
    "StopReason", "SummaryClient", "SummaryRequest", "call_with_retries", "compaction_deadline",
    "is_retryable_status", "make_client", "parse_retry_after", "thinking_budget", "within",
]
