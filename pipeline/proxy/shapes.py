"""The proxy's own errors, each in the error shape of the provider the client speaks.

A client parses an error from its provider's body (Anthropic's ``{"type": "error", "error":
{"type", "message"}}``, OpenAI's ``{"error": {"message", "type", "code"}}``, Gemini's
``{"error": {"code", "message", "status"}}``), so an error the proxy makes (a body too large,
malformed JSON, an upstream that cannot be reached or is too slow) is written in that shape,
and the agent reports it as it would the provider's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from pipeline.proxy.routes import Provider

_ANTHROPIC_TYPES = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
                    413: "request_too_large", 502: "api_error", 504: "api_error"}
_OPENAI_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error",
                 413: "invalid_request_error", 502: "server_error", 504: "server_error"}
_GEMINI_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 404: "NOT_FOUND", 413: "INVALID_ARGUMENT",
                  502: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}


@dataclass(frozen=True)
class ProxyFailure(Exception):
    """An error the proxy answers itself: an HTTP status and a message naming what is wrong."""

    status: int
    message: str

    def __str__(self) -> str:
        return self.message


def error_body(provider: Provider, status: int, message: str) -> bytes:
    """``message`` as ``provider`` writes an error with HTTP ``status``."""
    text = f"context-pipeline proxy: {message}"
    body: object
    if provider == "anthropic":
        body = {"type": "error", "error": {"type": _ANTHROPIC_TYPES.get(status, "api_error"), "message": text}}
    elif provider == "gemini":
        body = {"error": {"code": status, "message": text, "status": _GEMINI_STATUS.get(status, "INTERNAL")}}
    else:
        body = {"error": {"message": text, "type": _OPENAI_TYPES.get(status, "server_error"), "param": None,
                          "code": None}}
    return json.dumps(body).encode()
