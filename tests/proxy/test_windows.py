"""The window a request's trigger is read against: the profile's, else the table of well-known
models (pipeline/proxy/windows.yaml, documented in docs/proxy.md), else `--context-window`, else the
profile's window for unknown models; and the trigger really reads it (a percent trigger fires
for a small window's model and not for a large one's)."""

from __future__ import annotations

from pathlib import Path

from pipeline import compile_profile
from pipeline.proxy.windows import TABLE, Windows, known_windows, table_window

from .policyrun import policies
from .upstream import RecordingUpstream

PROFILE = """extends: builtin:default
name: windows
compaction:
  strategy: mask_tool_results
  trigger: {percent_of_window: 50}
  keep_recent_tokens: 10
  model_overrides:
    anthropic/claude-sonnet-4-5:
      context_window: 4000
"""


def _windows(tmp_path: Path, text: str, flag: int | None = None) -> Windows:
    (tmp_path / "w.yaml").write_text(text)
    return Windows.of(compile_profile(str(tmp_path / "w.yaml")).profile, flag)


def test_each_source_of_the_window(tmp_path: Path) -> None:
    windows = _windows(tmp_path, PROFILE, flag=9000)
    assert windows.source("anthropic", "claude-sonnet-4-5") == (4000, "profile")  # its model override
    assert windows.source("anthropic", "claude-sonnet-4-5-20250929") == (200000, "table")  # a dated name finds its family
    assert windows.source("openai", "gpt-4.1-mini") == (1047576, "table")  # the longest prefix: not gpt-4's
    assert windows.source("gemini", "models/gemini-2.5-pro") == (1048576, "table")
    assert windows.source("openai", "my-local-model") == (9000, "flag")
    assert _windows(tmp_path, PROFILE).source("openai", "my-local-model") == (128000, "default")
    everywhere = _windows(tmp_path, PROFILE + "summarizer:\n  context_window: 50000\n", flag=9000)
    assert everywhere.source("anthropic", "claude-opus-4-1") == (50000, "profile")  # the profile's before the table


def test_the_table_and_its_documentation_agree() -> None:
    table = known_windows()
    assert set(table) == {"anthropic", "openai", "gemini"} and all(table.values())
    doc = (Path(__file__).resolve().parents[2] / "docs" / "proxy.md").read_text()
    for rows in table.values():
        for prefix, window in rows:
            assert f"| `{prefix}` | {window} |" in doc, prefix  # each row, as the file has it


#: where each provider publishes its models' windows
DOCS = {"anthropic": "https://platform.claude.com/docs/en/", "openai": "https://platform.openai.com/docs/models/",
        "gemini": "https://ai.google.dev/gemini-api/docs/models"}


def test_every_window_names_the_providers_page_it_was_read_on() -> None:
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load(TABLE.read_text(encoding="utf-8"))
    doc = (Path(__file__).resolve().parents[2] / "docs" / "proxy.md").read_text()
    for provider, rows in data.items():
        for row in rows:
            assert set(row) == {"prefix", "window", "source"}, row
            assert str(row["source"]).startswith(DOCS[provider]), row
            assert f"| `{row['prefix']}` | {row['window']} | <{row['source']}> |" in doc, row


def test_a_newer_claude_with_a_1m_window_is_not_read_as_its_familys_200k() -> None:
    assert table_window("anthropic", "claude-opus-4-6") == 1_000_000
    assert table_window("anthropic", "claude-sonnet-4-6-20260217") == 1_000_000
    assert table_window("anthropic", "claude-opus-4-5-20251101") == 200_000
    assert table_window("anthropic", "claude-sonnet-4-5-20250929") == 200_000
    assert table_window("gemini", "models/gemini-3-flash-preview") == 1_048_576


def _body(model: str) -> dict:
    messages: list[dict] = [{"role": "user", "content": "read them"}]
    for i in range(4):
        messages.append({"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}", "name": "read",
                                                           "input": {"path": f"f{i}"}}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                                      "content": "x" * 2000}]})
    return {"model": model, "max_tokens": 64, "messages": messages}


def test_the_trigger_reads_the_window_of_the_requests_model(tmp_path: Path) -> None:
    with RecordingUpstream() as upstream:
        run = policies(tmp_path, PROFILE, upstream)
        assert run.send(_body("claude-sonnet-4-5")) is not None  # ~2000 tokens: past 50% of 4000, masked
        assert run.send(_body("claude-opus-4-1")) is None  # 200000 from the table: far below, bytes as sent
