"""The rule for values that name a secret's place: an environment variable's NAME, a base URL.

A key pasted where a variable name belongs (``--api-key-env sk-...``, ``api_key_env:`` in a
profile) must be refused without being printed back, so nothing here ever puts the
value into a message. The checks (:mod:`pipeline.checks`) apply it to profile values and
to a command's flags alike (flags are overrides, the profile's last layer); the HTTP
clients' factory applies it to what a caller passes directly.
"""

from __future__ import annotations

import re

_ENV_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: Keys whose value is never shown in a message: a key pasted there would be printed back.
SECRET_KEYS = ("summarizer.api_key_env", "summarizer.base_url")
#: How API keys of common providers begin (OpenAI, Anthropic, GitHub, GitLab, Slack, AWS, Google, Hugging Face...).
_KEY_PREFIXES = ("sk-", "sk_", "pk-", "pk_", "rk_", "ak-", "ghp_", "gho_", "ghs_", "ghu_", "github_pat_",
                 "glpat-", "xoxb-", "xoxp-", "AKIA", "AIza", "hf_", "key-")
ENV_NAME_HINT = "give the name of the environment variable that holds the key, like `OPENAI_API_KEY`"


def looks_like_key(value: str) -> bool:
    """True for text shaped like an API key: a provider's key prefix, or a long run of
    mixed-case letters and digits (variable names are words, keys are random)."""
    if value.startswith(_KEY_PREFIXES) or value.lower().startswith(("sk-", "sk_", "bearer ")):
        return True
    mixed = any(c.islower() for c in value) and any(c.isupper() for c in value) and any(c.isdigit() for c in value)
    return len(value) >= 24 and mixed


def env_name_problem(value: str) -> str | None:
    """What is wrong with ``value`` as the NAME of an environment variable (None: usable).

    The answer never contains ``value``: it may be a key given in the wrong place."""
    if looks_like_key(value):
        return "looks like an API key, not the name of an environment variable"
    if not _ENV_RE.match(value):
        return "must be the name of an environment variable (letters, digits and `_`, not starting with a digit)"
    return None


def url_secret_problem(url: str) -> str | None:
    """A base URL that carries a credential (``user:password@``, a key in the query); never shows it."""
    from urllib.parse import parse_qsl, urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.password is not None or (parts.username and looks_like_key(parts.username)):
        return "must not carry credentials (`user:password@`); the key comes from `api_key_env`"
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if re.search(r"key|token|secret|password|auth", name, re.I) or looks_like_key(value):
            return "must not carry a key in its query; the key comes from `api_key_env`"
    return None
