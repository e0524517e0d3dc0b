"""The one redaction rule: what a secret looks like in a text, and how it is hidden.

Every text that can reach a user and may hold something a provider or a server handed
back (error messages, quoted error bodies, retry and progress lines, printed requests)
goes through a :class:`Redactor` first. It hides three things:

* **known secret values** (the API key read from the environment, the password of a URL's
  user info; at least :data:`MIN_SECRET_CHARS` long), wherever they appear, also JSON-escaped (``\\/`` for ``/``) or URL-encoded;
  a text cut short (``truncated=True``) also loses a secret's beginning at its very end;
* **URL user info**: ``https://user:password@host`` becomes ``https://***@host``;
* **credential headers echoed back** by a server: the value of ``Authorization``,
  ``Proxy-Authorization``, ``x-api-key``, ``api-key`` and ``x-goog-api-key`` in any case,
  as ``Name: value`` lines, JSON (``"name": "value"``), Python reprs or ``name=value``;
  an auth scheme (``Bearer``, ``Basic``, ``Token``) is kept, its credential hidden.

Each hidden part becomes :data:`MASK`. This module sits at the bottom of the package: it
imports only the standard library.
"""

from __future__ import annotations

import base64
import re
from typing import Iterable, Mapping
from urllib.parse import quote, unquote, urlsplit

MASK = "***"
#: A value shorter than this is no key but a placeholder (``OPENAI_API_KEY=x`` for a local
#: server): hidden by value, every such letter of every message would become ``***``.
MIN_SECRET_CHARS = 4

_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s?#\"'<>]*@")
_HEADER = re.compile(
    r"""(?ix)
    (?P<name>["']?\b(?:proxy-authorization|authorization|x-api-key|x-goog-api-key|api-key)\b["']?)
    (?P<sep>\s*[:=]\s*["']?\s*)
    (?P<scheme>(?:bearer|basic|token)\s+)?
    (?P<value>[^\s"',;}\])&]+)
    """
)


def _variants(secret: str) -> set[str]:
    """The forms a secret takes inside other texts: as is, JSON-escaped, URL-encoded."""
    forms = {secret, secret.replace("/", "\\/"), quote(secret, safe=""), quote(secret)}
    escaped = secret.replace("\\", "\\\\").replace('"', '\\"')
    forms.add(escaped)
    return {form for form in forms if form}


class Redactor:
    """Hides known secret values, URL user info and echoed credential headers (see the module)."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        values = {form for secret in secrets if secret and len(secret) >= MIN_SECRET_CHARS
                  for form in _variants(secret)}
        self._values = tuple(sorted(values, key=len, reverse=True))

    @property
    def known(self) -> int:
        """How many secret forms are hidden by value (for tests and reprs; never the values)."""
        return len(self._values)

    def __repr__(self) -> str:
        return f"Redactor({self.known} secret forms)"

    def with_secrets(self, *more: str | None) -> "Redactor":
        """A redactor that also hides ``more``."""
        combined = Redactor(more)
        combined._values = tuple(sorted({*self._values, *combined._values}, key=len, reverse=True))
        return combined

    def __call__(self, text: str, *, truncated: bool = False) -> str:
        """``text`` with every secret hidden; ``truncated`` when ``text`` was cut from a longer one."""
        for value in self._values:
            text = text.replace(value, MASK)
        if truncated:
            text = self._cut_tail(text)
        text = _USERINFO.sub(lambda m: m.group(1) + MASK + "@", text)
        return _HEADER.sub(_mask_header, text)

    def _cut_tail(self, text: str) -> str:
        """Hide the beginning of a secret the cut left at the very end of ``text``."""
        cut = max((_tail_overlap(text, value) for value in self._values), default=0)
        return text[:-cut] + MASK if cut else text


def _tail_overlap(text: str, value: str) -> int:
    """The length of the longest beginning of ``value`` that ``text`` ends with (0 if none)."""
    for size in range(min(len(value) - 1, len(text)), 0, -1):
        if text.endswith(value[:size]):
            return size
    return 0


_NOT_SECRETS = (MASK, "None", "null", "undefined")  # already hidden, or a header that was not sent


def _mask_header(match: re.Match[str]) -> str:
    if match.group("value") in _NOT_SECRETS:
        return match.group(0)
    return match.group("name") + match.group("sep") + (match.group("scheme") or "") + MASK


def redact(text: str, secrets: Iterable[str | None] = (), *, truncated: bool = False) -> str:
    """``text`` through a :class:`Redactor` for ``secrets`` (the one rule, as a function)."""
    return Redactor(secrets)(text, truncated=truncated)


def url_secrets(url: str) -> tuple[str, ...]:
    """The secrets a URL's user info carries: the password, ``user:password`` and its
    Basic-auth form (an HTTP client sends it as ``Authorization: Basic ...``)."""
    try:
        parts = urlsplit(url)
        user, password = parts.username, parts.password
    except ValueError:
        return ()
    if user is None and password is None:
        return ()
    user, password = unquote(user or ""), unquote(password or "")
    pair = f"{user}:{password}"
    basic = base64.b64encode(pair.encode("utf-8")).decode("ascii")
    return tuple(s for s in (password, pair, basic) if s and s != ":")


def redact_url(url: str) -> str:
    """``url`` with its user info (if any) shown as ``***``."""
    return Redactor(url_secrets(url))(url)


def env_secrets(env: Mapping[str, str], names: Iterable[str | None]) -> tuple[str, ...]:
    """The values of the named environment variables that are set (stripped, non-empty)."""
    values = (env.get(name) or "" for name in names if name)
    return tuple(value.strip() for value in values if value.strip())
