"""What both HTTP wire formats share: key lookup, one POST, status and JSON checks.

A subclass says where to send (``default_base_url`` + ``path``), which headers carry the
key, how to build the body and how to read a 2xx answer; :class:`HTTPSummaryClient` does
the rest: every :meth:`~HTTPSummaryClient.complete` reads the key from the environment
variable whose *name* it was given, serialises the body like ``JSON.stringify``, POSTs it
with a fresh request (no caching headers, no conversation state) and retries through
:func:`~pipeline.llm.retry.call_with_retries`.

Every call is bounded (:mod:`pipeline.llm.limits`, :mod:`pipeline.llm.deadline`): the
call's deadline (every attempt and retry wait) and the enclosing compaction's, the size
of the response (streamed, never decoded past the cap) and the length of the summary.

The key is never stored on the client: it is read per call and lives only in locals.
Every text from the network or from an exception goes through the one redaction rule
(:class:`pipeline.secrets.Redactor`: the key, the base URL's user info, credential headers
a server echoes) before it reaches a message, and the URL is only ever shown without its
user info. Errors are raised outside ``except`` blocks so they do not chain to httpx
exceptions (whose request objects hold the headers).
"""

from __future__ import annotations

import json
import os
import random
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import httpx

from pipeline.js import js_json, js_trim
from pipeline.llm.deadline import SLACK, LLMDeadlineError, current_deadline, within
from pipeline.llm.errors import (
    LLMAuthError,
    LLMConfigError,
    LLMConnectionError,
    LLMEmptyCompletionError,
    LLMError,
    LLMResponseError,
    LLMStatusError,
    LLMTimeoutError,
    one_line,
)
from pipeline.llm.limits import ERROR_BODY_BYTES, Body, Limits, LLMSummaryTooLongError, bounded_http_client, read_body
from pipeline.llm.retry import RetryPolicy, call_with_retries, is_retryable_status, parse_retry_after
from pipeline.llm.types import Completion, StopReason, SummaryRequest
from pipeline.llm.wire.reply import SummaryAnswer
from pipeline.secrets import Redactor, redact_url, url_secrets
from pipeline.session.messages import Usage

DEFAULT_TIMEOUT = 600.0
CONNECT_TIMEOUT = 10.0
_EXCERPT_BYTES = 4096  # of a body that is not JSON, only the start is quoted
JSONObject = dict[str, Any]  # a decoded JSON object (wire data; checked field by field when read)


@dataclass(frozen=True)
class _Reply:
    """What one HTTP exchange brought back (the body read within the limits)."""

    status: int
    headers: httpx.Headers
    body: Body


class HTTPSummaryClient:
    """Base of the HTTP clients; subclasses define the wire format."""

    provider = ""
    default_base_url = ""
    default_key_env = ""
    path = ""

    def __init__(
        self,
        *,
        model: str = "",
        base_url: str | None = None,
        api_key_env: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retry: RetryPolicy | None = None,
        limits: Limits | None = None,
        env: Mapping[str, str] | None = None,
        http_client: httpx.Client | None = None,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], object] = time.sleep,
        rng: Callable[[], float] = random.random,
        anonymous: bool = False,
    ) -> None:
        if not timeout > 0:
            raise LLMConfigError(f"{self.provider}: timeout must be > 0 seconds, got {timeout!r}")
        self.model = model
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        if not self.base_url.startswith(("http://", "https://")):
            raise LLMConfigError(
                f"{self.provider}: base URL {redact_url(self.base_url)!r} is not an http:// or https:// URL",
                hint="for example https://api.example.com/v1",
            )
        self.api_key_env = api_key_env or self.default_key_env
        #: a server that needs no key (a local one): with the variable unset, no credentials are sent
        self.anonymous = anonymous
        self.timeout = float(timeout)
        self.retry = retry or RetryPolicy()
        self.limits = limits or Limits()
        self._env = os.environ if env is None else env
        self._http = http_client
        self._owns_http = http_client is None
        self._transport = transport
        self._sleep = sleep
        self._rng = rng

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self.model!r}, url={self.shown_url!r},"
            f" api_key_env={self.api_key_env!r}, timeout={self.timeout!r})"
        )

    def __enter__(self) -> "HTTPSummaryClient":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP connection pool if this client created it."""
        if self._http is not None and self._owns_http:
            self._http.close()
            self._http = None

    @property
    def url(self) -> str:
        """The endpoint requests are POSTed to."""
        return self.base_url + self.path

    @property
    def shown_url(self) -> str:
        """:attr:`url` as messages show it: user info (``user:password@``) as ``***``."""
        return redact_url(self.url)

    # -- what subclasses define -------------------------------------------------------

    def build_body(self, request: SummaryRequest) -> JSONObject:
        """The exact JSON body for ``request``; needs no key and sends nothing."""
        raise NotImplementedError

    def _headers(self, key: str) -> dict[str, str]:
        raise NotImplementedError

    def _parse(self, data: JSONObject, request: SummaryRequest) -> Completion:
        raise NotImplementedError

    # -- shared machinery ---------------------------------------------------------------

    def redacted_headers(self) -> dict[str, str]:
        """The request headers with the key shown as ``$NAME`` of its variable."""
        return self._headers(f"${self.api_key_env}")

    def resolve_model(self, request: SummaryRequest) -> str:
        """``request.model``, or the client's model when the request leaves it empty."""
        model = request.model or self.model
        if not model:
            raise self._no_model()
        return model

    def check_ready(self) -> None:
        """Raise now the error a call would raise for a missing key or model (sends nothing)."""
        self._api_key()
        if not self.model:
            raise self._no_model()

    def _no_model(self) -> LLMConfigError:
        return LLMConfigError(f"{self.provider}: no model given (set summarizer.model or pass --model)")

    def complete(self, request: SummaryRequest) -> Completion:
        """Send ``request`` (retrying per ``self.retry``, within ``self.limits``) and return the completion."""
        key = self._api_key()
        payload = js_json(self.build_body(request)).encode("utf-8")
        redact = self._redactor(key)
        with within(self.limits.call_deadline) as deadline:
            return call_with_retries(
                lambda: self._attempt(request, payload, key, redact),
                self.retry, sleep=self._sleep, rng=self._rng, deadline=deadline,
            )

    def _redactor(self, key: str | None) -> Redactor:
        return Redactor((key, *url_secrets(self.base_url)))

    def _api_key(self) -> str:
        value = (self._env.get(self.api_key_env) or "").strip()
        if not value and self.anonymous:
            return ""
        if not value:
            raise LLMAuthError(self.provider, self.api_key_env)
        if not (value.isascii() and value.isprintable()):
            raise LLMConfigError(
                f"{self.provider}: the value of {self.api_key_env} cannot be an API key"
                " (it holds non-ASCII or control characters)"
            )
        return value

    def _attempt(self, request: SummaryRequest, payload: bytes, key: str, redact: Redactor) -> Completion:
        reply = self._exchange(payload, key, redact)
        if not 200 <= reply.status <= 299:
            raise self._status_error(reply, redact, request)
        completion = self._parse(self._decode(reply, redact), request)
        if not js_trim(completion.text):
            raise LLMEmptyCompletionError(self.provider, completion.stop_reason, request.max_tokens)
        per_token = self.limits.max_chars_per_token
        if len(completion.text) > request.max_tokens * per_token:
            raise LLMSummaryTooLongError(self.provider, len(completion.text), request.max_tokens, per_token)
        return completion

    def _client(self) -> httpx.Client:
        if self._http is None:
            self._http = bounded_http_client() if self._transport is None else httpx.Client(transport=self._transport)
        return self._http

    def _exchange(self, payload: bytes, key: str, redact: Redactor) -> _Reply:
        """POST ``payload`` and read the answer, streamed, within the limits."""
        timeout = httpx.Timeout(self.timeout, connect=min(self.timeout, CONNECT_TIMEOUT))
        headers = self._headers(key)
        try:
            with self._client().stream("POST", self.url, content=payload, headers=headers, timeout=timeout) as response:
                ok = 200 <= response.status_code <= 299
                limit = self.limits.max_response_bytes if ok else ERROR_BODY_BYTES
                body = read_body(response, limit, self.provider, refuse=ok)
                return _Reply(response.status_code, response.headers, body)
        except httpx.TimeoutException as exc:
            failure: LLMError = self._past_deadline(f"waiting for {self.shown_url}") or LLMTimeoutError(
                f"{self.provider}: timed out after {self.timeout:g}s waiting for {self.shown_url} ({type(exc).__name__})"
            )
        except (httpx.UnsupportedProtocol, httpx.LocalProtocolError, httpx.InvalidURL) as exc:
            failure = LLMConfigError(f"{self.provider}: cannot send to {self.shown_url}: {redact(str(exc))}")
        except httpx.TransportError as exc:
            failure = self._past_deadline(f"waiting for {self.shown_url}") or LLMConnectionError(
                f"{self.provider}: connection error to {self.shown_url}: {redact(str(exc)) or type(exc).__name__}"
            )
        raise failure

    def _past_deadline(self, doing: str) -> LLMDeadlineError | None:
        """The deadline error, when the current deadline is (all but) spent."""
        deadline = current_deadline()
        if deadline is not None and deadline.expired(SLACK):
            return LLMDeadlineError(self.provider, deadline, doing)
        return None

    def _status_error(self, reply: _Reply, redact: Redactor, request: SummaryRequest) -> LLMStatusError:
        status = reply.status
        return LLMStatusError(
            self.provider,
            status,
            error_text(reply.body.data, redact, truncated=reply.body.truncated),
            retryable=is_retryable_status(status),
            retry_after=parse_retry_after(reply.headers),
            hint=self._status_hint(status, request),
        )

    def _status_hint(self, status: int, request: SummaryRequest) -> str | None:
        if status in (401, 403):
            return f"check the API key in {self.api_key_env}"
        if status == 404:
            return f"check base_url {redact_url(self.base_url)!r} and model {request.model or self.model!r}"
        return None

    def _decode(self, reply: _Reply, redact: Redactor) -> JSONObject:
        try:
            data = json.loads(reply.body.data)
        except ValueError:
            head = reply.body.data[:_EXCERPT_BYTES].decode("utf-8", "replace")
            cut = reply.body.truncated or len(reply.body.data) > _EXCERPT_BYTES
            excerpt = one_line(redact(head, truncated=cut), 120) or "(empty body)"
            failure = LLMResponseError(
                f"{self.provider}: invalid JSON in the HTTP {reply.status} response: {excerpt}",
                hint=f"is {redact_url(self.base_url)} the {self.provider} API?",
            )
        except RecursionError:
            failure = LLMResponseError(f"{self.provider}: the HTTP {reply.status} response nests JSON too deeply")
        else:
            message = _error_in_body(data, redact)
            if message is None:
                return data
            failure = LLMResponseError(f"{self.provider}: {message}")
        raise failure

    def unexpected(self, what: str) -> LLMResponseError:
        """An error for a 2xx JSON answer without a field the wire format requires."""
        return LLMResponseError(f"{self.provider}: unexpected response: {what}")


def _error_in_body(data: object, redact: Redactor) -> str | None:
    if not isinstance(data, dict):
        return f"unexpected response: expected a JSON object, got {type(data).__name__}"
    if "error" in data and "choices" not in data and "content" not in data:
        found = _message_of(data) or json.dumps(data, ensure_ascii=False)
        return f"the provider reported an error: {one_line(redact(found))}"
    return None


def error_text(body: bytes, redact: Redactor | str | None = None, *, truncated: bool = False) -> str:
    """The message of an error body (``error.message`` when JSON has one, else the raw
    text), redacted before it is shortened (so no part of a secret survives). ``redact``
    is a :class:`Redactor` or one secret value; ``truncated`` when the body was cut."""
    if not isinstance(redact, Redactor):
        redact = Redactor((redact,))
    text = redact(body.decode("utf-8", "replace"), truncated=truncated)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return one_line(text)
    found = _message_of(data)
    return one_line(redact(found) if found else text)


def _message_of(data: object) -> str | None:
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, str):
            return error
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            kind = error.get("type")
            return f"{kind}: {error['message']}" if isinstance(kind, str) and kind else error["message"]
    return None


def answer_completion(answer: SummaryAnswer, stop: StopReason, model: str, provider: str) -> Completion:
    """The completion of a summary answer its wire module read (:func:`pipeline.llm.wire.chat.read_summary`...)."""
    return Completion(text=answer.text, thinking=answer.thinking, usage=Usage.of(*answer.usage), stop_reason=stop,
                      model=model, provider=provider)
