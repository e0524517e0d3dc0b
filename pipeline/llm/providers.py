"""The providers a pipeline speaks to, in one table: per wire name, pi's API name (what a
reply records), the default endpoint and the environment variable that holds the key.

Every default comes from here: the HTTP clients' base URL and key variable
(:mod:`pipeline.llm.openai_chat`, :mod:`pipeline.llm.anthropic_messages`,
:mod:`pipeline.llm.gemini`), the proxy's default upstreams, the API name a
:class:`~pipeline.runtime.host.ModelInfo` records, the variable a key given as a value is
read from (``Pipeline.agent(api_key=...)``), and the variables whose values are redacted
from what the CLI prints.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Provider:
    """One provider's defaults: ``api`` (pi's API name), ``base_url``, ``key_env``."""

    wire: str
    api: str
    base_url: str
    key_env: str


PROVIDERS: dict[str, Provider] = {
    "openai": Provider("openai", "openai-completions", "https://api.openai.com/v1", "OPENAI_API_KEY"),
    "anthropic": Provider("anthropic", "anthropic-messages", "https://api.anthropic.com", "ANTHROPIC_API_KEY"),
    "gemini": Provider("gemini", "google-generative-ai", "https://generativelanguage.googleapis.com", "GEMINI_API_KEY"),
}

#: Every provider's key variable, in the table's order (what the CLI redacts besides the profile's own).
KEY_VARIABLES: tuple[str, ...] = tuple(p.key_env for p in PROVIDERS.values())


def api_name(wire: str) -> str:
    """pi's API name for ``wire`` (a host's own wire name as it is)."""
    provider = PROVIDERS.get(wire)
    return provider.api if provider is not None else wire


def key_variable(wire: str, default: str = "API_KEY") -> str:
    """The variable ``wire``'s key is read from by default (``default`` for a wire not in the table)."""
    provider = PROVIDERS.get(wire)
    return provider.key_env if provider is not None else default
