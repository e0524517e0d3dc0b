"""A profile that names a summarizer: the proxy's summary call goes to it (its endpoint, model and
key), not to the client's upstream with the client's credentials (issue 31: "the summary request
uses the client's model and credentials unless the profile names a summarizer")."""

from __future__ import annotations

import json

from .policyrun import answering, policies, summary_text
from .test_summary import _conversation
from .upstream import RecordingUpstream


def test_the_profiles_summarizer_makes_the_summary_with_its_own_model_and_key(tmp_path, monkeypatch):
    monkeypatch.setenv("TEAM_SUMMARIZER_KEY", "sk-team-summarizer")
    with RecordingUpstream() as client_upstream, RecordingUpstream() as summarizer:
        profile = f"""extends: builtin:default
name: named
compaction:
  trigger: {{tokens: 3000}}
  keep_recent_tokens: 800
summarizer:
  provider: anthropic
  model: team-summary-model
  base_url: {summarizer.url}
  api_key_env: TEAM_SUMMARIZER_KEY
"""
        run = policies(tmp_path, profile, client_upstream)
        summarizer.recorder.answer = answering(summary_text(run.pipeline))
        out = run.send(_conversation(12))
        calls = list(summarizer.recorder.seen)
    assert run.calls == []  # nothing asked of the client's upstream with the client's key
    assert len(calls) == 1 and calls[0].path == "/v1/messages"
    assert calls[0].headers["x-api-key"] == "sk-team-summarizer" and b"team-summary-model" in calls[0].raw
    assert b"sk-client-key" not in calls[0].raw and "sk-client-key" not in str(calls[0].headers)
    assert out is not None and json.dumps(summary_text(run.pipeline))[1:-1] in json.dumps(out["messages"])
