"""OpenAI Responses API: ``POST {base_url}/responses`` (the proxy's summary call for Codex's wire).

Body (keys in this order)::

    {"model": ..., "instructions": SYSTEM, "input": [{"type": "message", "role": "user",
     "content": [{"type": "input_text", "text": ...}]}], "max_output_tokens": N,
     "stream": false, "store": false, "reasoning": {"effort": LEVEL}?}

``store: false``: the summary call leaves nothing stored at the provider. The key goes in
``Authorization: Bearer``.

Reading: the ``output_text`` parts of the ``message`` items joined by ``"\\n"``, the
``summary_text`` of ``reasoning`` items as thinking; ``status`` ``completed`` → stop,
``incomplete`` for ``max_output_tokens`` → length (anything else is an error); usage
``input_tokens`` (less ``input_tokens_details.cached_tokens``), ``output_tokens``.
"""

from __future__ import annotations

from pipeline.llm.errors import LLMResponseError
from pipeline.llm.http import JSONObject, answer_completion
from pipeline.llm.openai_chat import OpenAIChatClient
from pipeline.llm.types import Completion, StopReason, SummaryRequest
from pipeline.llm.wire import responses


class OpenAIResponsesClient(OpenAIChatClient):
    """Client for OpenAI's Responses API (the chat client's endpoint, key and headers)."""

    path = "/responses"

    def build_body(self, request: SummaryRequest) -> JSONObject:
        """The Responses body for ``request`` (see the module docstring)."""
        return responses.summary_body(self.resolve_model(request), request.system_prompt, request.user_text,
                                      request.max_tokens, reasoning_level=request.reasoning_level)

    def _parse(self, data: JSONObject, request: SummaryRequest) -> Completion:
        answer = responses.read_summary(data)
        if answer is None:
            raise self.unexpected("no output list")
        return answer_completion(answer, self._status(*answer.stop), self.resolve_model(request), self.provider)

    def _status(self, status: object, reason: object) -> StopReason:
        if status == "completed":
            return "stop"
        if status == "incomplete" and reason == "max_output_tokens":
            return "length"
        raise LLMResponseError(f"{self.provider}: the response ended with status {status!r} ({reason!r})")
