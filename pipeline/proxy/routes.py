"""Which provider a request is for, and where it goes upstream.

Each agent speaks its provider's wire format to the base URL it is given:

* Claude Code (``ANTHROPIC_BASE_URL=http://HOST:PORT``): ``/v1/messages`` (and
  ``/v1/messages/count_tokens``) to ``{anthropic}/v1/...``;
* OpenAI clients (``base_url=http://HOST:PORT/v1``): ``/v1/chat/completions`` and
  ``/v1/responses`` to ``{openai}/chat/completions`` and ``{openai}/responses``; the
  ``--openai-url`` holds its version segment, as clients' base URLs do;
* Gemini CLI (``GOOGLE_GEMINI_BASE_URL=http://HOST:PORT``):
  ``/v1beta/models/M:generateContent`` and ``:streamGenerateContent`` to ``{gemini}/v1beta/...``.

The paths above go where they say whatever the headers. Every other path passes through
unchanged to the upstream its shape names: ``/v1beta/...`` to Gemini, a request carrying
Anthropic's ``anthropic-version`` or ``x-api-key`` header to Anthropic, the rest of ``/v1/...`` to OpenAI (its version segment replaced by the one of
``--openai-url``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Mapping, Optional

from pipeline.llm.providers import PROVIDERS

Provider = Literal["anthropic", "openai", "gemini"]
#: what the policy can read and rewrite; ``passthrough`` is forwarded byte for byte
Kind = Literal["messages", "chat", "responses", "gemini", "passthrough"]

ANTHROPIC_URL = PROVIDERS["anthropic"].base_url
OPENAI_URL = PROVIDERS["openai"].base_url
GEMINI_URL = PROVIDERS["gemini"].base_url

_GEMINI_CALL = re.compile(r"/v1beta/models/([^/:]+):(generateContent|streamGenerateContent)")


@dataclass(frozen=True)
class Upstreams:
    """The providers' base URLs (no trailing slash)."""

    anthropic: str = ANTHROPIC_URL
    openai: str = OPENAI_URL
    gemini: str = GEMINI_URL

    def __post_init__(self) -> None:
        for name in ("anthropic", "openai", "gemini"):
            object.__setattr__(self, name, getattr(self, name).rstrip("/"))


@dataclass(frozen=True)
class Route:
    """One request's provider, what the policy sees in it, and the upstream URL (query kept)."""

    provider: Provider
    kind: Kind
    url: str
    #: the Gemini model named in the path (Gemini's body does not name it)
    model: Optional[str] = None

    @property
    def streaming_path(self) -> bool:
        return self.kind == "gemini" and ":streamGenerateContent" in self.url


def route(path: str, query: str, headers: Mapping[str, str], upstreams: Upstreams) -> Route:
    """The route of a request for ``path`` (``headers`` with lower-case names)."""
    tail = f"?{query}" if query else ""
    gemini = _GEMINI_CALL.fullmatch(path)
    if gemini:
        return Route("gemini", "gemini", f"{upstreams.gemini}{path}{tail}", gemini.group(1))
    if path.startswith("/v1beta/"):
        return Route("gemini", "passthrough", f"{upstreams.gemini}{path}{tail}")
    if path == "/v1/messages":
        return Route("anthropic", "messages", f"{upstreams.anthropic}{path}{tail}")
    rest = path[len("/v1"):] if path.startswith("/v1/") else path
    if rest == "/chat/completions":
        return Route("openai", "chat", f"{upstreams.openai}{rest}{tail}")
    if rest == "/responses":
        return Route("openai", "responses", f"{upstreams.openai}{rest}{tail}")
    if path.startswith("/v1/messages/") or "anthropic-version" in headers or "x-api-key" in headers:
        return Route("anthropic", "passthrough", f"{upstreams.anthropic}{path}{tail}")
    return Route("openai", "passthrough", f"{upstreams.openai}{rest}{tail}")
