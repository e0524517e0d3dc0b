"""What a fleet of proxies keeps, shared in Redis (``--store redis://HOST:PORT/DB``; Valkey too).

The same records as the SQLite :class:`~pipeline.proxy.store.Store`, under keys that begin
``pipeline-proxy:``, so every replica on one Redis database sees the summaries, masking steps,
conversations and counters the others made:

* ``counters`` (a hash), ``conversation:ID`` (a hash per conversation), ``conversations``
  (their ids by last request, a sorted set), ``history:ID`` (a list, the last
  :data:`~pipeline.proxy.store.HISTORY_KEPT` requests);
* ``summary:PREFIX``, ``prepared:PREFIX`` (a summary prepared ahead) and ``mask:PREFIX``:
  written once (``SET NX``), never replaced, so a
  replica that dies after storing a summary has lost nothing and two never disagree;
* ``lock:KEY``: :meth:`RedisStore.claim`, ``SET NX PX`` with a token of this process, given
  back by a compare-and-delete script; it expires by itself when its holder dies.

One request costs few round trips: one ``MGET`` per lookup of a prefix chain, one pipeline
for the request's counters and record, one for the upstream's usage.

**Redis going away** never fails a request: every operation that cannot reach Redis returns
what an empty store would (no summary, no masking step, a lock ``unavailable``) and writes are
dropped; one warning goes to stderr when Redis goes away and one line when it is back. While
it is away no request waits for it: a thread of its own pings Redis every :data:`RETRY_S`
seconds (a connection the redis client opens anew) and the store is used again once one
answers, so a dead or blackholed Redis costs the requests nothing once it was found away.

**Nothing waits for Redis on the event loop.** The counters the app adds from its event loop
(:meth:`RedisStore.count`, :meth:`RedisStore.usage`) are queued to one writer thread, in
order; :meth:`RedisStore.counters` first waits for this process's queued writes, so a client
reads back what its own requests counted. Every other call is made from a worker thread.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
import uuid
from typing import Callable, Iterator, Optional, TypeVar

import redis

from pipeline.proxy.store import COUNTERS, HISTORY_KEPT, Claim, Reported, Summary, without_password

T = TypeVar("T")
PREFIX = "pipeline-proxy:"
#: how often Redis is pinged while it is away
RETRY_S = 1.0
#: delete a lock only while it is still this holder's (another may hold it after it expired)
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
#: the anchor of a conversation: the reported input and the estimate of the request it answered,
#: replaced only by a report whose ratio to its estimate is larger
_ANCHOR = ("local e = tonumber(redis.call('hget', KEYS[1], 'tokens_after')) "
           "if not e or e <= 0 then return 0 end "
           "local r0 = tonumber(redis.call('hget', KEYS[1], 'anchor_reported')) "
           "local e0 = tonumber(redis.call('hget', KEYS[1], 'anchor_estimate')) "
           "if r0 and e0 and tonumber(ARGV[1]) * e0 <= r0 * e then return 0 end "
           "redis.call('hset', KEYS[1], 'anchor_reported', ARGV[1], 'anchor_estimate', e) return 1")
_INT_FIELDS = ("requests", "tokens_before", "tokens_after", "summaries_made", "summaries_reused", "input_tokens",
               "cache_read", "cache_write")


class RedisStore:
    """:class:`~pipeline.proxy.store.ProxyStore` on one Redis database (thread-safe)."""

    def __init__(self, url: str, timeout_s: float = 1.0) -> None:
        self.url = url
        self._redis = redis.Redis.from_url(url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s,
                                           decode_responses=True, health_check_interval=0)
        self._release = self._redis.register_script(_RELEASE)
        self._anchor = self._redis.register_script(_ANCHOR)
        self._state = threading.Lock()
        self._tokens: dict[str, str] = {}
        self._down = False
        self._trips = 0
        self._closed = threading.Event()
        #: writes queued by the event loop's calls, made in order by one writer thread
        self._writes: "queue.Queue[Callable[[redis.Redis], object] | threading.Event]" = queue.Queue()
        self._writer: Optional[threading.Thread] = None

    def open(self) -> "RedisStore":
        """Try Redis once; unreachable, the proxy starts all the same, degraded, and says so."""
        self._do(False, lambda r: bool(r.ping()))
        return self

    def close(self) -> None:
        self._closed.set()
        self._redis.close()

    # ------------------------------------------------------------------ reaching Redis

    def _do(self, default: T, work: Callable[[redis.Redis], T]) -> T:
        """``work`` (one round trip), or ``default`` when Redis cannot be reached."""
        with self._state:
            if self._down:  # the prober (:meth:`_probe`) says when it is back
                return default
            self._trips += 1
        try:
            result = work(self._redis)
        except (redis.ConnectionError, redis.TimeoutError) as err:
            self._went_away(err)
            return default
        return result

    def _went_away(self, err: Exception) -> None:
        with self._state:
            if self._down:
                return
            self._down = True
        print(f"pipeline proxy: warning: the store {without_password(self.url)} cannot be reached ({type(err).__name__}); "
              "passing requests through without stored summaries until it is back", file=sys.stderr, flush=True)
        threading.Thread(target=self._probe, name="pipeline-proxy-redis-probe", daemon=True).start()

    def _probe(self) -> None:
        """While Redis is away: ping it every :data:`RETRY_S` seconds; the store is used again
        once it answers."""
        while not self._closed.wait(RETRY_S):
            try:
                self._redis.ping()
            except (redis.ConnectionError, redis.TimeoutError):
                continue
            with self._state:
                self._down = False
            print(f"pipeline proxy: the store {without_password(self.url)} is back", file=sys.stderr, flush=True)
            return

    def down(self) -> bool:
        """Whether Redis was found away (and is not back yet)."""
        with self._state:
            return self._down

    def _queued(self, work: "Callable[[redis.Redis], object] | threading.Event") -> None:
        """``work`` made by the writer thread, in order (an event: set once what was queued before
        it is written); the caller goes on at once."""
        with self._state:
            if self._writer is None:
                self._writer = threading.Thread(target=self._write, name="pipeline-proxy-redis-writer", daemon=True)
                self._writer.start()
        self._writes.put(work)

    def _write(self) -> None:
        """The writer thread: it outlives any one write (a write that fails otherwise than by
        Redis being away, a Redis error or the client's own as the store closes, is dropped with
        a warning, not the thread: :meth:`_flushed` would wait for it for ever)."""
        while True:
            work = self._writes.get()
            if isinstance(work, threading.Event):
                work.set()
                continue
            try:
                self._do(None, work)
            except Exception as err:  # noqa: BLE001 - see the docstring
                if not self._closed.is_set():
                    print(f"pipeline proxy: warning: a write to the store {without_password(self.url)} failed "
                          f"({type(err).__name__}); it is dropped", file=sys.stderr, flush=True)

    def _flushed(self) -> None:
        """Return once the writes this process queued so far are made (or dropped, Redis away)."""
        if self._writer is not None:
            done = threading.Event()
            self._queued(done)
            done.wait()

    def round_trips(self) -> int:
        return self._trips

    # ------------------------------------------------------------------ counters and records

    def count(self, name: str, by: int = 1) -> None:
        self._queued(lambda r: r.hincrby(_key("counters"), name, by))

    def counters(self) -> dict[str, int]:
        self._flushed()  # this process's own counts first
        rows: dict[str, str] = self._do({}, lambda r: r.hgetall(_key("counters")))  # type: ignore[arg-type,return-value]
        return {name: int(rows.get(name, 0)) for name in (*COUNTERS, *sorted(set(rows) - set(COUNTERS)))}

    def forwarded(self, outcome: str, conversation: Optional[str], tokens_before: int, tokens_after: int) -> None:
        def work(r: redis.Redis) -> None:
            pipe = r.pipeline(transaction=True)
            pipe.hincrby(_key("counters"), "requests", 1)
            pipe.hincrby(_key("counters"), outcome, 1)
            if conversation is not None:
                now = time.time()
                record = _key("conversation", conversation)
                pipe.hsetnx(record, "first_seen", now)
                pipe.hset(record, mapping={"last_seen": now, "tokens_before": tokens_before,
                                           "tokens_after": tokens_after})
                pipe.hincrby(record, "requests", 1)
                pipe.zadd(_key("conversations"), {conversation: now})
                pipe.rpush(_key("history", conversation), json.dumps([now, tokens_before, tokens_after]))
                pipe.ltrim(_key("history", conversation), -HISTORY_KEPT, -1)
            pipe.execute()
        self._do(None, work)

    def usage(self, conversation: str, usage: Reported) -> None:
        def work(r: redis.Redis) -> None:
            pipe = r.pipeline(transaction=True)
            record = _key("conversation", conversation)
            for name, value in (("input_tokens", usage.input_tokens), ("cache_read", usage.cache_read),
                                ("cache_write", usage.cache_write)):
                pipe.hincrby(record, name, value)
            for name, value in (("input_tokens", usage.input_tokens), ("cache_read_tokens", usage.cache_read),
                                ("cache_write_tokens", usage.cache_write)):
                pipe.hincrby(_key("counters"), name, value)
            if usage.input_tokens > 0:
                self._anchor(keys=[record], args=[usage.input_tokens], client=pipe)
            pipe.execute()
        self._queued(work)

    def anchor(self, conversation: str) -> Optional[tuple[int, int]]:
        self._flushed()  # this process's reports first (the answer before this request queued its own)
        found: list[Optional[str]] = self._do([None, None], lambda r: r.hmget(  # type: ignore[arg-type,return-value]
            _key("conversation", conversation), ["anchor_reported", "anchor_estimate"]))
        return None if found[0] is None or found[1] is None else (int(found[0]), int(found[1]))

    def history(self, conversation: str) -> list[tuple[float, int, int]]:
        rows: list[str] = self._do([], lambda r: r.lrange(_key("history", conversation), 0, -1))  # type: ignore[arg-type,return-value]
        return [(float(a), int(b), int(c)) for a, b, c in map(json.loads, rows)]

    def conversations(self) -> Iterator[dict[str, object]]:
        """The conversations, most recent first, read 50 at a time as they are taken."""
        ids: list[str] = self._do([], lambda r: r.zrevrange(_key("conversations"), 0, -1))  # type: ignore[arg-type,return-value]
        for at in range(0, len(ids), 50):
            part = ids[at:at + 50]

            def work(r: redis.Redis) -> list[dict[str, str]]:
                pipe = r.pipeline(transaction=False)
                for conversation in part:
                    pipe.hgetall(_key("conversation", conversation))
                return list(pipe.execute())
            none: list[dict[str, str]] = []
            for conversation, record in zip(part, self._do(none, work)):
                yield {"id": conversation, "first_seen": float(record.get("first_seen", 0)),
                       "last_seen": float(record.get("last_seen", 0)),
                       **{name: int(record.get(name, 0)) for name in _INT_FIELDS}}

    # ------------------------------------------------------------------ summaries and masking steps

    def summary_for(self, chain: list[str], prepared: bool = False) -> Optional[Summary]:
        found = [Summary(prefix=h, **json.loads(v)) for h, v in self._by_prefix("prepared" if prepared else "summary", chain)]
        return max(found, key=lambda s: s.messages, default=None)

    def mask_step(self, chain: list[str]) -> int:
        return max((int(v) for _, v in self._by_prefix("mask", chain)), default=0)

    def _by_prefix(self, kind: str, chain: list[str]) -> list[tuple[str, str]]:
        """The stored ``kind`` records whose prefix is one of ``chain``'s, at the length it has there
        (one ``MGET``)."""
        hashes = chain[1:]
        if not hashes:
            return []
        values: list[Optional[str]] = self._do([], lambda r: r.mget([_key(kind, h) for h in hashes]))  # type: ignore[arg-type,return-value]
        found = [(h, v) for h, v in zip(hashes, values) if v is not None]
        at = {h: i for i, h in enumerate(chain)}
        return [(h, v) for h, v in found if _length(kind, v) == at[h]]

    def record_summary(self, conversation: str, prefix: str, messages: int, text: str, tokens_before: int,
                       tokens_after: int, prepared: bool = False) -> None:
        value = json.dumps({"messages": messages, "text": text, "tokens_before": tokens_before,
                            "tokens_after": tokens_after})

        def work(r: redis.Redis) -> None:
            pipe = r.pipeline(transaction=True)
            pipe.set(_key("prepared" if prepared else "summary", prefix), value, nx=True)
            if not prepared:
                pipe.hincrby(_key("conversation", conversation), "summaries_made", 1)
            pipe.execute()
        self._do(None, work)

    def record_mask_step(self, prefix: str, messages: int) -> None:
        self._do(None, lambda r: r.set(_key("mask", prefix), messages, nx=True))

    # ------------------------------------------------------------------ locks

    def claim(self, key: str, ttl_s: float) -> Claim:
        token = uuid.uuid4().hex
        px = max(int(ttl_s * 1000), 1)
        found: Claim = self._do("unavailable", lambda r: "held" if r.set(_key("lock", key), token, nx=True, px=px)
                                else "busy")
        if found == "held":
            with self._state:
                self._tokens[key] = token
        return found

    def release(self, key: str) -> None:
        with self._state:
            token = self._tokens.pop(key, None)
        if token is not None:
            self._do(None, lambda r: self._release(keys=[_key("lock", key)], args=[token], client=r))

    def locked(self, key: str) -> bool:
        return bool(self._do(0, lambda r: r.exists(_key("lock", key))))

    def holds(self, key: str) -> bool:
        with self._state:
            token = self._tokens.get(key)
        return token is not None and self._do(None, lambda r: r.get(_key("lock", key))) == token


def _key(*parts: str) -> str:
    return PREFIX + ":".join(parts)


def _length(kind: str, value: str) -> int:
    """The number of leading messages a stored record covers."""
    return int(value) if kind == "mask" else int(json.loads(value)["messages"])
