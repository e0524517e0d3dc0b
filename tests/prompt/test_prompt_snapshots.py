"""Every built-in profile (``configs/*.yaml``, ``configs/examples/*.yaml``) x every scenario
in ``tests/scenarios/``: the rendered prompt is kept as a readable text snapshot in
``tests/prompt/__snapshots__/test_prompt_snapshots/``. Update with ``pytest --snapshot-update``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.testing import expand, render_scenario, snapshot_cases
from pipeline.testing.plugin import text_snapshot  # noqa: F401  (fixture)

ROOT = Path(__file__).resolve().parent.parent.parent
PROFILES = [ROOT / "configs" / "*.yaml", ROOT / "configs" / "examples" / "*.yaml"]
SCENARIOS = ROOT / "tests" / "scenarios" / "*.yaml"
CASES = snapshot_cases(PROFILES, SCENARIOS)


def test_there_are_enough_cases() -> None:
    assert len(expand(SCENARIOS)) >= 8
    assert len(CASES) == len(expand(PROFILES)) * len(expand(SCENARIOS))


@pytest.mark.parametrize(("profile", "scenario"), CASES)
def test_prompt_snapshot(profile: str, scenario: str, text_snapshot) -> None:  # noqa: F811
    assert render_scenario(profile, scenario) == text_snapshot
