"""Classifying an assistant reply the way pi-ai 0.84.0 does (docs/pi-rules.md#overflow, docs/pi-rules.md#retries, table docs/pi-rules.md#runtime-decisions).

Three questions decide what the runtime does after a reply:

* :func:`is_context_overflow` — did the request not fit the model's context window?
  (pi-ai ``isContextOverflow``; overflow is recovered by compaction, never retried)
* :func:`is_recoverable_length` — did a ``length`` stop end below the model's max output?
  (pi-ai ``isRecoverableLength``; recovered like an overflow)
* :func:`is_retryable_error` — is the error transient (load, network, 5xx)?
  (pi-ai ``isRetryableAssistantError``; retried with backoff)

:func:`is_turn_retryable` combines the last two rules as pi's agent session does: a
transient error that is not an overflow.

The pattern lists below are **data** matched against provider error messages — text the
model never sees — so they live here, in one place. They are pi-ai 0.84.0's lists (the
oracle's ``constants`` op prints the overflow list as ``overflowPatterns``), translated
from JavaScript regular expressions to Python ones with the same meaning:

* JS ``/…/i`` without the ``u`` flag folds case for ASCII letters only (``K``, the Kelvin
  sign, does not match ``k``): Python ``re.IGNORECASE | re.ASCII`` does the same for these
  all-ASCII patterns, and makes ``\\d`` mean ``[0-9]`` as in JS;
* JS ``\\s`` is JavaScript's whitespace set (:data:`pipeline.js.JS_WS_RE`);
* JS ``.`` is one UTF-16 unit other than a line terminator (LF, CR, U+2028, U+2029): it
  never matches a newline, and ``.?`` cannot step over an astral character (two units),
  so ``rate😀limit`` is not ``rate.?limit``.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any, Mapping, Union

from pipeline.js import JS_WS_RE
from pipeline.session.messages import AssistantMessage, Usage

#: An assistant reply: the session package's typed message, or its JSON object.
Reply = Union[AssistantMessage, Mapping[str, Any]]

# --------------------------------------------------------------------------- pattern data

#: pi-ai ``OVERFLOW_PATTERNS`` (JS regex sources, all case-insensitive), in pi's order.
OVERFLOW_PATTERNS: tuple[str, ...] = (
    r"prompt is too long",
    r"request_too_large",
    r"input is too long for requested model",
    r"exceeds the context window",
    r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))",
    r"input token count.*exceeds the maximum",
    r"maximum prompt length is \d+",
    r"reduce the length of the messages",
    r"maximum context length is \d+ tokens",
    r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",
    r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",
    r"exceeds the limit of \d+",
    r"exceeds the available context size",
    r"greater than the context length",
    r"context window exceeds limit",
    r"exceeded model token limit",
    r"too large for model with \d+ maximum context length",
    r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?",
    r"model_context_window_exceeded",
    r"prompt too long; exceeded (?:max )?context length",
    r"range of input length should be",
    r"context[_ ]length[_ ]exceeded",
    r"too many tokens",
    r"token limit exceeded",
    r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)",
)

#: pi-ai ``NON_OVERFLOW_PATTERNS``: an error matching one of these is never an overflow.
NON_OVERFLOW_PATTERNS: tuple[str, ...] = (
    r"^(Throttling error|Service unavailable):",
    r"rate limit",
    r"too many requests",
)

#: pi-ai ``NON_RETRYABLE_PROVIDER_LIMIT_ERROR_PATTERN`` alternatives: quota and billing
#: exhaustion, which waiting does not fix.
NON_RETRYABLE_PATTERNS: tuple[str, ...] = (
    "GoUsageLimitError",
    "FreeUsageLimitError",
    "Monthly usage limit reached",
    "available balance",
    "insufficient_quota",
    "out of budget",
    "quota exceeded",
    "billing",
)

#: pi-ai ``RETRYABLE_PROVIDER_ERROR_PATTERN`` alternatives (0.84.0; 0.84.4 adds one more).
#: ``.?`` = any one character or none, so ``rate.?limit`` matches ``rate-limit``/``ratelimit``.
RETRYABLE_PATTERNS: tuple[str, ...] = (
    "overloaded", "rate.?limit", "too many requests",
    "429", "500", "502", "503", "504", "524",
    "service.?unavailable", "server.?error", "internal.?error", "provider.?returned.?error",
    "network.?error", "connection.?error", "connection.?refused", "connection.?lost",
    "other side closed", "fetch failed", "getaddrinfo", "ENOTFOUND", "EAI_AGAIN",
    "upstream.?connect", "reset before headers", "socket hang up", "socket connection was closed",
    "timed? out", "timeout", "terminated",
    "websocket.?closed", "websocket.?error",
    "ended without", "stream ended before message_stop",
    "stream ended before a terminal response event", "http2 request did not get a response",
    "retry delay",
    "you can retry your request", "try your request again", "please retry your request",
    "ResourceExhausted",
)

#: Share of the window a zero-output ``length`` stop must reach to count as an overflow.
LENGTH_OVERFLOW_SHARE = 0.99

# --------------------------------------------------------------------------- JS regex → Python

_JS_DOT = "[^\\n\\r\\u2028\\u2029\\U00010000-\\U0010ffff]"  # one UTF-16 unit, BMP only
_JS_DOT_STAR = "[^\\n\\r\\u2028\\u2029]*"  # any run of units; astral chars are two units
_JS_TOKEN = re.compile(r"\\.|\.\*|\.")


def js_regex(source: str) -> re.Pattern[str]:
    """Compile a JavaScript ``/source/i`` regex (non-Unicode mode) as an equivalent Python one.

    Handles what pi's lists use: ``.``, ``.*``, ``\\s``, ``\\d`` and ASCII-only case folding.
    """

    def translate(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "\\s":
            return JS_WS_RE
        if token == ".*":
            return _JS_DOT_STAR
        if token == ".":
            return _JS_DOT
        return token

    return re.compile(_JS_TOKEN.sub(translate, source), re.IGNORECASE | re.ASCII)


def _any_of(sources: tuple[str, ...]) -> re.Pattern[str]:
    return js_regex("|".join(sources))


@cache
def _compiled() -> tuple[tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...], re.Pattern[str], re.Pattern[str]]:
    """The pattern lists compiled, on the first failed reply (a run that succeeds needs none)."""
    return (tuple(js_regex(s) for s in OVERFLOW_PATTERNS), tuple(js_regex(s) for s in NON_OVERFLOW_PATTERNS),
            _any_of(NON_RETRYABLE_PATTERNS), _any_of(RETRYABLE_PATTERNS))

# --------------------------------------------------------------------------- classifiers


def as_reply(message: Reply) -> AssistantMessage:
    """The typed view of an assistant reply (a JSON object is parsed leniently)."""
    return message if isinstance(message, AssistantMessage) else AssistantMessage.from_json(message)


def _usage(reply: AssistantMessage) -> Usage:
    """The reply's usage; a missing one reads as all zeros (pi-ai would throw)."""
    return reply.usage if reply.usage is not None else _ZERO_USAGE


_ZERO_USAGE = Usage()


def _error_text(reply: AssistantMessage) -> str | None:
    """The error message of an ``error`` reply, or ``None`` (no message, or not an error)."""
    if reply.stop_reason != "error" or not reply.error_message:
        return None
    return reply.error_message


def is_overflow_text(text: str) -> bool:
    """An error text that reports a context overflow (docs/pi-rules.md#overflow rule 1)."""
    overflow, non_overflow, _, _ = _compiled()
    if any(p.search(text) for p in non_overflow):
        return False
    return any(p.search(text) for p in overflow)


def is_context_overflow(message: Reply, context_window: int | float | None) -> bool:
    """pi-ai ``isContextOverflow`` (docs/pi-rules.md#overflow).

    True for (1) an ``error`` reply whose message matches an overflow pattern and no
    non-overflow pattern; (2) a ``stop`` reply whose ``input + cacheRead`` exceeds the
    window (a silent overflow); (3) a ``length`` reply with zero output whose
    ``input + cacheRead`` reaches 99 % of the window. Rules 2 and 3 need a known window
    (``None`` or ``0`` = unknown).
    """
    reply = as_reply(message)
    text = _error_text(reply)
    if text is not None and is_overflow_text(text):
        return True
    if not context_window:
        return False
    usage = _usage(reply)
    prompt = usage.input + usage.cache_read
    if reply.stop_reason == "stop":
        return prompt > context_window
    if reply.stop_reason == "length" and usage.output == 0:
        return prompt >= context_window * LENGTH_OVERFLOW_SHARE
    return False


def is_recoverable_length(message: Reply, model_max_tokens: int | float | None) -> bool:
    """pi-ai ``isRecoverableLength``: a ``length`` stop whose output is below the model's max output.

    ``model_max_tokens`` is the model's own output limit (not a clamped request limit);
    ``None`` or ``0`` (unknown) means never.
    """
    reply = as_reply(message)
    if reply.stop_reason != "length" or not model_max_tokens or model_max_tokens <= 0:
        return False
    return _usage(reply).output < model_max_tokens


def is_retryable_text(text: str) -> bool:
    """An error text that reports a transient failure (docs/pi-rules.md#retries): a retryable pattern
    matches and no quota/billing pattern does. Substring semantics: ``5000`` contains ``500``."""
    _, _, non_retryable, retryable = _compiled()
    if non_retryable.search(text):
        return False
    return retryable.search(text) is not None


def is_retryable_error(message: Reply) -> bool:
    """pi-ai ``isRetryableAssistantError``: an ``error`` reply with a transient error message.

    This does not exclude overflows; see :func:`is_turn_retryable`.
    """
    text = _error_text(as_reply(message))
    return text is not None and is_retryable_text(text)


def is_turn_retryable(message: Reply, context_window: int | float | None) -> bool:
    """pi's agent-turn rule (``AgentSession._isRetryableError``, docs/pi-rules.md#retries): transient and
    not an overflow — overflows are recovered by compaction, never retried."""
    reply = as_reply(message)
    return not is_context_overflow(reply, context_window) and is_retryable_error(reply)
