"""The context window a request's trigger is read against, per request model.

The first of these that knows the window of the request's provider and model:

1. **the profile**: ``compaction.model_overrides.PROVIDER/MODEL.context_window`` for the
   request's model, else ``summarizer.context_window``;
2. **the table of well-known models** (``windows.yaml`` beside this module, each entry with
   the provider's page it was read on, its ``source``): the longest ``prefix`` of the
   provider's list that starts the model's name;
3. **``--context-window``**;
4. else ``compaction.branch.default_context_window`` (the profile's window for an unknown
   model).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal, Optional

from pipeline.model.compaction import Compaction
from pipeline.model.ref import ModelRef

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from pipeline.model.profile import Profile

TABLE = Path(__file__).resolve().parent / "windows.yaml"
Source = Literal["profile", "table", "flag", "default"]


@lru_cache(maxsize=1)
def known_windows() -> dict[str, tuple[tuple[str, int], ...]]:
    """The table: per provider, ``(prefix, window)`` pairs, the longest prefix first."""
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load(TABLE.read_text(encoding="utf-8"))
    return {provider: tuple(sorted(((str(r["prefix"]), int(r["window"])) for r in rows), key=lambda r: -len(r[0])))
            for provider, rows in data.items()}


def table_window(provider: str, model: str) -> Optional[int]:
    """The table's window for ``provider``/``model`` (a date or suffix after the prefix is fine)."""
    name = model.rsplit("/", 1)[-1].lower()  # "models/gemini-2.5-pro", "anthropic/claude-…"
    return next((w for prefix, w in known_windows().get(provider, ()) if name.startswith(prefix)), None)


@dataclass(frozen=True)
class Windows:
    """The windows of the requests' models (see the module docstring for the order)."""

    compaction: Compaction
    summarizer_window: Optional[int] = None
    flag: Optional[int] = None

    @classmethod
    def of(cls, profile: "Profile", flag: Optional[int] = None) -> "Windows":
        return cls(profile.compaction, profile.summarizer.context_window, flag)

    def source(self, provider: str, model: str) -> tuple[int, Source]:
        """The window of ``provider``/``model`` and where it came from."""
        key = ModelRef(provider, model).key if model else None
        override = self.compaction.model_overrides.get(key) if key is not None else None
        if override is not None and override.context_window:
            return override.context_window, "profile"
        if self.summarizer_window:
            return self.summarizer_window, "profile"
        known = table_window(provider, model) if model else None
        if known is not None:
            return known, "table"
        if self.flag:
            return self.flag, "flag"
        return self.compaction.branch.default_context_window, "default"

    def tokens(self, provider: str, model: str) -> int:
        return self.source(provider, model)[0]

    @property
    def default(self) -> int:
        """The window of a model nobody knows (what the status page shows)."""
        return self.summarizer_window or self.flag or self.compaction.branch.default_context_window
