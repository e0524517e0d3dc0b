"""``builtin:pi-1``'s settings against pi 1.6.0's own defaults (``tests/data/pi16/settings.json``).

Every leaf of pi's compaction, branch-summary and retry defaults (``SETTINGS_DEFAULTS``, the
``SettingsManager`` getters on empty settings, ``DEFAULT_COMPACTION_SETTINGS``) is mapped to
the compiled profile's key (or, for the provider-level retry cap, the LLM layer's default)
and compared, the key named on a mismatch; a pi key that has no counterpart is listed with
the reason. Every other top-level pi setting is named as outside the context policy, so a
new 1.6 default in the vector file fails here until it is mapped or listed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from pipeline import compile_profile
from pipeline.llm.retry import RetryPolicy

DATA = Path(__file__).resolve().parent.parent / "data" / "pi16"
SETTINGS = json.loads((DATA / "settings.json").read_text(encoding="utf-8"))
PROFILE = compile_profile("builtin:pi-1").profile


def _profile(path: str) -> Callable[[], Any]:
    def read() -> Any:
        value: Any = PROFILE
        for part in path.split("."):
            value = getattr(value, part)
        return value
    read.__doc__ = f"builtin:pi-1 {path}"
    return read


def _retry_cap_ms() -> float:
    return RetryPolicy().max_delay * 1000


_retry_cap_ms.__doc__ = "pipeline.llm.retry.RetryPolicy().max_delay (ms)"

# pi key (dotted, as in settings.json) -> where our value is read.
MAPPED: dict[str, Callable[[], Any]] = {
    "compaction.enabled": _profile("compaction.enabled"),
    "compaction.reserveTokens": _profile("compaction.reserve_tokens"),
    "compaction.keepRecentTokens": _profile("compaction.keep_recent_tokens"),
    "branchSummary.reserveTokens": _profile("compaction.branch.reserve_tokens"),
    "retry.enabled": _profile("retry.enabled"),
    "retry.maxRetries": _profile("retry.max_retries"),
    "retry.baseDelayMs": _profile("retry.base_delay_ms"),
    "retry.maxAgentDelayMs": _profile("retry.max_agent_delay_ms"),
    "retry.provider.maxRetryDelayMs": _retry_cap_ms,
    "providerRetry.maxRetryDelayMs": _retry_cap_ms,  # settingsDefaults' name for the same getter
}
# pi keys of these groups with no counterpart, and why.
NOT_MODELLED = {
    "branchSummary.skipPrompt": "the interactive question whether to summarize a left branch (pi's TUI)",
    "branchSummarySkipPrompt": "settingsDefaults' copy of branchSummary.skipPrompt",
}
POLICY_GROUPS = ("compaction", "branchSummary", "retry")
# Top-level settings outside the context policy: transport, interface, telemetry, trust, tools.
OUTSIDE = {
    "transport", "sessionShareDestination", "steeringMode", "followUpMode", "hideThinkingBlock",
    "showCacheMissNotices", "quietStartup", "defaultProjectTrust", "collapseChangelog", "enableInstallTelemetry",
    "enableAnalytics", "enableSkillCommands", "terminal", "images", "doubleEscapeAction", "treeFilterMode",
    "editorPaddingX", "outputPad", "autocompleteMaxVisible", "markdown", "warnings", "codemode", "cacheWarming",
    "tuiMode", "fullscreenExitOutput", "fullscreenScrollbar", "fullscreenCopyOnSelect", "fullscreenWheelScrollLines",
}


def leaves(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, inner in value.items():
            out.update(leaves(inner, f"{prefix}{key}."))
        return out
    return {prefix[:-1]: value}


def pi_policy_defaults() -> list[tuple[str, str, Any]]:
    """(source, key, value) for every policy leaf pi 1.6.0 reports."""
    out = []
    for key, value in leaves({g: SETTINGS["settings_defaults"][g] for g in POLICY_GROUPS}).items():
        out.append(("SETTINGS_DEFAULTS", key, value))
    for key, value in leaves(SETTINGS["settings_manager"]).items():
        out.append(("settingsDefaults", key, value))
    for key, value in leaves({"compaction": SETTINGS["default_compaction_settings"]}).items():
        out.append(("DEFAULT_COMPACTION_SETTINGS", key, value))
    return out


POLICY = pi_policy_defaults()


def test_vector_file_is_pi_1_6_0_and_complete() -> None:
    assert SETTINGS["pi_version"] == "1.6.0"
    assert len(POLICY) == 10 + 11 + 3  # SETTINGS_DEFAULTS' groups, the getters, the compaction module
    assert {key for _, key, _ in POLICY} == set(MAPPED) | set(NOT_MODELLED)


def test_every_top_level_pi_setting_is_mapped_or_named_outside() -> None:
    top = set(SETTINGS["settings_defaults"])
    assert top == set(POLICY_GROUPS) | OUTSIDE, sorted(top ^ (set(POLICY_GROUPS) | OUTSIDE))
    assert set(SETTINGS["settings_manager"]) - set(POLICY_GROUPS) == {"branchSummarySkipPrompt", "providerRetry"}


@pytest.mark.parametrize("source,key,value", POLICY, ids=[f"{s}:{k}" for s, k, _ in POLICY])
def test_pi1_default_equals_pi16(source: str, key: str, value: Any) -> None:
    if key in NOT_MODELLED:
        assert key not in MAPPED
        return
    ours = MAPPED[key]()
    assert ours == value, f"{key} ({source}): pi 1.6.0 has {value!r}, {MAPPED[key].__doc__} is {ours!r}"


def test_pi16_ships_no_model_overrides_and_neither_does_pi1() -> None:
    assert "modelOverrides" not in SETTINGS["settings_defaults"]["compaction"]
    assert PROFILE.compaction.model_overrides == {}
    for case in SETTINGS["resolved"]:
        model = case["model"] or {}
        ours = PROFILE.compaction.for_model(model.get("provider"), model.get("id"))
        got = {"enabled": ours.enabled, "reserveTokens": ours.reserve_tokens, "keepRecentTokens": ours.keep_recent_tokens}
        assert got == case["pi16"], f"compaction settings for {model or 'no model'}"


def test_token_estimate_constants_equal_pi16() -> None:
    text, image = SETTINGS["estimates"]
    compaction = PROFILE.compaction
    assert text["tokens"] == [-(-text["chars"] // compaction.chars_per_token)], "compaction.chars_per_token"
    assert image["tokens"] == [compaction.image_chars // compaction.chars_per_token], "compaction.image_chars"
