"""Gemini API: ``POST {base_url}/v1beta/models/{model}:generateContent`` (the proxy's summary call
for Gemini CLI's wire).

Body (keys in this order)::

    {"systemInstruction": {"parts": [{"text": SYSTEM}]},
     "contents": [{"role": "user", "parts": [{"text": ...}]}],
     "generationConfig": {"maxOutputTokens": N}}

The model is in the path, the key in ``x-goog-api-key``.

Thinking, as pi 0.84's Gemini provider asks for it (:func:`thinking_config`), sent only to the
models that think (Gemini 2.5 and later, Gemma 4), whose default is to think when nothing is
said: with a reasoning level, ``generationConfig.thinkingConfig`` is ``{"includeThoughts":
true, ...}`` with a ``thinkingLevel`` (Gemini 3, Gemma 4) or a ``thinkingBudget`` (2.5: pi's
budgets per model family, ``-1``, the model's own, for another); without one (the profile's
``summarizer.reasoning`` off, or ``reasoning_effort: off``) thinking is turned off, or down to
the lowest level where it cannot be (``thinkingBudget: 0``; Gemini 3 Pro ``LOW``, 3 Flash and
Gemma 4 ``MINIMAL``), as for the other providers, whose summaries think only when asked.

Reading: the ``text`` parts of ``candidates[0].content`` joined by ``"\\n"`` (parts marked
``thought: true`` as thinking); ``finishReason`` ``STOP`` (or none) → stop, ``MAX_TOKENS`` →
length, anything else (``SAFETY``, ``RECITATION``...) an error; usage ``promptTokenCount``
less ``cachedContentTokenCount``, ``candidatesTokenCount``.
"""

from __future__ import annotations

import re

from pipeline.llm.errors import LLMResponseError
from pipeline.llm.http import HTTPSummaryClient, JSONObject
from pipeline.llm.providers import PROVIDERS
from pipeline.llm.types import StopReason, SummaryRequest
from pipeline.llm.wire import gemini

_FINISH: dict[object, StopReason] = {None: "stop", "STOP": "stop", "MAX_TOKENS": "length"}
#: pi 0.84's thinking budgets of the Gemini 2.5 families (the most specific name first)
BUDGETS = (("2.5-pro", {"minimal": 128, "low": 2048, "medium": 8192, "high": 32768}),
           ("2.5-flash-lite", {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576}),
           ("2.5-flash", {"minimal": 128, "low": 2048, "medium": 8192, "high": 24576}))
_THINKS = re.compile(r"gemini-(?:2\.5|[3-9]|[1-9]\d)|gemma-?4|gemini-flash(?:-lite)?-latest")
_LEVELS_3 = re.compile(r"gemini-(?:[3-9]|[1-9]\d)(?:\.\d+)?-|gemma-?4|gemini-flash(?:-lite)?-latest")
_PRO_3 = re.compile(r"gemini-(?:[3-9]|[1-9]\d)(?:\.\d+)?-pro")


def thinking_config(model: str, level: str | None) -> JSONObject | None:
    """The ``thinkingConfig`` of a summary call to ``model`` at reasoning ``level`` (None: off);
    None for a model that does not think (nothing is sent)."""
    name = model.lower()
    if not _THINKS.search(name):
        return None
    levels = bool(_LEVELS_3.search(name))
    pro = bool(_PRO_3.search(name))
    if level is None:
        if not levels:
            return {"thinkingBudget": 0}
        return {"thinkingLevel": "LOW" if pro else "MINIMAL"}  # these cannot turn thinking off
    effort = "high" if level == "xhigh" else level  # no Gemini has a level above high
    if levels:
        if pro or "gemma" in name:
            named = ("LOW" if pro else "MINIMAL") if effort in ("minimal", "low") else "HIGH"
        else:
            named = effort.upper()
        return {"includeThoughts": True, "thinkingLevel": named}
    budget = next((b[effort] for family, b in BUDGETS if family in name), -1)
    return {"includeThoughts": True, "thinkingBudget": budget}


class GeminiClient(HTTPSummaryClient):
    """Client for the Gemini API's ``generateContent``."""

    provider = "gemini"
    default_base_url = PROVIDERS["gemini"].base_url
    default_key_env = PROVIDERS["gemini"].key_env

    @property
    def url(self) -> str:
        """The endpoint: the client's model in the path."""
        return f"{self.base_url}/v1beta/models/{self.model}:generateContent"

    def build_body(self, request: SummaryRequest) -> JSONObject:
        """The ``generateContent`` body for ``request`` (see the module docstring)."""
        return gemini.summary_body(request.system_prompt, request.user_text, request.max_tokens,
                                   thinking=thinking_config(self.model, request.reasoning_level))

    key_header, key_prefix = "x-goog-api-key", ""

    read_summary = staticmethod(gemini.read_summary)
    unreadable = "no candidates[0]"

    def _stop_reason(self, finish: object) -> StopReason:
        if finish not in _FINISH:
            raise LLMResponseError(f"{self.provider}: the model stopped with finishReason {finish!r}")
        return _FINISH[finish]
