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


def test_compactions_reuse_tokens_saved_cache_share_and_upstream_errors_have_their_values(tmp_path):
    """A conversation summarized once then reused, an upstream that reports cache reads, one
    upstream failure: each store-backed metric carries its value."""
    from .test_summary import PROFILE, SUMMARY, _conversation

    def answer(handler, seen) -> None:
        if seen.path.endswith("/models"):
            handler.send_response(500)
            handler.send_header("content-length", "0")
            handler.end_headers()
            return
        text = SUMMARY if b"<conversation>" in seen.raw else "ok"
        data = json.dumps({"id": "m", "type": "message", "role": "assistant", "model": "c", "stop_reason": "end_turn",
                           "content": [{"type": "text", "text": text}],
                           "usage": {"input_tokens": 100, "cache_read_input_tokens": 300, "output_tokens": 5}}).encode()
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    (tmp_path / "p.yaml").write_text(PROFILE)
    with RecordingUpstream() as upstream:
        upstream.recorder.answer = answer
        with ProxyProcess(str(tmp_path / "p.yaml"), "--anthropic-url", upstream.url, "--openai-url",
                          upstream.url + "/v1", "--prepare-at", "0", store=tmp_path / "s.db") as proxy:
            for turns in (12, 13):
                httpx.post(proxy.url + "/v1/messages", content=json.dumps(_conversation(turns)),
                           headers={"x-api-key": "k"}, timeout=60)
            httpx.get(proxy.url + "/v1/models", headers={"authorization": "Bearer k"}, timeout=30)
            got = _samples(httpx.get(proxy.url + "/metrics", timeout=30).text)
    assert got[("pipeline_proxy_compactions_total", ())] == 1
    assert got[("pipeline_proxy_summaries_reused_total", ())] == 1
    assert got[("pipeline_proxy_tokens_saved_total", ())] > 1000  # ten tool results' worth, summarized
    assert got[("pipeline_proxy_input_tokens_total", ())] == 2 * 400  # the two conversation answers
    assert got[("pipeline_proxy_cache_read_share", ())] == 0.75
    assert got[("pipeline_proxy_upstream_errors_total", ())] == 1
