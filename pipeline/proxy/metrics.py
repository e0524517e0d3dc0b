"""The proxy's Prometheus metrics (``GET /metrics``, the ``prometheus-client`` of the ``[proxy]`` extra).

Kept in a registry of the proxy's own (never the process-wide default):

* ``pipeline_proxy_requests_total{route, outcome}``: requests by route (``messages``,
  ``chat``, ``responses``, ``gemini``, ``passthrough``) and outcome (``unchanged``,
  ``rewritten``, ``refused``: answered by the proxy itself); an upstream's failure is
  ``pipeline_proxy_upstream_errors_total``;
* ``pipeline_proxy_added_latency_seconds{route}``: what the proxy adds before the upstream
  is called (reading the body, the policy: parsing, rewriting, a summary made in the
  foreground);
* from the store, so they survive a restart and are shared with ``/_pipeline/stats``:
  ``pipeline_proxy_compactions_total``, ``pipeline_proxy_summaries_reused_total``,
  ``pipeline_proxy_tokens_saved_total``, ``pipeline_proxy_upstream_errors_total``, the
  upstreams' reported ``pipeline_proxy_input_tokens_total`` and
  ``pipeline_proxy_cache_read_tokens_total``, and ``pipeline_proxy_cache_read_share``
  (cache reads over input tokens, 0 before any);
* ``pipeline_proxy_store_round_trips_total``: this replica's round trips to a shared store
  (``--store redis://...``; always 0 with SQLite).
"""

from __future__ import annotations

from typing import Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from pipeline.proxy.store import ProxyStore

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
#: the store's counters exported as Prometheus counters (name in the store -> metric help)
STORED = {
    "compactions": "masking steps and summaries made",
    "summaries_reused": "requests forwarded with a stored summary",
    "tokens_saved": "tokens the policy took off requests (estimated)",
    "upstream_errors": "upstream answers with a status of 400 or more, or none",
    "input_tokens": "input tokens the upstreams reported, cached included",
    "cache_read_tokens": "input tokens the upstreams reported read from their cache",
}


class _StoreCollector(Collector):
    def __init__(self, store: ProxyStore) -> None:
        self.store = store

    def describe(self) -> Iterator[Metric]:
        """The families without their values: registering the collector reads nothing from the store."""
        return self._families({}, 0)

    def collect(self) -> Iterator[Metric]:
        return self._families(self.store.counters(), self.store.round_trips())

    def _families(self, counters: dict[str, int], trips_made: int) -> Iterator[Metric]:
        for name, help_text in STORED.items():
            family = CounterMetricFamily(f"pipeline_proxy_{name}", help_text)
            family.add_metric([], counters.get(name, 0))
            yield family
        share = GaugeMetricFamily("pipeline_proxy_cache_read_share", "cache read tokens over input tokens")
        inputs = counters.get("input_tokens", 0)
        share.add_metric([], counters.get("cache_read_tokens", 0) / inputs if inputs else 0.0)
        yield share
        trips = CounterMetricFamily("pipeline_proxy_store_round_trips", "round trips to a shared store (Redis) "
                                    "made by this replica")
        trips.add_metric([], trips_made)
        yield trips


class Metrics:
    """The proxy's metrics; :meth:`text` is the ``/metrics`` page."""

    def __init__(self, store: ProxyStore) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter("pipeline_proxy_requests", "requests by route and outcome", ["route", "outcome"],
                                registry=self.registry)
        self.added = Histogram("pipeline_proxy_added_latency_seconds", "time the proxy adds before the upstream call",
                               ["route"], registry=self.registry,
                               buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0, 30.0))
        self.registry.register(_StoreCollector(store))

    def request(self, route: str, outcome: str) -> None:
        self.requests.labels(route, outcome).inc()

    def added_latency(self, route: str, seconds: float) -> None:
        self.added.labels(route).observe(seconds)

    def text(self) -> bytes:
        return generate_latest(self.registry)
