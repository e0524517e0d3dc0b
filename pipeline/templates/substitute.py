"""Parse template bodies (cached) and expand them: pi's ``substituteArgs``."""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from .grammar import build
from .nodes import Template


@lru_cache(maxsize=2048)
def parse_template(body: str) -> Template:
    """Parse a template body into a :class:`Template` (never fails; results are cached)."""
    return build(body)


def substitute_args(body: str, args: Sequence[str]) -> str:
    """``substituteArgs(body, args)``: ``body`` with its placeholders replaced by ``args``."""
    return parse_template(body).substitute(args)
