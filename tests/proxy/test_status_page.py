"""The proxy's status page (`GET /`), served by the real `pipeline proxy` after a conversation crossed
its trigger, opened in headless Chromium: no console error, the counters, the profile's prompt beside
the agent's own, each conversation's context drawn against the trigger; and a screenshot of it."""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

import httpx
import pytest

from .proxyrun import ProxyProcess
from .test_masking import _anthropic
from .upstream import RecordingUpstream

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "prompt"))
from prompt_browser import find_browser, open_page  # noqa: E402

BROWSER = find_browser()
PROFILE = """extends: builtin:default
name: status
system_prompt:
  sections:
    - {id: team_note, after: rules, text: "Run make check before you call a change done."}
compaction:
  strategy: mask_tool_results
  trigger: {tokens: 3000}
  keep_recent_tokens: 600
"""
SCRIPT = """JSON.stringify({
  title: document.title,
  requests: document.querySelector('[data-counter="requests"]').textContent,
  compactions: document.querySelector('[data-counter="compactions"]').textContent,
  prompt: document.getElementById("system-prompt").innerText,
  rows: [...document.querySelectorAll("tr.conversation")].map(tr => ({
    requests: Number(tr.dataset.requests),
    points: Number(tr.querySelector("svg").dataset.points),
    drawn: [...tr.querySelectorAll("polyline, line")].map(el => el.getBoundingClientRect().width),
  })),
})"""


@pytest.mark.skipif(BROWSER is None, reason="no Chromium binary found (apt-get install -y chromium)")
def test_the_status_page_in_chromium(tmp_path):
    (tmp_path / "p.yaml").write_text(PROFILE)
    with RecordingUpstream() as upstream:
        with ProxyProcess(str(tmp_path / "p.yaml"), "--anthropic-url", upstream.url, store=tmp_path / "s.db") as proxy:
            for turns in (1, 2, 4, 6, 7):
                httpx.post(proxy.url + "/v1/messages", content=json.dumps(_anthropic(turns)),
                           headers={"x-api-key": "k"}, timeout=30)
            page = httpx.get(proxy.url + "/", timeout=30)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = tmp_path / "status.html"
    html.write_bytes(page.content)
    shot = tmp_path / "status.png"
    errors, value = open_page(BROWSER, html, SCRIPT, screenshot=shot)
    assert errors == []
    shown = json.loads(value)
    assert shown["title"] == f"pipeline proxy: {tmp_path / 'p.yaml'}"
    assert shown["requests"] == "5" and int(shown["compactions"]) >= 1
    assert "Run make check before you call a change done." in shown["prompt"]
    assert "the agent's own system prompt stands here" in shown["prompt"]
    [row] = shown["rows"]
    assert row["requests"] == 5 and row["points"] == 5 and all(width > 0 for width in row["drawn"])
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 400 and height >= 300 and len(data) > 10_000
