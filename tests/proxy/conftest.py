"""Fixtures of the proxy tests."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from .redisrun import RedisServer


@pytest.fixture()
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A real redis-server on a free port for one test (fails, never skips, without the binary)."""
    with RedisServer(tmp_path / "redis") as server:
        yield server
