"""`GET /metrics` of the real `pipeline proxy`, read with prometheus-client's own parser."""

from __future__ import annotations

import json

import httpx
from prometheus_client.parser import text_string_to_metric_families

from .proxyrun import ProxyProcess
from .upstream import RecordingUpstream

TEAM = """extends: builtin:default
name: team
system_prompt:
  sections:
    - {id: team_note, after: rules, text: "Run make check before you call a change done."}
"""


def _samples(text: str) -> dict[tuple[str, tuple], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def test_requests_by_route_and_outcome_latency_and_the_stores_counters(tmp_path):
    (tmp_path / "team.yaml").write_text(TEAM)
    with RecordingUpstream() as upstream:
        with ProxyProcess(str(tmp_path / "team.yaml"), "--anthropic-url", upstream.url, "--openai-url",
                          upstream.url + "/v1", store=tmp_path / "s.db") as proxy:
            body = json.dumps({"model": "c", "max_tokens": 5, "system": "own", "messages": []})
            for _ in range(3):
                httpx.post(proxy.url + "/v1/messages", content=body, headers={"x-api-key": "k"}, timeout=30)
            httpx.get(proxy.url + "/v1/models", headers={"authorization": "Bearer k"}, timeout=30)
            httpx.post(proxy.url + "/v1/chat/completions", content=b"{not json", timeout=30)
            page = httpx.get(proxy.url + "/metrics", timeout=30)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/plain")
    got = _samples(page.text)
    assert got[("pipeline_proxy_requests_total", (("outcome", "rewritten"), ("route", "messages")))] == 3
    assert got[("pipeline_proxy_requests_total", (("outcome", "unchanged"), ("route", "passthrough")))] == 1
    assert got[("pipeline_proxy_requests_total", (("outcome", "refused"), ("route", "chat")))] == 1
    assert got[("pipeline_proxy_added_latency_seconds_count", (("route", "messages"),))] == 3
    assert got[("pipeline_proxy_compactions_total", ())] == 0
    assert ("pipeline_proxy_cache_read_share", ()) in got
