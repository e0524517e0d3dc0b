"""``make_client``: a summary client from a provider name and plain settings (the profile-bounded
clients are built by :mod:`pipeline.llm.clients` on top of it)."""

from __future__ import annotations

import os
import random
import time
from typing import TYPE_CHECKING, Callable, Mapping

from pipeline.errors import did_you_mean
from pipeline.llm.anthropic_messages import AnthropicMessagesClient
from pipeline.llm.errors import LLMConfigError
from pipeline.llm.http import DEFAULT_TIMEOUT, HTTPSummaryClient
from pipeline.llm.limits import Limits
from pipeline.llm.openai_chat import OpenAIChatClient
from pipeline.llm.retry import Jitter, RetryPolicy

if TYPE_CHECKING:  # pragma: no cover
    import httpx

CLIENTS: dict[str, type[HTTPSummaryClient]] = {
    "openai": OpenAIChatClient,
    "anthropic": AnthropicMessagesClient,
}
#: Variable read for the key when no name is given, per provider.
DEFAULT_KEY_ENV = {name: cls.default_key_env for name, cls in CLIENTS.items()}


def make_client(
    provider: str,
    *,
    model: str,
    base_url: str | None = None,
    api_key_env: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_retries: int = 3,
    base_delay: float = 2.0,
    max_delay: float = 60.0,
    jitter: Jitter = "equal",
    limits: Limits | None = None,
    env: Mapping[str, str] = os.environ,
    transport: httpx.BaseTransport | None = None,
    http_client: httpx.Client | None = None,
    sleep: Callable[[float], object] = time.sleep,
    rng: Callable[[], float] = random.random,
    anonymous: bool = False,
) -> HTTPSummaryClient:
    """A client for ``provider`` ("openai" or "anthropic").

    ``api_key_env`` is the *name* of the variable holding the key (default
    ``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY``); it is read from ``env`` at each call, so
    building a client (and ``build_body``) works without a key. ``timeout`` is per HTTP
    request in seconds; the retry settings are those of :class:`RetryPolicy`; ``limits``
    (deadline per call, response size, summary length) those of :class:`Limits`. A name
    that is not a variable name, or looks like a key, is refused without being shown.
    """
    if api_key_env is not None:
        _check_env_name(api_key_env)
    cls = CLIENTS.get(provider)
    if cls is None:
        raise LLMConfigError(
            f"unknown summarizer provider {provider!r}; expected one of {', '.join(CLIENTS)}",
            hint=did_you_mean(str(provider), CLIENTS),
        )
    policy = RetryPolicy(max_retries=max_retries, base_delay=base_delay, max_delay=max_delay, jitter=jitter)
    return cls(model=model, base_url=base_url, api_key_env=api_key_env, timeout=timeout, retry=policy, limits=limits,
               env=env, http_client=http_client, transport=transport, sleep=sleep, rng=rng, anonymous=anonymous)


def _check_env_name(name: str) -> None:
    """The profile front end's rule for ``api_key_env``, for clients built directly."""
    from pipeline.model.envname import ENV_NAME_HINT, env_name_problem

    wrong = env_name_problem(name)
    if wrong:
        raise LLMConfigError(f"api_key_env {wrong}", hint=ENV_NAME_HINT)

