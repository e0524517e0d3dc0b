"""The collector pause around bulk builds: state restored, large builds promoted, frozen objects respected."""

from __future__ import annotations

import gc

import pytest

from pipeline.gcpause import PROMOTE_MIN, gc_paused


@pytest.fixture(autouse=True)
def collector_restored():
    """No automatic collection moves objects between generations while a test looks at them."""
    enabled, thresholds = gc.isenabled(), gc.get_threshold()
    gc.set_threshold(10**9, 10**9, 10**9)
    gc.unfreeze()  # objects an earlier test's imports froze (the pause never promotes over them)
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)
    (gc.enable if enabled else gc.disable)()


def _in_oldest_generation(obj) -> bool:
    return any(o is obj for o in gc.get_objects(generation=2))


def test_the_pause_restores_the_collector_and_nests():
    gc.enable()
    with gc_paused(promote=True):
        assert not gc.isenabled()
        with gc_paused(promote=True):
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause does not switch it back on
    assert gc.isenabled()
    gc.disable()
    with gc_paused(promote=True):
        pass
    assert not gc.isenabled()  # a paused caller stays paused


def test_a_large_build_is_moved_to_the_oldest_generation():
    gc.enable()
    gc.collect()
    with gc_paused(promote=True):
        built = [[i] for i in range(PROMOTE_MIN + 1000)]  # a margin: the count nets out frees
    assert gc.get_count()[0] < 100 and _in_oldest_generation(built[-1])


def test_a_small_build_is_left_to_the_young_collections():
    gc.enable()
    gc.collect()
    with gc_paused(promote=True):
        built = [[i] for i in range(1000)]
    assert not _in_oldest_generation(built[-1])


def test_objects_the_process_froze_stay_frozen():
    gc.enable()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gc_paused(promote=True):
            built = [[i] for i in range(PROMOTE_MIN + 1000)]  # a margin: the count nets out frees
        # Neither unfrozen (the count would drop to 0) nor frozen again (it would grow by
        # the objects built); frozen objects freed meanwhile may lower it a little.
        assert 0 < gc.get_freeze_count() <= frozen
        assert not _in_oldest_generation(built[-1])
    finally:
        gc.unfreeze()
