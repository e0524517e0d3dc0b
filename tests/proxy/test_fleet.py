"""A fleet of real `pipeline proxy` replicas on one real redis-server, against a fast loopback upstream.

Two replicas that see the same history cross the trigger at once make one summary call, and both
forward the summary. Three replicas behind a client pool, 200 concurrent conversations and 10,000
requests: every answer whole and the client's own, no history summarized twice, every summary
made stored. Then a replica and Redis killed mid-run: every request is still answered (the pool
retries the next replica, as a load balancer does; without Redis the replicas pass through).
"""

from __future__ import annotations

import asyncio
import json
import signal
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Coroutine

import httpx

from .fleet import HEADERS, PROFILE, FastUpstream, Pool, user_text
from .proxyrun import ProxyProcess
from .redisrun import RedisServer


def _replicas(stack: ExitStack, tmp_path: Path, upstream: FastUpstream, store: str, count: int) -> list[ProxyProcess]:
    (tmp_path / "fleet.yaml").write_text(PROFILE)
    return [stack.enter_context(ProxyProcess(str(tmp_path / "fleet.yaml"), "--anthropic-url", upstream.url,
                                             store=store)) for _ in range(count)]


def _settled(upstream: FastUpstream, replica: str) -> tuple[dict, dict]:
    """What the upstream saw and the fleet's counters, once the summaries prepared in the
    background after the last answers are made: the same twice, half a second apart."""
    last: tuple[dict, dict] = ({}, {})
    for _ in range(120):
        now = (upstream.seen(), httpx.get(replica + "/_pipeline/stats", timeout=30).json())
        if now == last:
            break
        last = now
        time.sleep(0.5)
    return last


async def _driven(pool: Pool, *work: Coroutine[Any, Any, None]) -> None:
    """``work`` run together, then the pool's clients closed (also when the work fails)."""
    try:
        await asyncio.gather(*work)
    finally:
        await pool.aclose()


def _crossing_body() -> dict:
    messages: list[dict] = []
    for turn in range(24):  # past the trigger of 600 tokens
        messages += [{"role": "user", "content": user_text(0, turn)},
                     {"role": "assistant", "content": "echo:" + user_text(0, turn)}]
    messages.append({"role": "user", "content": user_text(0, 24)})
    return {"model": "claude-x", "max_tokens": 16, "system": "own", "messages": messages}


def test_two_replicas_crossing_the_trigger_on_one_history_make_one_summary(tmp_path, redis_server):
    with ExitStack() as stack:
        upstream = stack.enter_context(FastUpstream(summary_delay=1.0))
        replicas = _replicas(stack, tmp_path, upstream, redis_server.url, 2)
        body = json.dumps(_crossing_body())
        answers: list[httpx.Response] = []

        def post(url: str) -> None:
            answers.append(httpx.post(url + "/v1/messages", content=body, headers=HEADERS, timeout=120))
        threads = [threading.Thread(target=post, args=(r.url,)) for r in replicas]
        [t.start() for t in threads]
        [t.join() for t in threads]
        assert [a.status_code for a in answers] == [200, 200]
        assert all(a.json()["content"][0]["text"] == "echo:" + user_text(0, 24) for a in answers)
        seen = upstream.seen()
        stats = httpx.get(replicas[1].url + "/_pipeline/stats").json()
    # one compaction: one summary call, or two when the cut splits a turn (its prefix is summarized
    # apart, as the runtime does); both replicas summarizing would send the same bodies twice
    summaries = seen["summaries"]
    assert len(summaries) == len(set(summaries)) and 1 <= len(summaries) <= 2, seen
    assert seen["with_summary"] == 2 and seen["requests"] == len(summaries) + 2, seen
    assert (stats["compactions"], stats["summaries_reused"], stats["rewritten"]) == (1, 1, 2), stats


def test_three_replicas_200_conversations_10000_requests_one_summary_per_history(tmp_path, redis_server):
    with ExitStack() as stack:
        upstream = stack.enter_context(FastUpstream())
        replicas = _replicas(stack, tmp_path, upstream, redis_server.url, 3)
        pool = Pool([r.url for r in replicas])

        asyncio.run(_driven(pool, pool.run(conversations=200, turns=50)))
        seen, stats = _settled(upstream, replicas[0].url)
    # a retry here is a keep-alive connection the replica closed as idle just as the pool reused it
    assert pool.answered == 10_000
    summaries = seen["summaries"]
    assert len(summaries) == len(set(summaries)), "a history was summarized twice"
    stored = redis_server.client().keys("pipeline-proxy:summary:*")
    # each compaction one summary call, or two when its cut splits a turn (the prefix apart)
    assert len(stored) == stats["compactions"] >= 200, (len(stored), stats)
    assert stats["compactions"] <= len(summaries) <= 2 * stats["compactions"], (stats, len(summaries))
    assert stats["summary_failures"] == 0 and 10_000 <= stats["requests"] <= 10_000 + pool.retried
    assert stats["summaries_reused"] > 0 and seen["with_summary"] > 5_000, (stats, seen["with_summary"])
    made = [int(v) for v in (redis_server.client().hget(k, "summaries_made")
                             for k in redis_server.client().keys("pipeline-proxy:conversation:*"))]
    assert len(made) == 200 and min(made) >= 1


def _counted_again(url: str, within: float = 20.0) -> dict[str, Any]:
    """The replica's counters once the restarted Redis counts its requests again. Its store
    finds Redis back within ``RETRY_S`` of the restart and drops the writes made before, so
    the run's last requests may all fall in that second: one more request at a time until a
    count is shared (or ``within`` seconds passed)."""
    body = json.dumps({"model": "claude-x", "max_tokens": 16, "system": "own",
                       "messages": [{"role": "user", "content": user_text(999, 0)}]})
    deadline = time.monotonic() + within
    while True:
        assert httpx.post(url + "/v1/messages", content=body, headers=HEADERS, timeout=30).status_code == 200
        stats = dict(httpx.get(url + "/_pipeline/stats", timeout=30).json())
        if stats["requests"] > 0 or time.monotonic() > deadline:
            return stats
        time.sleep(0.2)


def test_a_replica_and_redis_killed_mid_run_every_request_is_answered(tmp_path, redis_server):
    with ExitStack() as stack:
        upstream = stack.enter_context(FastUpstream())
        replicas = _replicas(stack, tmp_path, upstream, redis_server.url, 3)
        pool = Pool([r.url for r in replicas])

        async def faults() -> None:
            while pool.answered < 150:
                await asyncio.sleep(0.02)
            replicas[0].proc.send_signal(signal.SIGKILL)  # type: ignore[union-attr]
            while pool.answered < 300:
                await asyncio.sleep(0.02)
            redis_server.stop()
            while pool.answered < 550:
                await asyncio.sleep(0.02)
            redis_server.start()

        asyncio.run(_driven(pool, pool.run(conversations=40, turns=20), faults()))
        stats = _counted_again(replicas[1].url)
        for replica in replicas[1:]:
            replica.stop()
    assert pool.answered == 800 and pool.retried >= 1
    assert stats["requests"] > 0  # Redis is back and shared again
    for replica in replicas[1:]:
        warnings = [line for line in replica.stderr_lines if "cannot be reached" in line]
        assert len(warnings) == 1, replica.stderr_lines
        assert any("is back" in line for line in replica.stderr_lines), replica.stderr_lines
        assert not any("Traceback" in line for line in replica.stderr_lines), replica.stderr_lines
