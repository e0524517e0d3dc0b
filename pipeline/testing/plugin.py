"""pytest plugin: ``pytest_plugins = ["pipeline.testing.plugin"]`` gives the ``text_snapshot`` fixture."""

from __future__ import annotations

import pytest


@pytest.fixture
def text_snapshot(snapshot):
    """syrupy's ``snapshot`` storing one readable ``.txt`` file per assertion."""
    from pipeline.testing.snapshots import TextSnapshotExtension

    return snapshot.use_extension(TextSnapshotExtension)
