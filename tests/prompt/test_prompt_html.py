"""The HTML report opens in headless Chromium without console errors and shows every section.

Needs a Chromium binary (CI: ``apt-get update && apt-get install -y chromium``); without one
the test is skipped with that reason. ``CHROMIUM=/path/to/chrome`` picks another binary.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prompt_browser import find_browser, open_page

from pipeline import compile_profile
from pipeline.scenario import load_scenario
from pipeline.report.prompt import build_prompt_report, prompt_html

ROOT = Path(__file__).resolve().parent.parent.parent
BROWSER = find_browser()

SCRIPT = """JSON.stringify({
  title: document.title,
  total: document.getElementById("total-tokens").textContent,
  sections: [...document.querySelectorAll("section.prompt-section")].map(el => {
    const box = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    return {
      id: el.dataset.sectionId,
      tokens: Number(el.dataset.tokens),
      text: el.querySelector("pre.section-text").textContent,
      shown: box.width > 0 && box.height > 0 && style.display !== "none" && style.visibility !== "hidden",
    };
  }),
})"""


@pytest.mark.skipif(BROWSER is None, reason="no Chromium binary found (apt-get install -y chromium)")
@pytest.mark.parametrize("scenario", ["skills-with-read", "custom-prompt"])
def test_html_report_in_chromium(tmp_path: Path, scenario: str) -> None:
    pipeline = compile_profile("default")
    context = load_scenario(ROOT / "tests" / "scenarios" / f"{scenario}.yaml").to_context(pipeline.profile)
    report = build_prompt_report(pipeline, context, label=scenario)
    page = tmp_path / "prompt.html"
    page.write_text(prompt_html(report), encoding="utf-8")

    errors, value = open_page(BROWSER, page, SCRIPT)

    assert errors == []
    shown = json.loads(value)
    assert shown["total"] == str(report.tokens)
    assert [s["id"] for s in shown["sections"]] == [s.id for s in report.sections]
    for got, section in zip(shown["sections"], report.sections):
        assert got["shown"], got["id"]
        assert got["text"] == section.text
        assert got["tokens"] == section.tokens


@pytest.mark.skipif(BROWSER is None, reason="no Chromium binary found (apt-get install -y chromium)")
def test_browser_check_catches_console_errors(tmp_path: Path) -> None:
    page = tmp_path / "broken.html"
    page.write_text("<!doctype html><title>x</title><script>console.error('boom'); undefinedFn();</script>", encoding="utf-8")
    errors, value = open_page(BROWSER, page, "document.title")
    assert value == "x"
    assert any("boom" in e for e in errors) and any(e.startswith("exception") for e in errors)
