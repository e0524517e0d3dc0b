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
from pipeline.llm.http import HTTPSummaryClient, JSONObject, answer_completion
from pipeline.llm.providers import PROVIDERS
from pipeline.llm.types import Completion, StopReason, SummaryRequest
from pipeline.llm.wire import gemini

_FINISH: dict[object, StopReason] = {None: "stop", "STOP": "stop", "MAX_TOKENS": "length"}


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
        return gemini.summary_body(request.system_prompt, request.user_text, request.max_tokens)

    def _headers(self, key: str) -> dict[str, str]:
        credentials = {"x-goog-api-key": key} if key else {}
        return {**credentials, "content-type": "application/json", "accept": "application/json",
                "accept-encoding": "identity"}

    def _parse(self, data: JSONObject, request: SummaryRequest) -> Completion:
        answer = gemini.read_summary(data)
        if answer is None:
            raise self.unexpected("no candidates[0]")
        if answer.stop not in _FINISH:
            raise LLMResponseError(f"{self.provider}: the model stopped with finishReason {answer.stop!r}")
        return answer_completion(answer, _FINISH[answer.stop], self.resolve_model(request), self.provider)
