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
from pipeline.llm.http import JSONObject, count, obj
from pipeline.llm.openai_chat import OpenAIChatClient
from pipeline.llm.types import Completion, StopReason, SummaryRequest
from pipeline.session.messages import Usage


class OpenAIResponsesClient(OpenAIChatClient):
    """Client for OpenAI's Responses API (the chat client's endpoint, key and headers)."""

    path = "/responses"

    def build_body(self, request: SummaryRequest) -> JSONObject:
        """The Responses body for ``request`` (see the module docstring)."""
        body: JSONObject = {
            "model": self.resolve_model(request),
            "instructions": request.system_prompt,
            "input": [{"type": "message", "role": "user",
                       "content": [{"type": "input_text", "text": request.user_text}]}],
            "max_output_tokens": request.max_tokens,
            "stream": False,
            "store": False,
        }
        if request.reasoning_level:
            body["reasoning"] = {"effort": request.reasoning_level}
        return body

    def _parse(self, data: JSONObject, request: SummaryRequest) -> Completion:
        output = data.get("output")
        if not isinstance(output, list):
            raise self.unexpected("no output list")
        items = [i for i in (obj(item) for item in output) if i is not None]
        texts = [str(p.get("text")) for i in items if i.get("type") == "message"
                 for p in (obj(part) or {} for part in i.get("content") or []) if p.get("type") == "output_text"]
        thinking = [str(s.get("text")) for i in items if i.get("type") == "reasoning"
                    for s in (obj(part) or {} for part in i.get("summary") or []) if isinstance(s.get("text"), str)]
        return Completion(text="\n".join(texts), thinking="\n".join(thinking) or None,
                          usage=_usage(obj(data.get("usage")) or {}), stop_reason=self._status(data),
                          model=self.resolve_model(request), provider=self.provider)

    def _status(self, data: JSONObject) -> StopReason:
        status = data.get("status")
        if status == "completed":
            return "stop"
        reason = (obj(data.get("incomplete_details")) or {}).get("reason")
        if status == "incomplete" and reason == "max_output_tokens":
            return "length"
        raise LLMResponseError(f"{self.provider}: the response ended with status {status!r} ({reason!r})")


def _usage(raw: JSONObject) -> Usage:
    cached = count((obj(raw.get("input_tokens_details")) or {}).get("cached_tokens"))
    return Usage.of(max(0, count(raw.get("input_tokens")) - cached), count(raw.get("output_tokens")), cached, 0)
