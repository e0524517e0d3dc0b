"""What counts toward the trigger is the request's estimate anchored to the upstream's last
reported usage for the conversation: through the real `pipeline proxy`, an upstream that
reports twice the proxy's estimate makes the next request of that conversation count twice,
so it crosses the trigger where the bare estimate would not; before any report the estimate
stands alone."""

from __future__ import annotations

import json

import httpx

from pipeline.proxy.routes import Upstreams, route
from pipeline.proxy.wire import SCALE_BOUNDS, Request

from .proxyrun import ProxyProcess
from .test_summary import PROFILE, SUMMARY, _conversation
from .upstream import RecordingUpstream, json_answer


def _reporting(factor: float):
    """An Anthropic upstream whose answers report ``factor`` times the proxy's estimate as input."""
    def answer(handler, seen) -> None:
        summary_call = b"<conversation>" in seen.raw
        json_answer(handler, 200, json.dumps({
            "id": "m", "type": "message", "role": "assistant", "model": "claude-x", "stop_reason": "end_turn",
            "content": [{"type": "text", "text": SUMMARY if summary_call else "ok"}],
            "usage": {"input_tokens": int(len(seen.raw) // 4 * factor), "output_tokens": 5}}).encode())
    return answer


def _run(tmp_path, factor: float) -> tuple[list, dict]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "p.yaml").write_text(PROFILE)  # trigger 3,000 tokens
    with RecordingUpstream() as upstream:
        upstream.recorder.answer = _reporting(factor)
        with ProxyProcess(str(tmp_path / "p.yaml"), "--anthropic-url", upstream.url, "--prepare-at", "0",
                          store=tmp_path / "s.db") as proxy:
            for turns in (7, 8):  # about 2,000 and 2,300 tokens by the estimate: both below 3,000
                reply = httpx.post(proxy.url + "/v1/messages", content=json.dumps(_conversation(turns)), timeout=60,
                                   headers={"x-api-key": "sk-client-key"})
                assert reply.status_code == 200, reply.text
            stats = httpx.get(proxy.url + "/_pipeline/stats", timeout=30).json()
        return list(upstream.recorder.seen), stats


def test_an_upstream_that_counts_twice_the_estimate_brings_the_trigger_closer(tmp_path):
    seen, stats = _run(tmp_path, 2.0)
    first, call, second = seen
    assert first.raw == json.dumps(_conversation(7)).encode()  # no report yet: the estimate alone, below
    assert b"<conversation>" in call.raw and stats["compactions"] == 1  # 2,300 counted twice: past 3,000
    assert json.dumps(SUMMARY)[1:-1] in second.raw.decode()


def test_an_upstream_that_counts_as_or_below_the_proxys_estimate_changes_nothing(tmp_path):
    for factor in (1.0, 0.1):
        seen, stats = _run(tmp_path / str(factor), factor)
        assert [s.raw for s in seen] == [json.dumps(_conversation(t)).encode() for t in (7, 8)]
        assert stats["compactions"] == 0


def test_the_scale_is_the_report_over_the_estimate_within_bounds():
    where = route("/v1/messages", "", {}, Upstreams())
    body = _conversation(1)
    assert Request(where, body).scale == 1.0  # no store: the estimate alone
    assert Request(where, body, anchor=lambda conversation: None).scale == 1.0  # no report yet
    assert Request(where, body, anchor=lambda conversation: (300, 200)).scale == 1.5
    assert Request(where, body, anchor=lambda conversation: (10**9, 1)).scale == SCALE_BOUNDS[1]
    assert Request(where, body, anchor=lambda conversation: (1, 10**9)).scale == SCALE_BOUNDS[0] == 1.0
    assert Request(where, body, anchor=lambda conversation: (300, 200)).tokens(body) == Request(where, body).tokens(body) * 1.5
