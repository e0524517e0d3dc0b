"""One client factory (pipeline.llm.factory): in `pipeline run` the chat model's client and the
auto-compaction summarizer both get the profile's timeout and bounds (not llm/http.py's 600 s)."""

from __future__ import annotations

import argparse

from pipeline.cli._agent import add_agent_arguments, build_agent
from pipeline.cli._profile import add_profile_arguments
from pipeline.llm.limits import Limits
from pipeline.testing.loopback import LoopbackServer


def _args(tmp_path, profile_yaml):
    parser = argparse.ArgumentParser()
    add_profile_arguments(parser)
    add_agent_arguments(parser)
    return parser.parse_args([str(profile_yaml), "--session", str(tmp_path / "s.jsonl"), "--new", "--model", "m",
                              "--base-url", "http://127.0.0.1:9/v1", "--cwd", str(tmp_path)])


def test_pipeline_run_builds_both_clients_with_the_profile_bounds(tmp_path):
    profile = tmp_path / "p.yaml"
    profile.write_text("extends: builtin:default\nsummarizer:\n  timeout_s: 7.5\n  call_deadline_s: 42\n"
                       "  max_response_bytes: 65536\n  max_chars_per_token: 9\n  max_retries: 1\n")
    setup = build_agent(_args(tmp_path, profile))
    try:
        chat = setup.agent.client._http
        summarizer = setup.conversation.summarizer
        bounds = Limits(42.0, 65536, 9)
        assert (chat.timeout, chat.limits) == (7.5, bounds)
        assert (summarizer.timeout, summarizer.limits, summarizer.retry.max_retries) == (7.5, bounds, 1)
        assert summarizer.url == "http://127.0.0.1:9/v1/chat/completions"
    finally:
        setup.close()


def test_a_slow_model_times_out_at_the_profile_timeout(tmp_path):
    from pipeline import compile_profile
    from pipeline.runtime.host import ModelInfo

    pipeline = compile_profile("default", {"summarizer.timeout_s": 0.5, "summarizer.call_deadline_s": 30})
    with LoopbackServer([{"text": "late", "delay": 3}]) as server:
        client = pipeline.chat_client(ModelInfo(id="m", provider="openai"), "openai", base_url=server.openai_base_url,
                                      env={"OPENAI_API_KEY": "k"})
        try:
            reply = client.send({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        finally:
            client.close()
    assert reply["stopReason"] == "error"
    assert "timed out after 0.5s" in reply["errorMessage"]


def test_hosts_import_the_facade_types_from_pipeline():
    import pipeline
    from pipeline.prompt import RenderContext
    from pipeline.runtime.host import ModelInfo
    from pipeline.session import SessionFile

    assert (pipeline.RenderContext, pipeline.SessionFile, pipeline.ModelInfo) == (RenderContext, SessionFile, ModelInfo)
    assert {"RenderContext", "SessionFile", "ModelInfo"} <= set(pipeline.__all__)
