"""Preparing a summary in the background happens once per history: a history whose preparing
ended without a summary (here the upstream refuses the call) is not prepared again on each
request that repeats it; a longer history is. (Each repeat spawned a thread and, with a
failing call, sent the summary request upstream again.)"""

from __future__ import annotations

import json
import time

import httpx

from .proxyrun import ProxyProcess
from .test_summary import _answer, _conversation, profile  # noqa: F401  (the fixture)
from .upstream import RecordingUpstream


def _failures(url: str, at_least: int) -> int:
    for _ in range(300):
        failures = int(httpx.get(url + "/_pipeline/stats", timeout=30).json()["summary_failures"])
        if failures >= at_least:
            return failures
        time.sleep(0.1)
    return failures


def test_a_history_whose_preparing_made_no_summary_is_not_prepared_again(tmp_path, profile):  # noqa: F811
    with RecordingUpstream() as upstream:
        upstream.recorder.answer = _answer(401)
        with ProxyProcess(profile, "--anthropic-url", upstream.url, "--prepare-at", "0.5",
                          store=tmp_path / "s.db") as proxy:
            def post(body: dict) -> None:
                answer = httpx.post(proxy.url + "/v1/messages", content=json.dumps(body), timeout=60,
                                    headers={"x-api-key": "sk-client-key"})
                assert answer.status_code == 200

            post(_conversation(7))  # past half of the 3,000-token trigger, below it: prepared, refused
            assert _failures(proxy.url, 1) == 1
            for _ in range(3):  # the same history again
                post(_conversation(7))
                time.sleep(0.5)
            post(_conversation(8))  # a longer one: prepared again
            assert _failures(proxy.url, 2) >= 2
            time.sleep(0.5)
            stats = httpx.get(proxy.url + "/_pipeline/stats", timeout=30).json()
    calls = [s for s in upstream.recorder.seen if b"<conversation>" in s.raw]
    forwarded = [s for s in upstream.recorder.seen if b"<conversation>" not in s.raw]
    assert len(calls) == 2 and stats["summary_failures"] == 2
    assert len(forwarded) == 5 and stats["compactions"] == 0
