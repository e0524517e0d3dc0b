"""Errors of the LLM client layer: one class per way a summary call can fail.

Every error is a :class:`~pipeline.errors.PipelineError` carrying one
:class:`~pipeline.errors.Problem`, so the CLI prints it as one line and exits 3
(1 for :class:`LLMConfigError`). Messages
start with the provider label (``openai: ...``) and never contain the API key: clients
pass the key to :func:`redact` before any text from the network or from an exception
reaches a message, and no error keeps a reference to an HTTP request or response (whose
headers hold the key).

Wording note: the texts keep the substrings pi's transient-error test looks for
("timed out", "connection refused", "retry delay", the HTTP status), so a runtime that
classifies our messages with pi's rules (docs/pi-rules.md#retries) reaches the same decision.
"""

from __future__ import annotations

import re

from pipeline.errors import EXIT_INVALID, Problem, ProviderError

EXCERPT_CHARS = 200
_SPACE_RUN = re.compile(r"\s+")


def one_line(text: str, limit: int = EXCERPT_CHARS) -> str:
    """Collapse whitespace runs to one space and cut ``text`` to ``limit`` characters."""
    flat = _SPACE_RUN.sub(" ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def redact(text: str, secret: str | None) -> str:
    """``text`` through the one redaction rule (:mod:`pipeline.secrets`) with ``secret`` known."""
    from pipeline.secrets import Redactor

    return Redactor((secret,))(text)


class LLMError(ProviderError):
    """Base class: a summary call failed (exit code 3). ``retryable`` tells the retry loop what to do."""

    code = "provider.error"
    retryable = False

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self.message = one_line(message, limit=1000)
        super().__init__(Problem(self.message, hint=hint, code=self.code))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"


class LLMConfigError(LLMError):
    """The client or the request is set up wrongly (unknown provider, bad level, ...)."""

    code = "provider.config"
    exit_code = EXIT_INVALID  # a setting to fix, not a failure of the provider


class LLMAuthError(LLMError):
    """No API key: the named environment variable is unset or empty."""

    code = "provider.auth"
    exit_code = EXIT_INVALID  # checked before any call: a setting to fix

    def __init__(self, label: str, env_name: str) -> None:
        self.env_name = env_name
        super().__init__(
            f"{label}: no API key: environment variable {env_name} is not set",
            hint=f"export {env_name}, or name another variable with summarizer.api_key_env",
        )


class LLMStatusError(LLMError):
    """The server answered with a non-2xx status; ``excerpt`` is a short, redacted body."""

    code = "provider.http-status"

    def __init__(
        self,
        label: str,
        status: int,
        excerpt: str,
        *,
        retryable: bool = False,
        retry_after: float | None = None,
        hint: str | None = None,
    ) -> None:
        self.status = status
        self.excerpt = one_line(excerpt)
        self.retryable = retryable
        self.retry_after = retry_after
        tail = f": {self.excerpt}" if self.excerpt else ""
        super().__init__(f"{label}: HTTP {status}{tail}", hint=hint)


class LLMTimeoutError(LLMError):
    """No (complete) response within the client timeout."""

    code = "provider.timeout"
    retryable = True


class LLMConnectionError(LLMError):
    """The connection could not be made or broke (refused, reset, DNS failure...)."""

    code = "provider.connection"
    retryable = True


class LLMResponseError(LLMError):
    """A 2xx response that is not usable: invalid JSON, unexpected shape, provider error."""

    code = "provider.bad-response"


class LLMEmptyCompletionError(LLMError):
    """The model returned no text.

    Retried once when the model stopped normally (a glitch a second call usually fixes);
    not retried when it stopped at the output limit (``length``: the budget went to
    reasoning, and the same request would spend it the same way).
    """

    code = "provider.empty-completion"

    def __init__(self, label: str, stop_reason: str, max_tokens: int) -> None:
        self.stop_reason = stop_reason
        self.retryable = stop_reason != "length"
        why = f"output limit of {max_tokens} tokens reached" if stop_reason == "length" else f"stop reason {stop_reason}"
        super().__init__(f"{label}: the model returned an empty completion ({why})")


class LLMRetriesExhaustedError(LLMError):
    """Every attempt failed with a retryable error; ``last`` is the final one."""

    code = "provider.retries-exhausted"

    def __init__(self, attempts: int, last: LLMError) -> None:
        self.attempts = attempts
        self.last = last
        label, _, rest = last.message.partition(": ")
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        super().__init__(f"{label}: gave up after {tries}: {rest}", hint=last.problems[0].hint)


class LLMRetryDelayError(LLMError):
    """The server asked to wait longer than the maximum retry delay; we give up at once."""

    code = "provider.retry-delay"

    def __init__(self, last: LLMStatusError, delay: float, cap: float) -> None:
        self.last = last
        self.delay = delay
        self.cap = cap
        label = last.message.split(": ", 1)[0]
        super().__init__(
            f"{label}: HTTP {last.status}: server asked to wait {_secs(delay)} before retrying,"
            f" more than the maximum retry delay of {_secs(cap)}",
        )


def _secs(value: float) -> str:
    return f"{value:g}s" if value < 1e6 else f"{value:.0f}s"
