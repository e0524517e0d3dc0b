"""Snapshot testing of system prompts, for this project and for teams' own repositories.

Render every profile under every scenario and keep the prompts as readable text
snapshots (one ``.txt`` file per case, with syrupy)::

    # tests/test_prompts.py of a team's repository
    from pipeline.testing import render_scenario, snapshot_cases

    pytest_plugins = ["pipeline.testing.plugin"]   # the `text_snapshot` fixture

    @pytest.mark.parametrize(("profile", "scenario"), snapshot_cases("profiles/*.yaml", "scenarios/*.yaml"))
    def test_prompt(profile, scenario, text_snapshot):
        assert render_scenario(profile, scenario) == text_snapshot

``pytest --snapshot-update`` writes the snapshots; see ``docs/testing.md``. Nothing here
needs Node, the network or an API key.
"""

from __future__ import annotations

import glob
import os
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Union

PathLike = Union[str, os.PathLike]

__all__ = ["TextSnapshotExtension", "expand", "render_scenario", "snapshot_cases"]


def render_scenario(profile: PathLike, scenario_path: PathLike) -> str:
    """The system prompt ``profile`` (a file or built-in name) renders for the scenario file."""
    from pipeline.scenario import load_scenario

    scenario = load_scenario(scenario_path)
    pipeline = _pipeline(os.fspath(profile), scenario, os.fspath(scenario_path))
    return pipeline.render_system_prompt(scenario.context_for(pipeline), catalog=False)


def _pipeline(profile: str, scenario, scenario_path: str):
    from pipeline.scenario import scenario_pipeline

    if scenario.overlay is None:
        return _compiled(profile, _stamp(profile))
    return scenario_pipeline(profile, scenario, scenario_path)


def _stamp(profile: str) -> float:
    try:
        return os.stat(profile).st_mtime
    except OSError:
        return 0.0


@lru_cache(maxsize=64)
def _compiled(profile: str, _mtime: float):
    from pipeline import compile_profile

    return compile_profile(profile)


def expand(patterns: Union[PathLike, Iterable[PathLike]]) -> list[Path]:
    """Files matching one or more glob patterns (``**`` allowed), sorted, duplicates dropped."""
    if isinstance(patterns, (str, os.PathLike)):
        patterns = [patterns]
    found = {Path(p) for pattern in patterns for p in glob.glob(os.fspath(pattern), recursive=True)}
    return sorted(p for p in found if p.is_file())


def snapshot_cases(profiles: Union[PathLike, Iterable[PathLike]], scenarios: Union[PathLike, Iterable[PathLike]]) -> list:
    """``pytest.param(profile, scenario, id="<profile>-<scenario>")`` for every pair (globs expanded).

    A side whose patterns match no file raises ``FileNotFoundError`` (pytest then reports a
    collection error) instead of leaving a silently skipped, empty test.
    """
    import pytest

    profile_files, scenario_files = _matching(profiles, "profile"), _matching(scenarios, "scenario")
    return [
        pytest.param(str(p), str(s), id=f"{_case_name(p)}-{_case_name(s)}")
        for p in profile_files
        for s in scenario_files
    ]


def _matching(patterns: Union[PathLike, Iterable[PathLike]], what: str) -> list[Path]:
    listed = [patterns] if isinstance(patterns, (str, os.PathLike)) else list(patterns)
    found = expand(listed)
    if not found:
        shown = ", ".join(os.fspath(p) for p in listed)
        raise FileNotFoundError(f"no {what} file matches {shown} (relative patterns start at {os.getcwd()})")
    return found


def _case_name(path: Path) -> str:
    parent = path.parent.name
    return f"{parent}.{path.stem}" if parent == "examples" else path.stem


def __getattr__(name: str):
    if name == "TextSnapshotExtension":  # needs syrupy, a test dependency: import on use
        from pipeline.testing.snapshots import TextSnapshotExtension

        return TextSnapshotExtension
    raise AttributeError(name)
