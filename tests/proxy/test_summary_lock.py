"""A summary never outlives its lock: the lock covers the whole summary (its calls, checks and
retries: ``summarizer.compaction_deadline_s``), and a summary that comes back after its lock
was lost is dropped, never stored (another holder may be summarizing the same history).

The policy runs in process against a real SQLite store and a loopback upstream that answers
the summary calls after scripted delays (delays, never timed assertions).
"""

from __future__ import annotations

import time
from pathlib import Path

from pipeline.proxy.command import policy_of
from pipeline.proxy.policy import Surround
from pipeline.proxy.routes import Upstreams
from pipeline.proxy.store import Claim, Store
from pipeline.proxy.windows import Windows
from pipeline.proxy.wire import chain

from .policyrun import answering, policies, summary_text
from .upstream import RecordingUpstream
from .test_summary import _conversation

PROFILE = """extends: builtin:default
name: locked
compaction:
  trigger: {tokens: 3000}
  keep_recent_tokens: 800
summarizer:
  call_deadline_s: 1.0
  compaction_deadline_s: 30
"""


def _lock(body: dict) -> str:
    return "summary:" + chain(body["messages"][:1])[1]


def _two_turns() -> dict:
    """A finished turn, then a long one the cut falls inside: two summary calls (the history,
    the turn's prefix)."""
    body = _conversation(6)
    later = _conversation(12)["messages"][2 + 2 * 6:]
    body["messages"] += [{"role": "user", "content": "Now fix the bug in f9."}, *later]
    return body


def test_the_lock_holds_through_a_summary_longer_than_one_call(tmp_path: Path):
    """Two calls (the history, the split turn's prefix), each answered after 0.7 s: past one
    call's deadline, within the compaction's. While the second is answered the lock is still
    held (it expired after 1 s before: another replica could summarize too)."""
    body = _two_turns()
    held_during_retry: list[bool] = []
    with RecordingUpstream() as upstream:
        run = policies(tmp_path, PROFILE, upstream)
        valid = answering(summary_text(run.pipeline))

        def answer(handler, seen) -> None:
            time.sleep(0.7)
            if len(upstream.recorder.seen) > 1:
                held_during_retry.append(run.store.locked(_lock(body)))
            valid(handler, seen)
        upstream.recorder.answer = answer
        out = run.send(body)
    assert len(run.calls) == 2 and held_during_retry == [True]
    assert out is not None and run.store.counters()["compactions"] == 1


class _ShortLocks(Store):
    """A store whose locks expire after 0.3 s whatever is asked (a lock lost mid-summary)."""

    def claim(self, key: str, ttl_s: float) -> Claim:
        return super().claim(key, 0.3)


def test_a_summary_back_after_its_lock_expired_is_dropped(tmp_path: Path):
    body = _conversation(12)
    with RecordingUpstream() as upstream:
        run = policies(tmp_path, PROFILE, upstream)
        valid = answering(summary_text(run.pipeline))

        def answer(handler, seen) -> None:
            time.sleep(0.6)
            valid(handler, seen)
        upstream.recorder.answer = answer
        short = _ShortLocks(tmp_path / "short.db").open()
        run.policy = policy_of(run.pipeline, Surround(), Windows.of(run.pipeline.profile), short,
                               Upstreams(anthropic=upstream.url))
        out = run.send(body)
    assert len(run.calls) == 1  # the summary was made, then found late
    assert out is None  # forwarded as the client sent it
    assert short.summary_for(chain(body["messages"])) is None
    counters = short.counters()
    assert counters["summary_failures"] == 1 and counters["compactions"] == 0
    assert run.calls[0]["model"] == "claude-x"
