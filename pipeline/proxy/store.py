"""What the proxy keeps: counters, conversations and the summaries they reuse (SQLite).

One embedded SQLite file, by default under the user's state directory
(``$XDG_STATE_HOME/context-pipeline/proxy-store.db``, else ``~/.local/state/...``), or the
path of ``--store sqlite:PATH``. It is written in WAL mode, one transaction per change, so a
crash loses at most the change under way and never leaves a torn record; a file another
program wrote, or that is damaged, is a located error at start, not a traceback later.

* ``counters``: the proxy's totals (``requests``, ``unchanged``, ``compactions``,
  ``summaries_reused``, ``upstream_errors``...), as ``GET /_pipeline/stats`` returns them;
* ``conversations``: per conversation (its id is the hash of its first messages, see
  :mod:`pipeline.proxy.wire`): requests, tokens before and after the policy, summaries
  made and reused, and the cache read and write tokens the upstream reported;
* ``summaries``: a summary keyed by the hash of the prefix it replaces, so a later request
  with the same prefix reuses it;
* ``prepared``: the same, for a summary prepared ahead of the trigger
  (:mod:`pipeline.proxy.summary`), which stands in only once a request crosses the trigger
  (then it is recorded in ``summaries``);
* ``anchors``: per conversation, the input an upstream's answer reported (cached included) and
  the proxy's estimate of the request it answered, of the answer whose ratio of the two is
  the largest yet, which the next requests' estimates are scaled by (:meth:`Store.anchor`);
* ``history``: the last requests of each conversation (time, tokens before and after the
  policy), which the status page draws;
* ``masks``: how many leading messages have their tool results masked, keyed by the hash
  of those messages (:mod:`pipeline.proxy.masking`): the next request with that prefix is
  masked the same way, so its bytes, and the provider's cache, hold.

No credential, header or message text other than a summary is ever stored.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Literal, Optional, Protocol

from pipeline.errors import Location, PipelineError, Problem

SCHEMA_VERSION = 1
COUNTERS = ("requests", "unchanged", "rewritten", "compactions", "summaries_reused", "summaries_prepared",
            "summary_failures",
            "masked_results",
            "upstream_errors", "proxy_errors", "tokens_saved", "input_tokens", "cache_read_tokens",
            "cache_write_tokens")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY, first_seen REAL NOT NULL, last_seen REAL NOT NULL, requests INTEGER NOT NULL DEFAULT 0,
    tokens_before INTEGER NOT NULL DEFAULT 0, tokens_after INTEGER NOT NULL DEFAULT 0,
    summaries_made INTEGER NOT NULL DEFAULT 0, summaries_reused INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0, cache_read INTEGER NOT NULL DEFAULT 0,
    cache_write INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS summaries (
    prefix TEXT PRIMARY KEY, conversation TEXT NOT NULL, messages INTEGER NOT NULL, summary TEXT NOT NULL,
    tokens_before INTEGER NOT NULL, tokens_after INTEGER NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS prepared (
    prefix TEXT PRIMARY KEY, conversation TEXT NOT NULL, messages INTEGER NOT NULL, summary TEXT NOT NULL,
    tokens_before INTEGER NOT NULL, tokens_after INTEGER NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS anchors (conversation TEXT PRIMARY KEY, reported INTEGER NOT NULL, estimate INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS masks (prefix TEXT PRIMARY KEY, messages INTEGER NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS history (
    conversation TEXT NOT NULL, at REAL NOT NULL, tokens_before INTEGER NOT NULL, tokens_after INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS history_by_conversation ON history (conversation, at);
"""
#: the requests of one conversation the history keeps (the status page draws them)
HISTORY_KEPT = 200


def default_path() -> Path:
    """``$XDG_STATE_HOME/context-pipeline/proxy-store.db`` (else under ``~/.local/state``)."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "context-pipeline" / "proxy-store.db"


@dataclass(frozen=True)
class Reported:
    """What the upstream reported for one answer (0 where it said nothing)."""

    input_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0


@dataclass(frozen=True)
class Summary:
    """A stored summary: the number of leading messages it replaces and its text."""

    prefix: str
    messages: int
    text: str
    tokens_before: int
    tokens_after: int


#: what :meth:`ProxyStore.claim` found: the lock is now this caller's, another holder's, or the
#: shared store cannot be reached (then nothing stored can be read either: pass-through)
Claim = Literal["held", "busy", "unavailable"]


class ProxyStore(Protocol):
    """What the proxy keeps, whichever store keeps it: this module's SQLite :class:`Store` (one
    process) or :class:`~pipeline.proxy.redis_store.RedisStore` (a fleet of replicas)."""

    def close(self) -> None: ...

    def count(self, name: str, by: int = 1) -> None: ...

    def counters(self) -> dict[str, int]: ...

    def mask_step(self, chain: list[str]) -> int: ...

    def summary_for(self, chain: list[str], prepared: bool = False) -> Optional[Summary]:
        """The stored summary of the longest prefix of ``chain`` (``prepared``: of those prepared ahead)."""
        ...

    def record_summary(self, conversation: str, prefix: str, messages: int, text: str, tokens_before: int,
                       tokens_after: int, prepared: bool = False) -> None:
        """Store a summary once, never replaced (``prepared``: as one prepared ahead, apart)."""
        ...

    def record_mask_step(self, prefix: str, messages: int) -> None: ...

    def forwarded(self, outcome: str, conversation: Optional[str], tokens_before: int, tokens_after: int) -> None: ...

    def usage(self, conversation: str, usage: Reported) -> None: ...

    def history(self, conversation: str) -> list[tuple[float, int, int]]: ...

    def anchor(self, conversation: str) -> Optional[tuple[int, int]]:
        """The input an upstream's answer in ``conversation`` reported (cached included) and the
        proxy's estimate of the request it answered, of the answer whose ratio of the two is the
        largest yet (so the count never falls as the conversation grows); None before any."""
        ...

    def conversations(self) -> Iterator[dict[str, object]]: ...

    def claim(self, key: str, ttl_s: float) -> Claim:
        """Take the lock ``key`` for at most ``ttl_s`` seconds (it expires by itself: a holder
        that dies frees it) unless another holds it."""
        ...

    def release(self, key: str) -> None:
        """Give back a lock this caller holds (one another took after it expired stays)."""
        ...

    def locked(self, key: str) -> bool:
        """Whether anyone holds the lock ``key`` now."""
        ...

    def holds(self, key: str) -> bool:
        """Whether this caller still holds the lock ``key`` (it has not expired, nor been taken by another)."""
        ...

    def round_trips(self) -> int:
        """The network round trips to the store so far, in this process (0 for an embedded store)."""
        ...


class Store:
    """The SQLite store; safe to share between the server's threads (one connection, one lock)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db: Optional[sqlite3.Connection] = None
        #: the locks held in this process (one process shares this file): key -> when it expires
        self._claims: dict[str, float] = {}

    def open(self) -> "Store":
        """Create or open the file; a file that is not this store's is a located error."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            with _transaction(db):
                for statement in _statements(_SCHEMA):
                    db.execute(statement)
                found = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
                if found is None:
                    db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
                elif found[0] != str(SCHEMA_VERSION):
                    raise _foreign(self.path, f"a store of schema {found[0]}, this proxy writes {SCHEMA_VERSION}")
        except sqlite3.DatabaseError as err:
            raise _foreign(self.path, f"not a proxy store ({err})") from None
        except OSError as err:
            raise PipelineError(Problem(f"cannot open the store: {err.strerror}", Location(str(self.path)),
                                        key="--store", code="proxy.store")) from None
        self._db = db
        return self

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise RuntimeError("the store is not open")
        return self._db

    def count(self, name: str, by: int = 1) -> None:
        """Add ``by`` to counter ``name``."""
        with self._lock, _transaction(self.db):
            self._add(name, by)

    def _add(self, name: str, by: int = 1) -> None:
        """Add ``by`` to counter ``name`` (with the lock held, inside a transaction)."""
        self.db.execute("INSERT INTO counters VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = value + ?",
                        (name, by, by))

    def counters(self) -> dict[str, int]:
        """Every counter, the unset ones 0."""
        with self._lock:
            rows = dict(self.db.execute("SELECT name, value FROM counters").fetchall())
        return {name: int(rows.get(name, 0)) for name in (*COUNTERS, *sorted(set(rows) - set(COUNTERS)))}

    def mask_step(self, chain: list[str]) -> int:
        """The longest recorded masking step of a conversation whose prefix hashes are ``chain``
        (the number of leading messages it masks; 0 when none)."""
        return max((row[1] for row in self._by_prefix("masks", "prefix, messages", chain)), default=0)

    def summary_for(self, chain: list[str], prepared: bool = False) -> Optional[Summary]:
        """The stored summary replacing the longest prefix of a conversation whose prefix hashes are ``chain``
        (``prepared``: of the summaries prepared ahead)."""
        table = "prepared" if prepared else "summaries"
        rows = self._by_prefix(table, "prefix, messages, summary, tokens_before, tokens_after", chain)
        return max((Summary(*row) for row in rows), key=lambda s: s.messages, default=None)

    def _by_prefix(self, table: str, columns: str, chain: list[str]) -> list[tuple]:
        """The rows of ``table`` (its first two columns the prefix hash and its length) whose prefix
        is one of ``chain``'s, at the length it has there."""
        wanted = {h: i for i, h in enumerate(chain) if i}
        hashes = list(wanted)
        found: list[tuple] = []
        with self._lock:
            for at in range(0, len(hashes), 500):  # SQLite's bound on the parameters of one statement
                part = hashes[at:at + 500]
                found += self.db.execute(f"SELECT {columns} FROM {table} WHERE prefix IN ({','.join('?' * len(part))})",
                                         part).fetchall()
        return [row for row in found if wanted[row[0]] == row[1]]

    def record_summary(self, conversation: str, prefix: str, messages: int, text: str, tokens_before: int,
                       tokens_after: int, prepared: bool = False) -> None:
        """A summary of the first ``messages`` messages of the conversations whose prefix hash is ``prefix``
        (``prepared``: prepared ahead, kept apart until a request crosses the trigger)."""
        with self._lock, _transaction(self.db):
            self.db.execute(f"INSERT OR IGNORE INTO {'prepared' if prepared else 'summaries'} VALUES (?, ?, ?, ?, ?, ?, ?)",
                            (prefix, conversation, messages, text, tokens_before, tokens_after, time.time()))
            if not prepared:
                self.db.execute("UPDATE conversations SET summaries_made = summaries_made + 1 WHERE id = ?",
                                (conversation,))

    def record_mask_step(self, prefix: str, messages: int) -> None:
        """Mask the tool results of the first ``messages`` messages of every request whose prefix hash is ``prefix``."""
        with self._lock, _transaction(self.db):
            self.db.execute("INSERT OR IGNORE INTO masks VALUES (?, ?, ?)", (prefix, messages, time.time()))

    def forwarded(self, outcome: str, conversation: Optional[str], tokens_before: int, tokens_after: int) -> None:
        """One request about to be forwarded: ``requests`` and ``outcome`` counted and, for a
        conversation, its record and history, with the estimate before and after the policy
        (one transaction: this is on every request's path)."""
        with self._lock, _transaction(self.db):
            self._add("requests")
            self._add(outcome)
            if conversation is not None:
                self._seen(conversation, tokens_before, tokens_after)

    def _seen(self, conversation: str, tokens_before: int, tokens_after: int) -> None:
        """The conversation's record and history for one request (lock held, inside a transaction)."""
        now = time.time()
        self.db.execute(
            "INSERT INTO conversations (id, first_seen, last_seen, requests, tokens_before, tokens_after) "
            "VALUES (?, ?, ?, 1, ?, ?) ON CONFLICT(id) DO UPDATE SET last_seen = ?, requests = requests + 1, "
            "tokens_before = ?, tokens_after = ?",
            (conversation, now, now, tokens_before, tokens_after, now, tokens_before, tokens_after))
        self.db.execute("INSERT INTO history VALUES (?, ?, ?, ?)", (conversation, now, tokens_before, tokens_after))
        count = self.db.execute("SELECT requests FROM conversations WHERE id = ?", (conversation,)).fetchone()[0]
        if count > HISTORY_KEPT and count % 50 == 0:
            self.db.execute("DELETE FROM history WHERE conversation = ? AND at < (SELECT at FROM history WHERE "
                            "conversation = ? ORDER BY at DESC LIMIT 1 OFFSET ?)",
                            (conversation, conversation, HISTORY_KEPT - 1))

    def usage(self, conversation: str, usage: Reported) -> None:
        """The upstream's reported usage for one answer in ``conversation``."""
        with self._lock, _transaction(self.db):
            self.db.execute("UPDATE conversations SET input_tokens = input_tokens + ?, cache_read = cache_read + ?, "
                            "cache_write = cache_write + ? WHERE id = ?",
                            (usage.input_tokens, usage.cache_read, usage.cache_write, conversation))
            self._add("input_tokens", usage.input_tokens)
            self._add("cache_read_tokens", usage.cache_read)
            self._add("cache_write_tokens", usage.cache_write)
            if usage.input_tokens > 0:  # against the estimate of the request it answered (its record's last),
                # kept when its ratio is the conversation's largest yet
                self.db.execute("INSERT INTO anchors SELECT id, ?, tokens_after FROM conversations WHERE id = ? "
                                "AND tokens_after > 0 ON CONFLICT(conversation) DO UPDATE SET reported = excluded.reported, "
                                "estimate = excluded.estimate WHERE excluded.reported * anchors.estimate > "
                                "anchors.reported * excluded.estimate", (usage.input_tokens, conversation))

    def anchor(self, conversation: str) -> Optional[tuple[int, int]]:
        with self._lock:
            row = self.db.execute("SELECT reported, estimate FROM anchors WHERE conversation = ?",
                                  (conversation,)).fetchone()
        return None if row is None else (int(row[0]), int(row[1]))

    def history(self, conversation: str) -> list[tuple[float, int, int]]:
        """The kept requests of ``conversation``, oldest first: (time, tokens before, tokens after)."""
        with self._lock:
            rows = self.db.execute("SELECT at, tokens_before, tokens_after FROM history WHERE conversation = ? "
                                   "ORDER BY at", (conversation,)).fetchall()
        return [(float(a), int(b), int(c)) for a, b, c in rows[-HISTORY_KEPT:]]

    def claim(self, key: str, ttl_s: float) -> Claim:
        now = time.monotonic()
        with self._lock:
            if self._claims.get(key, 0.0) > now:
                return "busy"
            self._claims[key] = now + ttl_s
            return "held"

    def release(self, key: str) -> None:
        with self._lock:
            self._claims.pop(key, None)

    def locked(self, key: str) -> bool:
        with self._lock:
            return self._claims.get(key, 0.0) > time.monotonic()

    def holds(self, key: str) -> bool:
        return self.locked(key)  # one process: a lock not expired is this store's caller's

    def round_trips(self) -> int:
        return 0

    def conversations(self) -> Iterator[dict[str, object]]:
        with self._lock:
            cursor = self.db.execute("SELECT * FROM conversations ORDER BY last_seen DESC")
            names = [d[0] for d in cursor.description]
            rows = cursor.fetchall()
        for row in rows:
            yield dict(zip(names, row))


def without_password(url: str) -> str:
    """``url`` without its credentials (``redis://:SECRET@host/0`` names only the host): what may be printed."""
    scheme, sep, rest = url.partition("://")
    return scheme + sep + rest.rpartition("@")[2]


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


class _transaction:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on an exception)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, *rest: object) -> None:
        self.db.execute("ROLLBACK" if kind is not None else "COMMIT")


def _foreign(path: Path, why: str) -> PipelineError:
    return PipelineError(Problem(why, Location(str(path)), key="--store",
                                 hint="name another file with --store sqlite:PATH, or move this one away",
                                 code="proxy.store"))
