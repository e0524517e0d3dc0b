"""The store contract, on both stores: the SQLite file and a real redis-server.

Each test runs once per store (``any_store``); what the proxy reads back is what it wrote,
the longest matching prefix wins, records written once are never replaced, a lock is held by
one caller at a time and expires by itself. Then Redis alone: gone, it degrades to an empty
store that drops writes (one warning) and comes back by itself.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from pipeline.proxy import redis_store
from pipeline.proxy.redis_store import RedisStore
from pipeline.proxy.store import ProxyStore, Reported, Store

from .redisrun import RedisServer, free_port


@pytest.fixture(params=["sqlite", "redis"])
def any_store(request, tmp_path: Path) -> Iterator[ProxyStore]:
    if request.param == "sqlite":
        store: ProxyStore = Store(tmp_path / "s.db").open()
        yield store
        store.close()
        return
    server = request.getfixturevalue("redis_server")
    store = RedisStore(server.url).open()
    yield store
    store.close()


CHAIN = ["h0", "h1", "h2", "h3", "h4"]


def test_counters_and_a_conversation_record(any_store):
    any_store.forwarded("unchanged", "c1", 100, 100)
    any_store.forwarded("rewritten", "c1", 300, 120)
    any_store.forwarded("unchanged", None, 5, 5)
    any_store.count("tokens_saved", 180)
    any_store.usage("c1", Reported(input_tokens=50, cache_read=30, cache_write=10))
    counters = any_store.counters()
    assert (counters["requests"], counters["unchanged"], counters["rewritten"]) == (3, 2, 1)
    assert counters["tokens_saved"] == 180 and counters["cache_read_tokens"] == 30 and counters["compactions"] == 0
    [record] = list(any_store.conversations())
    assert set(record) == {"id", "first_seen", "last_seen", "requests", "tokens_before", "tokens_after",
                           "summaries_made", "summaries_reused", "input_tokens", "cache_read", "cache_write"}
    assert record["id"] == "c1" and record["requests"] == 2
    assert (record["tokens_before"], record["tokens_after"]) == (300, 120)
    assert (record["input_tokens"], record["cache_read"], record["cache_write"]) == (50, 30, 10)
    assert [(b, a) for _, b, a in any_store.history("c1")] == [(100, 100), (300, 120)]


def test_the_longest_stored_summary_of_the_prefix_wins_and_none_is_replaced(any_store):
    assert any_store.summary_for(CHAIN) is None
    any_store.record_summary("h1", "h2", 2, "first", 90, 30)
    any_store.record_summary("h1", "h4", 4, "second", 120, 40)
    any_store.record_summary("h1", "h4", 4, "a rival", 1, 1)  # written once, never replaced
    any_store.record_summary("h1", "hX", 3, "another history", 1, 1)
    found = any_store.summary_for(CHAIN)
    assert found is not None and (found.prefix, found.messages, found.text) == ("h4", 4, "second")
    assert (found.tokens_before, found.tokens_after) == (120, 40)
    shorter = any_store.summary_for(CHAIN[:3])
    assert shorter is not None and shorter.text == "first"
    assert any_store.summary_for(["h0", "h2"]) is None  # h2 at another length is another prefix


def test_a_prepared_summary_is_kept_apart_until_it_is_recorded(any_store):
    any_store.record_summary("h1", "h2", 2, "in force", 90, 30)
    any_store.record_summary("h1", "h4", 4, "prepared ahead", 120, 40, prepared=True)
    assert any_store.summary_for(CHAIN).text == "in force"  # a prepared one stands in for nothing
    ahead = any_store.summary_for(CHAIN, prepared=True)
    assert ahead is not None and (ahead.prefix, ahead.messages, ahead.text) == ("h4", 4, "prepared ahead")
    any_store.record_summary("h1", ahead.prefix, ahead.messages, ahead.text, 120, 40)  # a request crossed
    assert any_store.summary_for(CHAIN).text == "prepared ahead"


def test_the_anchor_is_the_largest_report_to_estimate_ratio_of_the_conversation(any_store):
    assert any_store.anchor("c1") is None
    any_store.forwarded("rewritten", "c1", 5000, 1200)
    any_store.usage("c1", Reported(input_tokens=0))  # no report: no anchor
    assert any_store.anchor("c1") is None
    any_store.usage("c1", Reported(input_tokens=1500, cache_read=1000))
    assert any_store.anchor("c1") == (1500, 1200)
    any_store.forwarded("unchanged", "c1", 1400, 1400)
    any_store.usage("c1", Reported(input_tokens=1600))  # a smaller ratio (1.14 < 1.25): the largest stays
    assert any_store.anchor("c1") == (1500, 1200) and any_store.anchor("c2") is None
    any_store.forwarded("unchanged", "c1", 1500, 1500)
    any_store.usage("c1", Reported(input_tokens=2100))  # a larger one (1.4) replaces it
    assert any_store.anchor("c1") == (2100, 1500)


def test_masking_steps(any_store):
    assert any_store.mask_step(CHAIN) == 0
    any_store.record_mask_step("h2", 2)
    any_store.record_mask_step("h3", 3)
    any_store.record_mask_step("h3", 1)
    assert any_store.mask_step(CHAIN) == 3
    assert any_store.mask_step(["h0", "h3"]) == 0


def test_a_lock_is_one_callers_until_released_or_expired(any_store):
    assert not any_store.locked("summary:c1")
    assert any_store.claim("summary:c1", 30) == "held"
    assert any_store.claim("summary:c1", 30) == "busy" and any_store.locked("summary:c1")
    assert any_store.holds("summary:c1")
    assert any_store.claim("summary:c2", 30) == "held"
    any_store.release("summary:c1")
    assert not any_store.locked("summary:c1") and not any_store.holds("summary:c1")
    assert any_store.claim("summary:c1", 0.2) == "held"
    time.sleep(0.4)
    assert not any_store.holds("summary:c1")  # expired: no longer this caller's
    assert any_store.claim("summary:c1", 30) == "held"  # the first holder "died": its lock expired


def test_two_redis_stores_share_everything_and_one_holds_a_lock(redis_server):
    one, two = RedisStore(redis_server.url).open(), RedisStore(redis_server.url).open()
    one.record_summary("h1", "h3", 3, "made by one", 10, 5)
    one.forwarded("rewritten", "h1", 10, 5)
    found = two.summary_for(CHAIN)
    assert found is not None and found.text == "made by one"
    assert two.counters()["rewritten"] == 1
    assert one.claim("summary:h1", 30) == "held" and two.claim("summary:h1", 30) == "busy"
    two.release("summary:h1")  # not its lock: stays one's
    assert two.claim("summary:h1", 30) == "busy"
    one.release("summary:h1")
    assert two.claim("summary:h1", 30) == "held"
    assert one.round_trips() > 0


def test_redis_away_is_an_empty_store_with_one_warning_and_it_comes_back(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(redis_store, "RETRY_S", 0.2)
    server = RedisServer(tmp_path / "redis", port=free_port())
    store = RedisStore(server.url, timeout_s=0.5).open()  # nothing listens yet: starts degraded
    store.forwarded("unchanged", "c1", 1, 1)
    store.record_summary("h1", "h2", 2, "lost while away", 1, 1)
    assert store.summary_for(CHAIN) is None and store.mask_step(CHAIN) == 0
    assert store.claim("summary:h1", 30) == "unavailable"
    assert store.counters()["requests"] == 0 and list(store.conversations()) == []
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and str(server.port) in warnings[0] and "cannot be reached" in warnings[0]
    with server:
        time.sleep(0.3)
        store.forwarded("unchanged", "c1", 1, 1)
        assert store.counters()["requests"] == 1
        assert store.claim("summary:h1", 30) == "held"
        assert "is back" in capsys.readouterr().err
    time.sleep(0.3)
    assert store.summary_for(CHAIN) is None  # killed again: degraded again, no failure
    assert len([line for line in capsys.readouterr().err.splitlines() if "warning" in line]) == 1
    store.close()


def test_a_write_that_fails_otherwise_is_dropped_with_a_warning_and_the_writer_goes_on(redis_server, capsys):
    """The writer thread outlives a write that raises something else than Redis being away (a
    command Redis refuses, the client's own error as it closes): what is queued after it is
    written, and reading the counters, which waits for the queued writes, returns."""
    store = RedisStore(redis_server.url).open()
    try:
        store.count("requests")
        def closed_client(r) -> None:  # what redis-py raised as a store closed under the writer (CI, 3.10)
            raise ValueError("I/O operation on closed file.")

        store._queued(lambda r: r.incr("not-a-number-x", "y"))  # a command Redis refuses
        store._queued(closed_client)
        store.count("requests")
        read: dict = {}
        reader = threading.Thread(target=lambda: read.update(store.counters()), daemon=True)
        reader.start()
        reader.join(30)  # a dead writer would leave it waiting for ever
        assert read.get("requests") == 2
        assert store.down() is False
    finally:
        store.close()
    warnings = [line for line in capsys.readouterr().err.splitlines() if "a write to the store" in line]
    assert len(warnings) == 2 and "ValueError" in warnings[1] and "it is dropped" in warnings[1]
