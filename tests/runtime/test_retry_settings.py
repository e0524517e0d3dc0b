"""`RetrySettings.from_profile` (and `Pipeline.retry_settings`): turn retries read the profile's `retry` block."""

from __future__ import annotations

from pipeline import compile_profile
from pipeline.runtime import RetrySettings, TurnRetry


def test_default_profile_gives_pis_defaults():
    pipeline = compile_profile("default")
    assert pipeline.retry_settings == RetrySettings() == RetrySettings.from_profile(pipeline.profile)


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
    assert RetrySettings.from_profile(compile_profile(tmp_path / "p.yaml").profile).enabled is False
