"""The proxy's JSON: orjson where it takes the value, the standard library where not, one form."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.proxy import codec
from pipeline.proxy.routes import Upstreams, route
from pipeline.proxy.wire import Request, chain, conversation_id, size

ORDINARY = {"role": "user", "content": [{"type": "text", "text": "é ü \u2028 \x00 \U0001f600 \"q\" \\"}],
            "n": 12, "f": 0.25, "big": 2 ** 63, "none": None, "t": True, "nested": {"b": [1, 2], "a": {}}}


def stdlib(value, sort_keys=False) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys).encode()


@pytest.mark.parametrize("sort_keys", [False, True])
def test_orjson_writes_what_the_standard_library_writes(sort_keys):
    assert codec.orjson is not None  # the [proxy] extra installs it
    assert codec.dumps(ORDINARY, sort_keys=sort_keys) == stdlib(ORDINARY, sort_keys)


def test_the_chain_hashes_are_the_ones_the_standard_library_gave():
    """Stored summaries are keyed by these hashes: the faster writer keeps the keys of a store
    written before it."""
    messages = [ORDINARY, {"role": "assistant", "content": "ok"}]
    before, expected = "", [""]
    for message in messages:
        before = hashlib.sha256((before + stdlib(message, True).decode()).encode()).hexdigest()
        expected.append(before)
    assert chain(messages) == expected


@pytest.mark.parametrize("raw", [b'{"x": NaN}', b'{"x": -Infinity}', b'{"x": 1e400}',
                                 b'{"x": 123456789012345678901234567890}', b'{"x": "\\ud800"}'])
def test_what_orjson_cannot_write_exactly_is_written_back_as_the_standard_library_writes_it(raw):
    value, fast = codec.loads(raw)
    expected = json.dumps(json.loads(raw), ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
    assert codec.dumps(value, fast=fast) == expected


def test_a_body_that_is_not_json_is_the_standard_librarys_error_with_its_place():
    with pytest.raises(json.JSONDecodeError) as caught:
        codec.loads(b'{"a": 1,\n "b": }')
    assert (caught.value.lineno, caught.value.colno) == (2, 7)


def typed(value):
    """``value`` with each number's type beside it (``1 == 1.0`` in Python; not here)."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, repr(value))


@pytest.mark.parametrize("raw", [b'[-9223372036854775808, 9223372036854775807, 18446744073709551615]',
                                 b'[-9223372036854775809, 18446744073709551616, 1e19, 10000000000000000000.5]',
                                 b'{"text": "0123456789012345678 digits in a string", "n": -0}',
                                 '\ufeff{"bom": 1}'.encode("utf-8"), '{"utf16": 1}'.encode("utf-16"),
                                 b'{"a": 1, "a": 2}', b'[1.0, -0.0, 1e-7, 2.5e308]'])
def test_what_is_read_is_the_standard_librarys_value_number_types_included(raw):
    assert typed(codec.loads(raw)[0]) == typed(json.loads(raw))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(min_value=-(2 ** 70), max_value=2 ** 70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12)


@given(json_values)
@settings(max_examples=300, deadline=None)
def test_any_json_reads_as_the_standard_library_reads_it(value):
    raw = json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
    assert typed(codec.loads(raw)[0]) == typed(json.loads(raw))


def test_within_one_request_each_message_is_written_for_its_hash_once_and_each_body_measured_once(monkeypatch):
    written = []
    real = codec.dumps
    monkeypatch.setattr(codec, "dumps", lambda value, **kw: written.append(value) or real(value, **kw))
    messages = [ORDINARY, {"role": "assistant", "content": "ok"}]
    body = {"model": "m", "messages": messages}
    request = Request(route("/v1/chat/completions", "", {}, Upstreams()), body)
    first = request.conversation
    whole, again = request.chain(messages), request.chain(messages)
    sizes = request.size(body), request.size(body)
    assert written == [ORDINARY, messages[1], body]
    assert first == whole[1] == conversation_id("chat", body)
    assert whole == again == chain(messages)  # the plain function: hashed anew, the same
    assert sizes[0] == sizes[1] == size(body) == len(json.dumps(body, ensure_ascii=False, separators=(",", ":")))
    assert len(written) == 3 + 1 + 2 + 1  # conversation_id, chain, size: each computed anew
    other = Request(request.route, body)  # another request keeps nothing of this one's
    other.size(body)
    assert written[-1] is body and len(written) == 8
