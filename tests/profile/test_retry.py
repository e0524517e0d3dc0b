"""The `retry` block: pi's turn-retry settings (docs/pi-rules.md#token-accounting: enabled, 3 retries, 2000 ms base delay)."""

from __future__ import annotations

from conftest import HEAD, write_files
from pipeline import compile_profile
from pipeline.model.profile import Profile
from pipeline.model.runtime import Retry


def test_defaults_are_pis():
    # docs/pi-rules.md#token-accounting: retry.{enabled=true, maxRetries=3, baseDelayMs=2000}
    assert Retry() == Retry(enabled=True, max_retries=3, base_delay_ms=2000)
    assert Profile.model_fields["retry"].default == Retry()
    assert compile_profile("default").profile.retry == Retry()
    assert compile_profile("minimal").profile.retry == Retry()  # minimal leaves the block out


def test_an_overlay_changes_one_key(tmp_path):
    write_files(tmp_path, {"p.yaml": HEAD + "retry:\n  max_retries: 0\n"})
    retry = compile_profile(tmp_path / "p.yaml").profile.retry
    assert (retry.enabled, retry.max_retries, retry.base_delay_ms) == (True, 0, 2000)


def test_mistakes_are_located(cli, tmp_path):
    write_files(tmp_path, {"p.yaml": HEAD + "retry:\n  max_retry: 3\n  base_delay_ms: -5\n  enabled: \"yes\"\n"})
    run = cli("validate", "p.yaml")
    assert run.code == 1
    assert run.lines == [
        "p.yaml:4:3: retry.max_retry: unknown key (did you mean `max_retries`?)",
        "p.yaml:5:18: retry.base_delay_ms: must be at least 0, got -5",
        "p.yaml:6:12: retry.enabled: expected true or false, got the text \"yes\"",
    ]


def test_explain_names_the_file_that_set_it(cli, tmp_path):
    write_files(tmp_path, {"p.yaml": HEAD + "retry:\n  base_delay_ms: 500\n"})
    lines = cli("explain", "p.yaml", "retry").lines
    assert "p.yaml:4:18: retry.base_delay_ms = 500" in lines
    assert lines[-1] == "builtin:default:152:23: retry.max_agent_delay_ms = null"
    assert lines[0].startswith("builtin:default:") and lines[0].endswith(": retry.enabled = true")
