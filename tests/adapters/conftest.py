"""Every adapter test closes the event loops its asynchronous runs made."""

import pytest

from . import adapter_common


@pytest.fixture(autouse=True)
def _close_event_loops():
    yield
    while adapter_common.LOOPS:
        adapter_common.LOOPS.pop().close()
