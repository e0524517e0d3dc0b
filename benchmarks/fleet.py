"""The `pipeline proxy` fleet: throughput and added latency with one, two and three replicas on one Redis.

Run by hand from the checkout (not a test; nothing here is asserted):

    python benchmarks/fleet.py [--conversations 64] [--turns 30]

One fast upstream process (``tests/proxy/fastupstream.py``: Anthropic Messages answered at once,
summary requests too), one ``redis-server`` (Debian's package), and the real
``python -m pipeline proxy`` replicas with the fleet tests' profile (a trigger of 600 tokens, so
every conversation is summarized several times and most requests carry a stored summary). A
client pool (``tests/proxy/fleet.py``, one httpx keep-alive client, every conversation at once)
sends each conversation's requests one after the other, turn by turn to the next replica.

For each set-up it prints requests per second, the client's latency p50 and p99, the same
minus the direct run's (the client straight at the upstream: what the fleet adds), and the
store's round trips per request: the replicas' own count
(``pipeline_proxy_store_round_trips_total``) and the commands Redis processed
(``INFO stats``; a pipeline's commands each count), each over the requests. Each set-up
is warmed up by two turns per conversation first; Redis is emptied before each measured run.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Optional

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.proxy.fleet import PROFILE, FastUpstream, Pool  # noqa: E402
from tests.proxy.proxyrun import ProxyProcess  # noqa: E402
from tests.proxy.redisrun import RedisServer  # noqa: E402


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _round_trips(url: str) -> int:
    for line in httpx.get(url + "/metrics", timeout=30).text.splitlines():
        if line.startswith("pipeline_proxy_store_round_trips_total "):
            return int(float(line.split()[1]))
    return 0


def _run(urls: list[str], conversations: int, turns: int) -> tuple[float, list[float]]:
    """A warm-up of two turns per conversation (connections opened, code paths warm), then the run."""
    _measured(urls, conversations, 2)
    return _measured(urls, conversations, turns)


def _measured(urls: list[str], conversations: int, turns: int) -> tuple[float, list[float]]:
    pool = Pool(urls)

    async def go() -> None:
        try:
            await pool.run(conversations, turns)
        finally:
            await pool.aclose()
    started = time.perf_counter()
    asyncio.run(go())
    return pool.answered / (time.perf_counter() - started), pool.latencies


def _row(name: str, rate: float, latencies: list[float], direct: Optional[tuple[float, float]],
         trips: str = "-", commands: str = "-") -> str:
    p50, p99 = statistics.median(latencies) * 1000, _percentile(latencies, 0.99) * 1000
    added = "-" if direct is None else f"{p50 - direct[0]:.1f} / {p99 - direct[1]:.1f}"
    return f"| {name} | {rate:.0f} | {p50:.1f} / {p99:.1f} | {added} | {trips} | {commands} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=64)
    parser.add_argument("--turns", type=int, default=30)
    args = parser.parse_args()
    requests = args.conversations * args.turns
    with ExitStack() as stack:
        home = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        (home / "fleet.yaml").write_text(PROFILE)
        redis_server = stack.enter_context(RedisServer(home / "redis"))
        upstream = stack.enter_context(FastUpstream())
        print(f"{args.conversations} conversations at once x {args.turns} turns = {requests} requests per set-up\n")
        print("| set-up | requests/s | latency p50 / p99 (ms) | added p50 / p99 (ms) | store round trips / request "
              "| Redis commands / request |")
        print("| --- | --- | --- | --- | --- | --- |")
        rate, latencies = _run([upstream.url], args.conversations, args.turns)
        direct = (statistics.median(latencies) * 1000, _percentile(latencies, 0.99) * 1000)
        print(_row("direct to the upstream", rate, latencies, None), flush=True)
        with ProxyProcess(str(home / "fleet.yaml"), "--anthropic-url", upstream.url, store=home / "s.db") as one:
            rate, latencies = _run([one.url], args.conversations, args.turns)
        print(_row("1 replica, SQLite", rate, latencies, direct, "0"), flush=True)
        for count in (1, 2, 3):
            redis_server.client().flushdb()
            with ExitStack() as fleet:
                replicas = [fleet.enter_context(ProxyProcess(str(home / "fleet.yaml"), "--anthropic-url", upstream.url,
                                                             store=redis_server.url)) for _ in range(count)]
                urls = [r.url for r in replicas]
                _measured(urls, args.conversations, 2)
                redis_server.client().flushdb()
                before = int(redis_server.client().info("stats")["total_commands_processed"])
                trips_before = sum(_round_trips(url) for url in urls)
                rate, latencies = _measured(urls, args.conversations, args.turns)
                commands = int(redis_server.client().info("stats")["total_commands_processed"]) - before
                trips = sum(_round_trips(url) for url in urls) - trips_before
            print(_row(f"{count} replica{'s' if count > 1 else ''}, Redis", rate, latencies, direct,
                       f"{trips / requests:.1f}", f"{commands / requests:.1f}"), flush=True)


if __name__ == "__main__":
    main()
