"""What the upstream reports of an answer's input: tokens, and those read from or written to its cache.

The answer streams to the client as it comes; :class:`UsageTap` sees the same chunks on the
way and keeps what it needs: the whole body of a JSON answer (up to :data:`JSON_LIMIT`), the
first and last :data:`SSE_KEEP` bytes of an event stream (Anthropic reports the input in its
first event, OpenAI and Gemini in their last). A compressed answer (``content-encoding``) is
passed on and not read. Each provider's fields:

* Anthropic: ``usage.input_tokens``, ``cache_read_input_tokens``, ``cache_creation_input_tokens``
  (in ``message_start``'s message when streamed);
* OpenAI chat: ``usage.prompt_tokens`` (cached ones included) and
  ``prompt_tokens_details.cached_tokens``; Responses: ``usage.input_tokens`` and
  ``input_tokens_details.cached_tokens`` (in ``response.completed``'s response when streamed);
* Gemini: ``usageMetadata.promptTokenCount`` and ``cachedContentTokenCount``.

The fields are read by the wire layer (:func:`pipeline.llm.wire.reported`, each format's by its module's ``reported``).
"""

from __future__ import annotations

import json
from typing import Any, Optional

from pipeline.llm.wire import reported, sse
from pipeline.proxy.store import Reported

JSON_LIMIT = 1 << 20
SSE_KEEP = 64 << 10


class UsageTap:
    """Reads the usage of one answer from the chunks streamed back."""

    def __init__(self, content_type: str, encoded: bool) -> None:
        self.stream = "event-stream" in content_type
        self.active = not encoded and (self.stream or "json" in content_type)
        self.head = bytearray()
        self.tail = bytearray()
        self.size = 0

    def feed(self, chunk: bytes) -> None:
        if not self.active:
            return
        self.size += len(chunk)
        keep = SSE_KEEP if self.stream else JSON_LIMIT
        if len(self.head) < keep:
            self.head += chunk[:keep - len(self.head)]
        if self.stream:
            self.tail = (self.tail + chunk)[-SSE_KEEP:]

    def reported(self) -> Optional[Reported]:
        if not self.active or (not self.stream and self.size > JSON_LIMIT):
            return None
        texts = [bytes(self.head)] if not self.stream else [bytes(self.head), bytes(self.tail)]
        found: Optional[Reported] = None
        for obj in (sse.payloads(texts) if self.stream else _whole(texts[0])):
            found = _usage(obj) or found
        return found


def _whole(data: bytes) -> list[Any]:
    try:
        return [json.loads(data)]
    except ValueError:
        return []


def _usage(obj: Any) -> Optional[Reported]:
    found = reported(obj)
    return Reported(*found) if found is not None else None
