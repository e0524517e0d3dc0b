"""A run plan's `retry` (and `Pipeline.retry_settings`): turn retries read the profile's `retry` block."""

from __future__ import annotations

from pipeline import compile_profile
from pipeline.model.run_plan import RetrySettings, RunPlan
from pipeline.runtime.policy import TurnRetry


def test_default_profile_gives_pis_defaults():
    pipeline = compile_profile("default")
    assert pipeline.retry_settings == RetrySettings() == RunPlan.of(pipeline.profile).retry


def test_an_overlay_drives_the_turn_retry(tmp_path):
    (tmp_path / "p.yaml").write_text(
        "extends: builtin:default\nname: t\nretry: {max_retries: 1, base_delay_ms: 10}\n", encoding="utf-8"
    )
    settings = compile_profile(tmp_path / "p.yaml").retry_settings
    assert settings == RetrySettings(enabled=True, max_retries=1, base_delay_ms=10)
    overloaded = {"role": "assistant", "content": [], "stopReason": "error", "errorMessage": "503 overloaded",
                  "provider": "p", "model": "m", "timestamp": 1}
    first = TurnRetry().after_run(overloaded, settings, 200000)
    assert (first.action, first.delay_ms) == ("retry", 10)
    assert first.state.after_run(overloaded, settings, 200000).action == "give_up"


def test_disabled_in_the_profile(tmp_path):
    (tmp_path / "p.yaml").write_text("extends: builtin:default\nname: t\nretry: {enabled: false}\n", encoding="utf-8")
    assert RunPlan.of(compile_profile(tmp_path / "p.yaml").profile).retry.enabled is False


def test_pi1_caps_the_wait_and_the_default_does_not():
    """pi 1.x's `retryDelayMs` caps the doubling at `maxAgentDelayMs` (60000); 0.84.0 has no cap."""
    pi1 = compile_profile("builtin:pi-1").retry_settings
    default = compile_profile("default").retry_settings
    assert pi1.max_agent_delay_ms == 60000 and default.max_agent_delay_ms is None
    assert [pi1.delay_ms(n) for n in (1, 5, 6, 7, 40)] == [2000, 32000, 60000, 60000, 60000]
    assert [default.delay_ms(n) for n in (5, 6, 7)] == [32000, 64000, 128000]


def test_the_cap_applies_to_summary_call_retries(tmp_path):
    (tmp_path / "p.yaml").write_text(
        "extends: builtin:default\nname: t\nretry: {base_delay_ms: 1000, max_agent_delay_ms: 1500}\n", encoding="utf-8"
    )
    from pipeline.runtime.policy import summary_retry_delay

    settings = compile_profile(tmp_path / "p.yaml").retry_settings
    overloaded = {"role": "assistant", "content": [], "stopReason": "error", "errorMessage": "503 overloaded",
                  "provider": "p", "model": "m", "timestamp": 1}
    assert [summary_retry_delay(overloaded, n, settings) for n in (0, 1, 2)] == [1000, 1500, 1500]
