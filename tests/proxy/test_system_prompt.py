"""The profile's system prompt on the wire: the real `pipeline proxy` between a client and a recording
upstream on 127.0.0.1, for each provider's shape.

The agent's own prompt stays whole (its blocks, `cache_control` markers and messages untouched);
the team's sections are added where the profile places them, rendered for `--cwd`; the same
request twice is forwarded byte for byte the same (the provider's prompt cache keeps hitting);
`system_prompt.base: profile` replaces the agent's prompt; a profile with no team section
forwards the client's bytes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from .proxyrun import ProxyProcess
from .upstream import RecordingUpstream

TEAM = """extends: builtin:default
name: team
system_prompt:
  sections:
    - {id: team_first, before: custom, text: "Team rules apply."}
    - {id: team_note, after: rules, text: "Run make check before you call a change done."}
    - {id: team_cwd, after: team_note, text: "Build from ${cwd} with make."}
"""
AFTER = "Run make check before you call a change done.\n\nBuild from /src/app with make."
OWN = "You are the agent's own prompt. Use Read and Edit."


@pytest.fixture()
def upstream():
    with RecordingUpstream() as server:
        yield server


def _proxy(tmp_path: Path, upstream: RecordingUpstream, profile: str) -> ProxyProcess:
    return ProxyProcess(profile, "--cwd", "/src/app", "--anthropic-url", upstream.url, "--openai-url",
                        upstream.url + "/v1", "--gemini-url", upstream.url, store=tmp_path / "store.sqlite3")


def _team(tmp_path: Path, text: str = TEAM) -> str:
    (tmp_path / "team.yaml").write_text(text)
    return str(tmp_path / "team.yaml")


def _send(proxy: ProxyProcess, path: str, body: dict) -> None:
    answer = httpx.post(proxy.url + path, content=json.dumps(body), headers={"authorization": "Bearer t"},
                        timeout=30)
    assert answer.status_code == 200, answer.text


def test_anthropic_blocks_stay_whole_and_the_team_sections_surround_them(tmp_path, upstream):
    system = [{"type": "text", "text": "billing header"},
              {"type": "text", "text": OWN, "cache_control": {"type": "ephemeral"}}]
    messages = [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]},
                {"role": "system", "content": "a system message inside messages stays whole"}]
    body = {"model": "claude-x", "max_tokens": 5, "system": system, "messages": messages}
    with _proxy(tmp_path, upstream, _team(tmp_path)) as proxy:
        _send(proxy, "/v1/messages", body)
        _send(proxy, "/v1/messages", body)
        stats = httpx.get(proxy.url + "/_pipeline/stats", timeout=30).json()
    first, second = upstream.recorder.seen
    sent = json.loads(first.raw)
    assert sent["system"] == [{"type": "text", "text": "Team rules apply."}, *system,
                              {"type": "text", "text": AFTER}]
    assert sent["messages"] == messages and sent["model"] == "claude-x"
    assert first.raw == second.raw  # the same request, the same bytes: the cached prefix holds
    assert stats["rewritten"] == 2 and stats["requests"] == 2


def test_a_string_system_prompt_gets_the_sections_with_their_separators(tmp_path, upstream):
    with _proxy(tmp_path, upstream, _team(tmp_path)) as proxy:
        _send(proxy, "/v1/messages", {"model": "c", "max_tokens": 5, "system": OWN, "messages": []})
        _send(proxy, "/v1/messages", {"model": "c", "max_tokens": 5, "messages": []})
    with_own, without = (json.loads(s.raw)["system"] for s in upstream.recorder.seen)
    assert with_own == f"Team rules apply.\n\n{OWN}\n\n{AFTER}"
    assert without == f"Team rules apply.\n\n{AFTER}"


def test_openai_chat_responses_and_gemini_carry_the_agents_prompt_and_the_teams(tmp_path, upstream):
    with _proxy(tmp_path, upstream, _team(tmp_path)) as proxy:
        _send(proxy, "/v1/chat/completions", {"model": "g", "messages": [
            {"role": "developer", "content": OWN}, {"role": "user", "content": "hi"}]})
        _send(proxy, "/v1/chat/completions", {"model": "g", "messages": [
            {"role": "system", "content": [{"type": "text", "text": OWN}]}, {"role": "user", "content": "hi"}]})
        _send(proxy, "/v1/chat/completions", {"model": "g", "messages": [{"role": "user", "content": "hi"}]})
        _send(proxy, "/v1/responses", {"model": "g", "instructions": OWN, "input": "hi"})
        _send(proxy, "/v1beta/models/gemini-x:generateContent",
              {"systemInstruction": {"parts": [{"text": OWN}]}, "contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
    chat_text, chat_parts, chat_none, responses, gemini = (json.loads(s.raw) for s in upstream.recorder.seen)
    whole = f"Team rules apply.\n\n{OWN}\n\n{AFTER}"
    assert chat_text["messages"] == [{"role": "developer", "content": whole}, {"role": "user", "content": "hi"}]
    assert chat_parts["messages"][0]["content"] == [{"type": "text", "text": "Team rules apply."},
                                                    {"type": "text", "text": OWN}, {"type": "text", "text": AFTER}]
    assert chat_none["messages"] == [{"role": "system", "content": f"Team rules apply.\n\n{AFTER}"},
                                     {"role": "user", "content": "hi"}]
    assert responses["instructions"] == whole and responses["input"] == "hi"
    assert gemini["systemInstruction"]["parts"] == [{"text": "Team rules apply."}, {"text": OWN}, {"text": AFTER}]
    assert gemini["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]


def test_base_profile_replaces_the_agents_prompt_with_the_profiles(tmp_path, upstream):
    profile = _team(tmp_path, TEAM.replace("system_prompt:\n", "system_prompt:\n  base: profile\n"))
    expected = subprocess.run([sys.executable, "-m", "pipeline", "render", profile, "--cwd", "/src/app"],
                              capture_output=True, text=True, check=True).stdout
    with _proxy(tmp_path, upstream, profile) as proxy:
        _send(proxy, "/v1/responses", {"model": "g", "instructions": OWN, "input": "hi"})
    sent = json.loads(upstream.recorder.seen[0].raw)["instructions"]
    assert OWN not in sent and "Run make check" in sent and "Team rules apply." in sent
    assert sent.strip() == expected.strip()


def test_a_profile_without_team_sections_forwards_the_clients_bytes(tmp_path, upstream):
    raw = b'{"model":"c",  "system":"own",\n"messages":[]}'
    with _proxy(tmp_path, upstream, "builtin:default") as proxy:
        answer = httpx.post(proxy.url + "/v1/messages", content=raw, headers={"x-api-key": "k"}, timeout=30)
        assert answer.status_code == 200
        stats = httpx.get(proxy.url + "/_pipeline/stats", timeout=30).json()
    assert upstream.recorder.seen[0].raw == raw
    assert stats["unchanged"] == 1 and stats.get("rewritten", 0) == 0
