"""Summaries on the wire (`compaction.strategy: summarize`): the real `pipeline proxy` between a client
and a recording upstream that answers the profile's summary request as a model would.

The request that crosses the trigger makes one summary call upstream, with the client's model and
key; it is forwarded as the summary (in the profile's wrapper, the user's request kept) and the
recent messages, tool calls and results paired. The next requests with that history reuse the
stored summary, byte for byte, without a second call; a summary call the upstream refuses leaves
the request as the client sent it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest

from pipeline import compile_profile

from .proxyrun import ProxyProcess
from .upstream import RecordingUpstream

PROFILE = """extends: builtin:default
name: summaries
compaction:
  trigger: {tokens: 3000}
  keep_recent_tokens: 800
"""
OUTPUT = "line of a long file\n" * 60


def _summary_text() -> str:
    summary = compile_profile("default").profile.summary
    return "\n".join(f"{summary.schema_format.section_prefix}{s.heading}\n- the files were read" for s in summary.schema_)


SUMMARY = _summary_text()


INSIDE = {"role": "system", "content": "a system message inside messages, as Claude Code sends one"}


def _conversation(turns: int) -> dict:
    messages: list[dict] = [{"role": "user", "content": "Read every file and fix the bug in f3."}, INSIDE]
    for i in range(turns):
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"t{i}", "name": "read", "input": {"path": f"f{i}"}}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                                      "content": OUTPUT + str(i)}]})
    return {"model": "claude-x", "max_tokens": 64, "system": "own", "messages": messages}


def _answer(status: int = 200):
    def answer(handler, seen):
        summary_call = b"<conversation>" in seen.raw
        text = SUMMARY if summary_call else "ok"
        data = json.dumps({"id": "m", "type": "message", "role": "assistant", "model": "claude-x",
                           "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                           "usage": {"input_tokens": len(seen.raw) // 4, "output_tokens": 5}}).encode()
        if summary_call and status != 200:
            data = json.dumps({"type": "error", "error": {"type": "authentication_error", "message": "no"}}).encode()
        handler.send_response(status if summary_call else 200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
    return answer


@pytest.fixture()
def profile(tmp_path: Path) -> str:
    (tmp_path / "p.yaml").write_text(PROFILE)
    return str(tmp_path / "p.yaml")


def _run(tmp_path: Path, profile: str, bodies: list[dict], status: int = 200) -> tuple[list, dict]:
    with RecordingUpstream() as upstream:
        upstream.recorder.answer = _answer(status)
        with ProxyProcess(profile, "--anthropic-url", upstream.url, store=tmp_path / "s.db") as proxy:
            for body in bodies:
                answer = httpx.post(proxy.url + "/v1/messages", content=json.dumps(body), timeout=60,
                                    headers={"x-api-key": "sk-client-key", "anthropic-version": "2023-06-01"})
                assert answer.status_code == 200, answer.text
            stats = httpx.get(proxy.url + "/_pipeline/stats", timeout=30).json()
        return list(upstream.recorder.seen), stats


def test_one_summary_is_made_then_reused(tmp_path, profile):
    seen, stats = _run(tmp_path, profile, [_conversation(2), _conversation(12), _conversation(13)])
    small, call, crossed, later = seen
    assert small.raw == json.dumps(_conversation(2)).encode()
    request = json.loads(call.raw)
    assert call.headers["x-api-key"] == "sk-client-key" and request["model"] == "claude-x"
    assert "<conversation>" in json.dumps(request) and "Read every file" in json.dumps(request)
    sent = json.loads(crossed.raw)["messages"]
    assert sent[0] == INSIDE and INSIDE["content"] not in json.dumps(request)  # kept whole, not summarized
    sent = sent[1:]
    first = sent[0]["content"]
    assert first[0]["text"].count(SUMMARY) == 1 and first[1:] == [{"type": "text", "text":
                                                                   "Read every file and fix the bug in f3."}]
    assert sent[1]["role"] == "assistant" and len(sent) < len(_conversation(12)["messages"])
    ids = [b["id"] for m in sent for b in m["content"] if isinstance(m["content"], list) and b.get("type") == "tool_use"]
    results = [b["tool_use_id"] for m in sent if isinstance(m["content"], list) for b in m["content"]
               if b.get("type") == "tool_result"]
    assert ids == results and ids[-1] == "t11"  # pairs whole, the latest kept
    again = json.loads(later.raw)["messages"][1:]
    assert json.dumps(again[:len(sent)]) == json.dumps(sent)  # reused: the same bytes, no second call
    assert stats["compactions"] == 1 and stats["summaries_reused"] == 1 and stats["summary_failures"] == 0


def test_a_refused_summary_call_leaves_the_request_as_sent(tmp_path, profile):
    seen, stats = _run(tmp_path, profile, [_conversation(12)], status=401)
    forwarded = [s for s in seen if b"<conversation>" not in s.raw]
    assert forwarded[0].raw == json.dumps(_conversation(12)).encode()
    assert stats["summary_failures"] == 1 and stats["compactions"] == 0


def test_a_summary_is_prepared_before_the_trigger_and_the_crossing_request_does_not_wait(tmp_path, profile):
    """At 0.5 of the threshold the summary starts in the background; a request still below the
    trigger goes as it came (the prepared summary stands in for nothing yet); the request that
    crosses the trigger finds it: no summary call happens between it and its forwarding."""
    with RecordingUpstream() as upstream:
        upstream.recorder.answer = _answer()
        with ProxyProcess(profile, "--anthropic-url", upstream.url, "--prepare-at", "0.5",
                          store=tmp_path / "s.db") as proxy:
            post = lambda body: httpx.post(proxy.url + "/v1/messages", content=json.dumps(body), timeout=60,  # noqa: E731
                                           headers={"x-api-key": "sk-client-key"})
            assert post(_conversation(7)).status_code == 200  # ~2,000 tokens: past half of 3,000, below it
            for _ in range(100):
                stats = httpx.get(proxy.url + "/_pipeline/stats", timeout=30).json()
                if stats["summaries_prepared"]:
                    break
                time.sleep(0.1)
            prepared = httpx.get(proxy.url + "/_pipeline/stats", timeout=30).json()
            assert post(_conversation(8)).status_code == 200  # still below the trigger
            below = upstream.recorder.seen[-1]
            before = len(upstream.recorder.seen)
            assert post(_conversation(10)).status_code == 200  # crosses the trigger
            stats = httpx.get(proxy.url + "/_pipeline/stats", timeout=30).json()
        after = upstream.recorder.seen[before:]
    # prepared, it stood in for nothing below the trigger: that request went as the client sent it
    assert prepared["compactions"] == 0 and below.raw == json.dumps(_conversation(8)).encode()
    assert stats["summaries_prepared"] >= 1 and stats["compactions"] >= 1  # recorded when the trigger was crossed
    # forwarded at once, with the prepared summary (a next summary may then start in the background)
    assert b"<conversation>" not in after[0].raw
    assert json.dumps(SUMMARY)[1:-1] in after[0].raw.decode()


def test_a_summary_survives_a_restart_on_the_same_store_and_no_credential_is_stored(tmp_path, profile):
    """The proxy restarted on the same `--store` reuses the summary the first process made: no
    second summary call; the client's key is nowhere in the store's files."""
    first, _ = _run(tmp_path, profile, [_conversation(12)])
    assert sum(b"<conversation>" in s.raw for s in first) == 1
    again, stats = _run(tmp_path, profile, [_conversation(13)])  # a new process, the same file
    assert [b"<conversation>" in s.raw for s in again] == [False]
    assert json.dumps(SUMMARY)[1:-1] in again[0].raw.decode()
    assert stats["summaries_reused"] >= 1 and stats["compactions"] == 1
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("s.db*"))
    assert b"sk-client-key" not in stored
