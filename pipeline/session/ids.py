"""Ids and timestamps as pi makes them.

* entry ids: the first 8 hex chars of a random UUID, redrawn while taken; after 100
  collisions a full UUID (pi's ``generateId``);
* session ids: UUIDv7 (48-bit millisecond time, version 7, variant 10, random bits);
* entry timestamps: ISO-8601 UTC with milliseconds and ``Z`` (``Date.toISOString``).
"""

from __future__ import annotations

import os
import time
import uuid
from datetime import datetime, timezone
from typing import Callable, Container


def new_entry_id(taken: Container[str], random_uuid: Callable[[], uuid.UUID] = uuid.uuid4) -> str:
    """A fresh entry id not in ``taken``."""
    for _ in range(100):
        candidate = str(random_uuid())[:8]
        if candidate not in taken:
            return candidate
    return str(random_uuid())


def uuid7(ms: int | None = None, rand: bytes | None = None) -> str:
    """A UUIDv7 string for epoch milliseconds ``ms`` (now by default)."""
    ms = int(time.time() * 1000) if ms is None else ms
    rand = os.urandom(10) if rand is None else rand
    value = (ms & ((1 << 48) - 1)) << 80
    value |= 0x7 << 76
    value |= (int.from_bytes(rand[:2], "big") & 0x0FFF) << 64
    value |= 0b10 << 62
    value |= int.from_bytes(rand[2:10], "big") & ((1 << 62) - 1)
    return str(uuid.UUID(int=value))


def iso_timestamp(moment: datetime | None = None) -> str:
    """``new Date().toISOString()``: ``2026-08-11T08:14:03.037Z``."""
    moment = moment or datetime.now(timezone.utc)
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
