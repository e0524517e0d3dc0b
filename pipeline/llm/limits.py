"""Bounds on every provider call: deadlines on the wire, response size, summary length.

* **Deadlines** (:mod:`pipeline.llm.deadline`): :class:`~pipeline.llm.bounded.BoundedTransport` cuts every
  socket read, write and connect to what is left of the current deadline, so a server
  that trickles its status line or headers one byte a second, or says nothing after
  accepting, is cut off at the deadline (not after the per-read timeout times the
  bytes); :func:`read_body` checks it between the chunks of a body.
* **Response size.** :func:`read_body` streams the raw body and stops *before* it grows
  past ``max_response_bytes``: a declared ``content-length`` beyond it is refused before
  reading, an endless chunked body stops at the cap, and ``gzip``/``deflate`` bodies are
  inflated by this module in steps that never produce more than the room left (a gzip
  bomb is never inflated past the cap). Other encodings are refused.
* **Summary length.** A summary longer than ``max_tokens x max_chars_per_token``
  characters is refused (a model cannot write that much within its token budget).

Each bound ends the call with one error, not retried:
:class:`~pipeline.llm.deadline.LLMDeadlineError`, :class:`LLMResponseTooLargeError`,
:class:`LLMSummaryTooLongError`. Only clients this package builds use
:class:`~pipeline.llm.bounded.BoundedTransport` (a module of its own: importing this one does not
import httpx); an ``http_client`` or ``transport`` handed in keeps its own
I/O (so does an HTTP proxy taken from the environment, which httpx mounts with its own
transport), and there the deadline is checked between body chunks and retries only.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pipeline.llm.deadline import check_deadline
from pipeline.llm.errors import LLMConfigError, LLMError, LLMResponseError

if TYPE_CHECKING:  # pragma: no cover
    import httpx

DEFAULT_CALL_DEADLINE = 300.0
DEFAULT_COMPACTION_DEADLINE = 900.0
DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_CHARS_PER_TOKEN = 16
#: An error body is only quoted; more than this is not read.
ERROR_BODY_BYTES = 64 * 1024


@dataclass(frozen=True)
class Limits:
    """The bounds of one client's calls (the profile's ``summarizer`` settings)."""

    call_deadline: float = DEFAULT_CALL_DEADLINE
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    max_chars_per_token: int = DEFAULT_MAX_CHARS_PER_TOKEN

    def __post_init__(self) -> None:
        if not self.call_deadline > 0 or self.max_response_bytes < 1 or self.max_chars_per_token < 1:
            raise LLMConfigError(f"limits must be positive, got {self}")


# --------------------------------------------------------------------------- errors


class LLMResponseTooLargeError(LLMError):
    """The response body is larger than ``summarizer.max_response_bytes`` (not read further)."""

    code = "provider.response-too-large"

    def __init__(self, label: str, cap: int, how: str) -> None:
        self.cap = cap
        super().__init__(
            f"{label}: response refused: {how}, more than summarizer.max_response_bytes ({cap} bytes)",
            hint="raise summarizer.max_response_bytes if such an answer is genuine",
        )


class LLMSummaryTooLongError(LLMError):
    """The summary is far longer than its token budget allows (``max_chars_per_token``)."""

    code = "provider.summary-too-long"

    def __init__(self, label: str, chars: int, max_tokens: int, per_token: int) -> None:
        self.chars = chars
        super().__init__(
            f"{label}: summary refused: {chars} characters for a budget of {max_tokens} tokens,"
            f" more than {per_token} characters per token (summarizer.max_chars_per_token)",
        )


def bounded_http_client() -> httpx.Client:
    """An ``httpx.Client`` whose connections end by the current deadline
    (:class:`pipeline.llm.bounded.BoundedTransport`; httpx is imported on this first use)."""
    from pipeline.llm.bounded import bounded_http_client as make

    return make()


# --------------------------------------------------------------------------- bodies


@dataclass(frozen=True)
class Body:
    """A response body as read: its (decoded) bytes, and whether it was cut at ``limit``."""

    data: bytes
    truncated: bool = False


class _Inflater:
    """Decodes ``gzip``/``deflate`` in steps that never produce more than the room left."""

    def __init__(self, encoding: str) -> None:
        wbits = 16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS
        self._zlib = zlib.decompressobj(wbits)
        self._deflate = encoding == "deflate"
        self._started = False

    def feed(self, chunk: bytes, room: int) -> bytes:
        """Up to ``room + 1`` decoded bytes of ``chunk`` (one more than the room means: too big)."""
        if self._deflate and not self._started:
            self._started = True
            if chunk and (chunk[0] & 0x0F) != 8:  # no zlib header: a raw deflate stream
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
        # Output shorter than max_length means all of ``chunk`` was consumed; output of
        # room + 1 bytes leaves the rest unread (the caller refuses or cuts there).
        return self._zlib.decompress(chunk, room + 1)


def body_decoder(encoding: str, label: str) -> _Inflater | None:
    """The decoder of a ``content-encoding`` (None: identity); another encoding is refused."""
    name = encoding.strip().lower()
    if name in ("", "identity"):
        return None
    if name in ("gzip", "x-gzip", "deflate"):
        return _Inflater("gzip" if name != "deflate" else "deflate")
    raise LLMResponseError(
        f"{label}: response refused: unsupported content-encoding {encoding[:40]!r} (only gzip and deflate are decoded)"
    )


def read_body(response: httpx.Response, limit: int, label: str, *, refuse: bool) -> Body:
    """Stream ``response``'s body, decoded, never holding more than ``limit`` bytes.

    ``refuse``: past ``limit`` raise :class:`LLMResponseTooLargeError` (a completion);
    otherwise stop there and return what was read, ``truncated`` (an error body, only quoted).
    Between chunks the current deadline is checked (:class:`LLMDeadlineError`).
    """
    declared = response.headers.get("content-length", "")
    if refuse and declared.isdigit() and int(declared) > limit:
        raise LLMResponseTooLargeError(label, limit, f"the server announced {int(declared)} bytes")
    inflater = body_decoder(response.headers.get("content-encoding", ""), label)
    data = bytearray()
    for chunk in response.iter_raw():
        check_deadline(label, "the body was still arriving")
        room = limit - len(data)
        piece = chunk if inflater is None else _inflate(inflater, chunk, room, label)
        if len(piece) > room:
            if refuse:
                raise LLMResponseTooLargeError(label, limit, f"the body goes past {limit} bytes")
            data += piece[:room]
            return Body(bytes(data), truncated=True)
        data += piece
    return Body(bytes(data))


def _inflate(inflater: _Inflater, chunk: bytes, room: int, label: str) -> bytes:
    try:
        return inflater.feed(chunk, room)
    except zlib.error:
        failure = LLMResponseError(f"{label}: the compressed response body is corrupt")
    raise failure
