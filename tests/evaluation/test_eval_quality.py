"""``pipeline eval``: generated sessions with planted facts, the measures, text/JSON/HTML output."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pipeline import compile_profile
from pipeline.cli import main
from pipeline.evaluation.generate import generate, write_corpus
from pipeline.evaluation.quality import Evaluator, f1, summarize_rows
from pipeline.session import SessionFile

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "prompt"))
from prompt_browser import find_browser, open_page  # noqa: E402

BROWSER = find_browser()


def test_generated_sessions_are_pi_sessions_with_their_facts(tmp_path):
    conversation = generate(7)
    path = conversation.write(tmp_path / "g.jsonl")
    session = SessionFile.open(path)
    assert session.problems == [] and len(session.path_to()) == 5 * 12 * 4
    facts = json.loads((tmp_path / "g.facts.json").read_text())["facts"]
    assert len(facts) == 60 and {f["kind"] for f in facts} == {"path", "id", "number", "constraint"}
    text = path.read_text()
    assert all(text.count(f["value"]) >= 1 for f in facts)
    assert {f["where"] for f in facts} == {"user", "toolResult"}
    assert generate(7) == conversation and generate(8) != conversation  # deterministic per seed


def test_f1():
    assert f1({"a", "b"}, {"a", "b"}) == 1.0
    assert f1({"a"}, {"a", "b"}) == pytest.approx(2 / 3)
    assert f1(set(), {"a"}) == 0.0 and f1(set(), set()) is None


@pytest.fixture(scope="module")
def measured():
    pipeline = compile_profile("default")
    evaluator = Evaluator(pipeline, pipeline.summary_client(), window=128000)
    return evaluator.run({"g1": generate(1), "g2": generate(2)}, [ROOT / "tests/data/sessions/real/long-coding.jsonl"])


def test_measures_per_strategy(measured):
    rows = {r.strategy: r for r in summarize_rows(measured)}
    assert list(rows) == ["summarize", "mask_tool_results", "hybrid"]
    s, m = rows["summarize"], rows["mask_tool_results"]
    # recall falls with each compaction for summaries (tool-result facts are gone after the first)
    assert 0 < s.recall[5] < s.recall[2] <= s.recall[1] <= 1
    # masking keeps every user message: only facts planted in tool results are lost
    assert m.recall[5] > s.recall[5]
    assert s.validity == 1.0 and m.validity is None  # masking writes no summary
    assert s.f1_read == 1.0 and s.f1_modified == 1.0
    assert s.compression > 1 and m.compression > 1 and 0 < s.saving < 1 and 0 < m.saving < 1
    own = [x for x in measured if x.session == "long-coding.jsonl" and x.strategy == "summarize"][0]
    assert own.recall[1] is not None and 2 not in own.recall


def test_eval_is_deterministic_and_prints_json(capsys):
    outputs = []
    for _ in range(2):
        assert main(["eval", "--generated", "1", "--strategy", "summarize", "--format", "json"]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    data = json.loads(outputs[0])
    assert data["strategies"][0]["strategy"] == "summarize" and set(data["strategies"][0]["recall"]) == {"1", "2", "5"}


def test_eval_text_table_on_own_sessions(capsys):
    code = main(["eval", str(ROOT / "tests/data/sessions/real/long-coding.jsonl")])
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["strategy", "recall@1", "recall@2", "recall@5"]
    assert [line.split()[0] for line in lines[1:]] == ["summarize", "mask_tool_results", "hybrid"]


def test_eval_needs_sessions(capsys):
    assert main(["eval"]) == 2
    assert "give SESSIONS or --generated N" in capsys.readouterr().err


SCRIPT = """JSON.stringify({
  rows: [...document.querySelectorAll("#summary tr.strategy")].map(r => r.dataset.strategy),
  lines: [...document.querySelectorAll("#recall-plot polyline.series")].map(l => ({
     s: l.dataset.strategy, n: l.getAttribute("points").trim().split(" ").length,
     w: l.getBoundingClientRect().width})),
  bars: [...document.querySelectorAll("#saving-plot rect.bar")].map(b => b.getBoundingClientRect().width),
})"""


@pytest.mark.skipif(BROWSER is None, reason="no Chromium binary found (apt-get install -y chromium)")
def test_html_report_opens_in_chromium(tmp_path, capsys):
    page = tmp_path / "eval.html"
    assert main(["eval", "--generated", "2", "--format", "html", "-o", str(page)]) == 0
    errors, value = open_page(BROWSER, page, SCRIPT)
    assert errors == []
    shown = json.loads(value)
    assert shown["rows"] == ["summarize", "mask_tool_results", "hybrid"]
    assert [(line["s"], line["n"]) for line in shown["lines"]] == [
        ("summarize", 3), ("mask_tool_results", 3), ("hybrid", 3)]
    assert all(line["w"] > 100 for line in shown["lines"])
    assert len(shown["bars"]) == 3 and all(w > 10 for w in shown["bars"])


def test_write_corpus(tmp_path):
    paths = write_corpus(tmp_path, 3, segments=1, turns=2, result_chars=100)
    assert [p.name for p in paths] == ["gen-0000.jsonl", "gen-0001.jsonl", "gen-0002.jsonl"]


def test_eval_with_an_http_summarizer_on_the_loopback_server(capsys, monkeypatch):
    from pipeline.testing.loopback import LoopbackServer

    good = "\n\n".join(f"## {h}\n- x" for h in ("Goal", "Constraints & Preferences", "Progress", "Key Decisions",
                                                 "Next Steps"))
    monkeypatch.setenv("LOOPBACK_KEY", "k-loopback")
    with LoopbackServer([{"text": "cut", "stopReason": "length"}, good]) as server:
        code = main(["eval", "--generated", "1", "--strategy", "summarize", "--format", "json", "--llm", "openai",
                     "--model", "m", "--base-url", server.openai_base_url, "--api-key-env", "LOOPBACK_KEY"])
        calls = len(server.bodies)
    data = json.loads(capsys.readouterr().out)
    row = data["strategies"][0]
    assert code == 0 and data["summarizer"] == "openai"
    assert calls > 5 and 0 < row["validity"] < 1  # the first answer was cut off and asked for again
    assert row["recall"]["5"] < row["recall"]["1"]
