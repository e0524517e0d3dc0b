"""Shared helpers for the session tests: data paths, the oracle vectors, mask texts."""

from __future__ import annotations

import json
import shutil
from functools import lru_cache
from pathlib import Path

import pytest

from pipeline.session import ContextTexts

DATA = Path(__file__).resolve().parents[1] / "data" / "sessions"
VECTORS = DATA / "vectors"


@lru_cache(maxsize=None)
def vectors(name: str) -> dict:
    """``tests/data/sessions/vectors/<name>.json`` (produced by ``gen_vectors.py`` from pi's oracle)."""
    return json.loads((VECTORS / f"{name}.json").read_text(encoding="utf-8"))


def mask_texts() -> ContextTexts:
    """The mask words the vectors were generated with (pi's sentences replaced)."""
    return ContextTexts(**vectors("context")["texts"])


def session_files() -> list[str]:
    """Every session file the vectors cover, relative to ``tests/data/sessions``."""
    return list(vectors("open"))


@pytest.fixture
def copy_session(tmp_path):
    """Copy a data file into a fresh tmp dir (tests that append must not touch the originals)."""

    def copy(name: str) -> Path:
        target = tmp_path / Path(name).name
        shutil.copyfile(DATA / name, target)
        return target

    return copy
