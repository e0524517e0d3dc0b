"""Cache economics of masking on the wire: a scripted 50-turn conversation sent directly and through
the real `pipeline proxy`, billed as Anthropic's prefix cache bills (a request's longest prefix of
whole messages seen in an earlier request is read from the cache at a tenth of the price).

Until the first masking step the proxied requests are the direct ones, byte for byte, so the
cache-read share is the same; each step costs one miss of what follows it; over the whole
conversation the proxy bills less input than the direct run.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from .proxyrun import ProxyProcess
from .upstream import RecordingUpstream

PROFILE = """extends: builtin:default
name: masking
compaction:
  strategy: mask_tool_results
  trigger: {tokens: 12000}
  keep_recent_tokens: 3000
"""
TURNS = 50


def _conversation(turns: int) -> dict:
    messages: list[dict] = [{"role": "user", "content": "Review the repository file by file."}]
    for i in range(turns):
        messages.append({"role": "assistant", "content": [
            {"type": "text", "text": f"Reading file {i}."},
            {"type": "tool_use", "id": f"t{i}", "name": "read", "input": {"path": f"src/f{i}.py"}}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                                      "content": f"# file {i}\n" + "code line\n" * 150}]})
    return {"model": "claude-x", "max_tokens": 64, "system": "own prompt", "messages": messages}


def _bill(bodies: list[dict]) -> tuple[list[float], float]:
    """Per request the cache-read share, and the billed input over all (cache reads at 0.1)."""
    seen: set[str] = set()
    shares, billed = [], 0.0
    for body in bodies:
        parts = [json.dumps(m, sort_keys=True, separators=(",", ":")) for m in body["messages"]]
        total = sum(len(p) for p in parts) / 4
        cached, prefix = 0.0, ""
        for part in parts:
            prefix += part
            if prefix not in seen:
                break
            cached += len(part) / 4
        prefix = ""
        for part in parts:
            prefix += part
            seen.add(prefix)
        shares.append(cached / total)
        billed += (total - cached) + cached * 0.1
    return shares, billed


def test_the_proxy_keeps_the_cache_and_bills_less_input(tmp_path):
    (tmp_path / "p.yaml").write_text(PROFILE)
    direct = [_conversation(n) for n in range(1, TURNS + 1)]
    with RecordingUpstream() as upstream:
        with ProxyProcess(str(tmp_path / "p.yaml"), "--anthropic-url", upstream.url, store=tmp_path / "s.db") as proxy:
            with httpx.Client(timeout=30) as client:
                for body in direct:
                    answer = client.post(proxy.url + "/v1/messages", content=json.dumps(body),
                                         headers={"x-api-key": "k"})
                    assert answer.status_code == 200
                stats = client.get(proxy.url + "/_pipeline/stats").json()
        proxied = [json.loads(s.raw) for s in upstream.recorder.seen]
    direct_shares, direct_billed = _bill(direct)
    proxied_shares, proxied_billed = _bill(proxied)
    first_step = next(i for i, (a, b) in enumerate(zip(direct, proxied)) if a != b)
    assert 5 < first_step < TURNS - 5 and stats["compactions"] >= 2
    assert proxied_shares[:first_step] == direct_shares[:first_step]
    # between steps the prefix holds: most requests read most of themselves from the cache
    hits = [s for s in proxied_shares[first_step:] if s > 0.5]
    assert len(hits) >= 0.7 * (TURNS - first_step), proxied_shares
    assert proxied_billed < direct_billed * 0.9, (proxied_billed, direct_billed)
