"""The proxy's compaction policies in process (no server of the proxy's own: these tests are
about what is decided and asked), with a real SQLite store and a real loopback upstream that
answers the summary requests as a model would, and records them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from pipeline import compile_profile
from pipeline.facade import Pipeline
from pipeline.proxy.command import policy_of
from pipeline.proxy.policy import Policy, Surround
from pipeline.proxy.routes import Route, Upstreams, route
from pipeline.proxy.store import Store
from pipeline.proxy.wire import Request
from pipeline.proxy.windows import Windows

from .upstream import RecordingUpstream, Seen

HEADERS = {"x-api-key": "sk-client-key", "anthropic-version": "2023-06-01"}


def summary_text(pipeline: Pipeline) -> str:
    """An answer that passes the profile's schema check: each heading with one item."""
    summary = pipeline.profile.summary
    return "\n".join(f"{summary.schema_format.section_prefix}{s.heading}\n- the files were read" for s in summary.schema_)


def answering(text: str):
    def answer(handler, seen: Seen) -> None:
        data = json.dumps({"id": "m", "type": "message", "role": "assistant", "model": "claude-x",
                           "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                           "usage": {"input_tokens": 10, "output_tokens": 5}}).encode()
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
    return answer


@dataclass
class Policies:
    """A profile's policy against a recording upstream; ``calls``: the summary requests it received."""

    pipeline: Pipeline
    upstream: RecordingUpstream
    store: Store
    policy: Policy
    where: Route
    calls: list[Any] = field(default_factory=list)

    def send(self, body: dict[str, Any]) -> Optional[dict[str, Any]]:
        data = json.loads(json.dumps(body))
        out = self.policy.apply(Request(self.where, data, HEADERS), data)
        self.calls = [json.loads(s.raw) for s in self.upstream.recorder.seen]
        return out


def policies(tmp_path: Path, profile_text: str, upstream: RecordingUpstream, flag: Optional[int] = None) -> Policies:
    (tmp_path / "p.yaml").write_text(profile_text)
    pipeline = compile_profile(str(tmp_path / "p.yaml"))
    upstream.recorder.answer = answering(summary_text(pipeline))
    store = Store(tmp_path / "s.db").open()
    upstreams = Upstreams(anthropic=upstream.url)
    policy = policy_of(pipeline, Surround(), Windows.of(pipeline.profile, flag), store, upstreams)
    assert policy is not None
    return Policies(pipeline, upstream, store, policy, route("/v1/messages", "", HEADERS, upstreams))
