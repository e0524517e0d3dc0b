"""The proxy's own errors, each in the error shape of the provider the client speaks.

A client parses an error from its provider's body (Anthropic's ``{"type": "error", "error":
{"type", "message"}}``, OpenAI's ``{"error": {"message", "type", "code"}}``, Gemini's
``{"error": {"code", "message", "status"}}``), so an error the proxy makes (a body too large,
malformed JSON, an upstream that cannot be reached or is too slow) is written in that shape,
and the agent reports it as it would the provider's. An answer already streaming when it fails
ends with the error as one more event of the stream (:func:`error_event`): Anthropic's SDKs
raise on an ``event: error``, OpenAI's on a payload holding ``error``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pipeline.llm.wire import anthropic, chat, gemini, sse
from pipeline.proxy.routes import Provider

@dataclass(frozen=True)
class ProxyFailure(Exception):
    """An error the proxy answers itself: an HTTP status and a message naming what is wrong."""

    status: int
    message: str

    def __str__(self) -> str:
        return self.message


def error_body(provider: Provider, status: int, message: str) -> bytes:
    """``message`` as ``provider`` writes an error with HTTP ``status`` (the shapes are the wire layer's)."""
    return json.dumps(_error(provider, status, message)).encode()


def error_event(provider: Provider, status: int, message: str) -> bytes:
    """:func:`error_body` as the last event of a stream: ``event: error`` and the body as its data."""
    return sse.event_frame("error", _error(provider, status, message)).encode()


def _error(provider: Provider, status: int, message: str) -> object:
    text = f"context-pipeline proxy: {message}"
    if provider == "anthropic":
        return anthropic.error_body(status, text)
    if provider == "gemini":
        return gemini.error_body(status, text)
    return chat.error_body(status, text)
