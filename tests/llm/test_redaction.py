"""The one redaction rule (pipeline.secrets), on its own: values, URL user info, echoed headers."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.secrets import MASK, Redactor, env_secrets, redact, redact_url, url_secrets

KEY = "sk-live-0123456789abcdefABCDEF/+="


@pytest.mark.parametrize("text, expected", [
    (f"bad key {KEY} given", "bad key *** given"),
    (json.dumps({"message": f"bad key {KEY}"}), '{"message": "bad key ***"}'),
    (f'{{"message": "bad key {KEY.replace("/", chr(92) + "/")}"}}', '{"message": "bad key ***"}'),  # "\/" form
    (f"https://h/?key={KEY.replace('/', '%2F').replace('+', '%2B').replace('=', '%3D')}", "https://h/?key=***"),
    (f"{KEY}{KEY}", "******"),
])
def test_known_values_in_every_form(text, expected):
    assert redact(text, [KEY]) == expected


@pytest.mark.parametrize("url, shown", [
    ("https://user:password@host/v1", "https://***@host/v1"),
    ("http://only-user@127.0.0.1:8080", "http://***@127.0.0.1:8080"),
    ("HTTPS://u:p%40ss@host", "HTTPS://***@host"),
    ("https://u:p@ss@host/x?y=z@w", "https://***@host/x?y=z@w"),  # the last @ of the authority
    ("https://host/path@not-userinfo", "https://host/path@not-userinfo"),
    ("https://host/v1", "https://host/v1"),
])
def test_url_user_info(url, shown):
    assert redact_url(url) == shown
    assert redact(f"cannot reach {url}: refused") == f"cannot reach {shown}: refused"


def test_url_secrets_are_the_password_the_pair_and_its_basic_form():
    password, pair, basic = url_secrets("https://team:s3cr%2Ft@host/")
    assert (password, pair, basic) == ("s3cr/t", "team:s3cr/t", "dGVhbTpzM2NyL3Q=")
    assert url_secrets("https://host/") == () and url_secrets("http://[bad") == ()
    assert redact(f"Authorization header was {basic}", url_secrets("https://team:s3cr%2Ft@host/")) == \
        "Authorization header was ***"


@pytest.mark.parametrize("text, expected", [
    ("Authorization: Bearer abc.def-ghi", "Authorization: Bearer ***"),
    ("authorization:bearer abc", "authorization:bearer ***"),
    ("AUTHORIZATION: Basic dXNlcjpwYXNz", "AUTHORIZATION: Basic ***"),
    ("x-api-key: abc123", "x-api-key: ***"),
    ("X-Api-Key=abc123&x=1", "X-Api-Key=***&x=1"),
    ('{"x-api-key": "abc123", "other": "kept"}', '{"x-api-key": "***", "other": "kept"}'),
    ("{'Authorization': 'Bearer abc', 'Host': 'h'}", "{'Authorization': 'Bearer ***', 'Host': 'h'}"),
    ('{"headers":{"proxy-authorization":"Token t0k"}}', '{"headers":{"proxy-authorization":"Token ***"}}'),
    ("api-key: zzz; x-goog-api-key: yyy", "api-key: ***; x-goog-api-key: ***"),
    ("invalid x-api-key", "invalid x-api-key"),
    ('{"x-api-key": null, \'authorization\': None}', '{"x-api-key": null, \'authorization\': None}'),  # a name without a value is not a header
    ("check the API key in OPENAI_API_KEY", "check the API key in OPENAI_API_KEY"),
])
def test_echoed_credential_headers(text, expected):
    assert redact(text) == expected


def test_a_secret_cut_at_the_end_of_a_truncated_text_loses_its_beginning_too():
    text = "x" * 10 + KEY[:7]
    assert redact(text, [KEY], truncated=True) == "x" * 10 + MASK
    assert redact(text, [KEY]) == text  # not cut: the text is what it is
    assert redact("tail sk-li", [KEY, "bob:other"], truncated=True) == "tail ***"  # the longest overlap wins


def test_env_secrets_and_the_redactor_repr():
    env = {"A": " sk-a \n", "B": "", "C": "c-val"}
    assert env_secrets(env, ["A", "B", None, "C", "MISSING"]) == ("sk-a", "c-val")
    redactor = Redactor(env_secrets(env, ["A"]))
    assert "sk-a" not in repr(redactor) and redactor("use sk-a") == "use ***"
    assert redactor.with_secrets("c-val")("sk-a c-val") == "*** ***"
    assert Redactor([None, ""])("plain text") == "plain text"


@given(st.text(), st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), min_size=6, max_size=40))
def test_a_known_secret_never_survives(text, secret):
    out = redact(text + secret + text, [secret])
    assert secret not in out


def test_secrets_is_a_bottom_layer():
    """pipeline.secrets may import only the standard library and pipeline.errors."""
    import sys

    source = Path(__file__).resolve().parents[2] / "pipeline" / "secrets.py"
    tree = ast.parse(source.read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    for name in imported:
        top = name.split(".")[0]
        assert top in sys.stdlib_module_names or name == "pipeline.errors" or top == "__future__", name


def test_a_placeholder_key_too_short_to_be_one_does_not_mangle_messages():
    """`OPENAI_API_KEY=x` (a local server checks none): the error text stays readable."""
    text = 'prompt is too long: 213456 tokens > 200000 maximum (context_length_exceeded)'
    assert redact(text, ["x"]) == text and redact(text, ["too"]) == text
    assert redact("key: long", ["long"]) == "key: ***"  # from four characters on, hidden
