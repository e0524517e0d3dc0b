"""Gemini API: ``POST {base_url}/v1beta/models/{model}:generateContent`` (the proxy's summary call
for Gemini CLI's wire).

Body (keys in this order)::

    {"systemInstruction": {"parts": [{"text": SYSTEM}]},
     "contents": [{"role": "user", "parts": [{"text": ...}]}],
     "generationConfig": {"maxOutputTokens": N}}

The model is in the path, the key in ``x-goog-api-key``. A reasoning level is not sent (the
model's default thinking applies).

Reading: the ``text`` parts of ``candidates[0].content`` joined by ``"\\n"`` (parts marked
``thought: true`` as thinking); ``finishReason`` ``STOP`` (or none) → stop, ``MAX_TOKENS`` →
length, anything else (``SAFETY``, ``RECITATION``...) an error; usage ``promptTokenCount``
less ``cachedContentTokenCount``, ``candidatesTokenCount``.
"""

from __future__ import annotations

from pipeline.llm.errors import LLMResponseError
from pipeline.llm.http import HTTPSummaryClient, JSONObject, count, obj
from pipeline.llm.types import Completion, StopReason, SummaryRequest
from pipeline.session.messages import Usage

GEMINI_URL = "https://generativelanguage.googleapis.com"
_FINISH: dict[object, StopReason] = {None: "stop", "STOP": "stop", "MAX_TOKENS": "length"}


class GeminiClient(HTTPSummaryClient):
    """Client for the Gemini API's ``generateContent``."""

    provider = "gemini"
    default_base_url = GEMINI_URL
    default_key_env = "GEMINI_API_KEY"

    @property
    def url(self) -> str:
        """The endpoint: the client's model in the path."""
        return f"{self.base_url}/v1beta/models/{self.model}:generateContent"

    def build_body(self, request: SummaryRequest) -> JSONObject:
        """The ``generateContent`` body for ``request`` (see the module docstring)."""
        return {
            "systemInstruction": {"parts": [{"text": request.system_prompt}]},
            "contents": [{"role": "user", "parts": [{"text": request.user_text}]}],
            "generationConfig": {"maxOutputTokens": request.max_tokens},
        }

    def _headers(self, key: str) -> dict[str, str]:
        credentials = {"x-goog-api-key": key} if key else {}
        return {**credentials, "content-type": "application/json", "accept": "application/json",
                "accept-encoding": "identity"}

    def _parse(self, data: JSONObject, request: SummaryRequest) -> Completion:
        candidates = data.get("candidates")
        candidate = obj(candidates[0]) if isinstance(candidates, list) and candidates else None
        if candidate is None:
            raise self.unexpected("no candidates[0]")
        parts = [p for p in (obj(part) for part in (obj(candidate.get("content")) or {}).get("parts") or [])
                 if p is not None and isinstance(p.get("text"), str)]
        finish = candidate.get("finishReason")
        if finish not in _FINISH:
            raise LLMResponseError(f"{self.provider}: the model stopped with finishReason {finish!r}")
        usage = obj(data.get("usageMetadata")) or {}
        cached = count(usage.get("cachedContentTokenCount"))
        return Completion(
            text="\n".join(str(p["text"]) for p in parts if not p.get("thought")),
            thinking="\n".join(str(p["text"]) for p in parts if p.get("thought")) or None,
            usage=Usage.of(max(0, count(usage.get("promptTokenCount")) - cached),
                           count(usage.get("candidatesTokenCount")), cached, 0),
            stop_reason=_FINISH[finish], model=self.resolve_model(request), provider=self.provider,
        )
