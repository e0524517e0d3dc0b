"""The proxy's JSON: orjson where it takes the value, the standard library where not, one form."""

from __future__ import annotations

import hashlib
import json

import pytest

from pipeline.proxy import codec
from pipeline.proxy.wire import chain

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
