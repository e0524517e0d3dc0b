"""The one client factory bounded by a profile: the chat model's client and the summarizer's
are built here, both with the ``summarizer`` block's timeout, deadline per call, response size
and characters per token. ``Pipeline.summary_client``/``chat_client``,
``compaction.make_summary_client``, ``runtime.model_client`` and ``pipeline run`` call these;
:func:`pipeline.llm.factory.make_client` is the unbounded constructor under them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pipeline.llm.factory import make_client
from pipeline.llm.http import HTTPSummaryClient
from pipeline.llm.limits import Limits

if TYPE_CHECKING:  # pragma: no cover
    from pipeline.llm.chat import ChatClient
    from pipeline.model.run_plan import SummarizerSettings
    from pipeline.model.summary import Summarizer


def profile_bounds(summarizer: "Summarizer | SummarizerSettings") -> dict[str, Any]:
    """The client options the profile's ``summarizer`` block bounds: ``timeout`` and ``limits``."""
    limits = Limits(summarizer.call_deadline_s, summarizer.max_response_bytes, summarizer.max_chars_per_token)
    return {"timeout": summarizer.timeout_s, "limits": limits}


def summarizer_client(summarizer: "Summarizer | SummarizerSettings", *, provider: str | None = None, model: str | None = None,
                      base_url: str | None = None, api_key_env: str | None = None,
                      **options: Any) -> HTTPSummaryClient:
    """An HTTP summary client bounded by ``summarizer``; ``provider``, ``model``, ``base_url`` and
    ``api_key_env`` default to the block's (``pipeline run`` points them at the chat model)."""
    settings: dict[str, Any] = {**profile_bounds(summarizer), "max_retries": summarizer.max_retries, **options}
    return make_client(
        provider or summarizer.provider, model=model if model is not None else summarizer.model or "",
        base_url=base_url if base_url is not None else summarizer.base_url,
        api_key_env=api_key_env if api_key_env is not None else summarizer.api_key_env, **settings,
    )


def chat_client(summarizer: "Summarizer | SummarizerSettings", wire: str, *, model: Any, aborted_text: str, **options: Any) -> "ChatClient":
    """A :class:`pipeline.llm.chat.ChatClient` for ``model`` (a ``TargetModel``) bounded by ``summarizer``;
    ``options`` (``base_url``, ``api_key_env``, ``anonymous``, ``env``, ``timeout``...) as the client's."""
    from pipeline.llm.chat import ChatClient

    return ChatClient(wire, model=model, aborted_text=aborted_text, **{**profile_bounds(summarizer), **options})
